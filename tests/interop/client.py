"""Drives lemonfiber-mcp with the official Python MCP SDK, for the interop tests.

It connects over stdio (starting the server) or over Streamable HTTP (with a bearer key, trusting
the server's own certificate), in the SDK's auto mode or its legacy mode, then lists, reads and,
with --act, rehearses and acts. It prints one JSON object of what it saw.
"""

import argparse
import json
import ssl
import sys

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def exercise(client: Client, act: bool) -> dict:
    seen: dict = {"protocol": client.protocol_version, "server": client.server_info.name}
    tools = await client.list_tools()
    seen["tools"] = sorted(tool.name for tool in tools.tools)
    first = tools.tools[0]
    seen["first_tool_annotations"] = first.annotations.model_dump(by_alias=True, exclude_none=True) if first.annotations else None
    read = "read_status" if "read_status" in seen["tools"] else "read_requests"
    answer = await client.call_tool(read, {})
    seen["read"] = {"is_error": answer.is_error, "kind": (answer.structured_content or {}).get("kind"), "text": text_of(answer)}
    resources = await client.list_resources()
    seen["resources"] = sorted(str(resource.uri) for resource in resources.resources)
    if act:
        rehearsed = await client.call_tool("rehearse_downloads_pause", {})
        offer = (rehearsed.structured_content or {}).get("data", {}).get("offer")
        refused = await client.call_tool("downloads_pause", {})
        paused = await client.call_tool("downloads_pause", {"offer": offer})
        seen["act"] = {
            "offer": offer,
            "without_offer": {"is_error": refused.is_error, "text": text_of(refused)},
            "with_offer": {"is_error": paused.is_error, "data": paused.structured_content},
        }
    return seen


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["auto", "legacy"], required=True)
    parser.add_argument("--act", action="store_true")
    parser.add_argument("--command", help="stdio: the server to start")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="stdio: its environment")
    parser.add_argument("--url", help="http: the MCP endpoint")
    parser.add_argument("--key-file", help="http: the file holding the bearer key")
    parser.add_argument("--trust", help="http: the server's certificate (PEM) to trust")
    arguments = parser.parse_args()

    if arguments.command:
        env = dict(pair.split("=", 1) for pair in arguments.env)
        params = StdioServerParameters(command=arguments.command, args=["stdio"], env=env)
        async with Client(params, mode=arguments.mode, cache=None, read_timeout_seconds=60) as client:
            seen = await exercise(client, arguments.act)
    else:
        with open(arguments.key_file) as file:
            key = file.read().strip()
        tls = ssl.create_default_context(cafile=arguments.trust)
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, verify=tls, timeout=httpx2.Timeout(30.0, read=120.0)
        ) as http:
            transport = streamable_http_client(arguments.url, http_client=http)
            async with Client(transport, mode=arguments.mode, cache=None, read_timeout_seconds=60) as client:
                seen = await exercise(client, arguments.act)
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    anyio.run(main)
