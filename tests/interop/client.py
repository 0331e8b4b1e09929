"""Drives lemonfiber-mcp with the official Python MCP SDK, for the interop tests.

It connects over stdio (starting the server) or over Streamable HTTP (with a bearer key, trusting
the server's own certificate), in the SDK's auto mode or its legacy mode, then lists, reads and,
with --act, rehearses and acts; with --bundle, it also reads lines, a file and an image. It prints
one JSON object of what it saw.
"""

import argparse
import json
import sys

import anyio
from mcp import Client

from connection import add_arguments, connected, text_of


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


async def streamed(client: Client, bundle: str) -> dict:
    """The reads that answer lines, a file or an image: the SDK holds each result's structured
    content to the tool's outputSchema, and raises where it does not validate (issue 29)."""
    held = await client.call_tool("read_held", {})
    title = (held.structured_content or {}).get("data", {}).get("holdings", [{}])[0].get("id")
    seen = {}
    for name, arguments in [
        ("read_logs", {"tail": 2}),
        ("read_bundle_by_name", {"name": bundle}),
        ("read_held_by_id_poster", {"id": title}),
    ]:
        answer = await client.call_tool(name, arguments)
        seen[name] = {"is_error": answer.is_error, "fields": sorted(answer.structured_content or {})}
    return seen


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    add_arguments(parser)
    parser.add_argument("--act", action="store_true")
    parser.add_argument("--bundle", help="also read the logs, this support bundle and a poster")
    arguments = parser.parse_args()
    async with connected(arguments) as client:
        seen = await exercise(client, arguments.act)
        if arguments.bundle:
            seen["streamed"] = await streamed(client, arguments.bundle)
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    anyio.run(main)
