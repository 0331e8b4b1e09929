"""How the interop scripts reach lemonfiber-mcp with the official Python MCP SDK: over stdio,
starting the server with the environment given, or over Streamable HTTP with a bearer key,
trusting the server's own certificate."""

import argparse
import ssl
from contextlib import asynccontextmanager

import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--command", help="stdio: the server to start")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="stdio: its environment")
    parser.add_argument("--url", help="http: the MCP endpoint")
    parser.add_argument("--key-file", help="http: the file holding the bearer key")
    parser.add_argument("--trust", help="http: the server's certificate (PEM) to trust")


@asynccontextmanager
async def connected(arguments, **options):
    """A client connected as the arguments say, in their mode; `options` go to the SDK's Client."""
    if arguments.command:
        env = dict(pair.split("=", 1) for pair in arguments.env)
        params = StdioServerParameters(command=arguments.command, args=["stdio"], env=env)
        async with Client(params, mode=arguments.mode, cache=None, read_timeout_seconds=60, **options) as client:
            yield client
    else:
        with open(arguments.key_file) as file:
            key = file.read().strip()
        tls = ssl.create_default_context(cafile=arguments.trust)
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, verify=tls, timeout=httpx2.Timeout(30.0, read=120.0)
        ) as http:
            transport = streamable_http_client(arguments.url, http_client=http)
            async with Client(transport, mode=arguments.mode, cache=None, read_timeout_seconds=60, **options) as client:
                yield client


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
