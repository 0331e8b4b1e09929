"""Starts lemonfiber-mcp from an unpacked MCP Bundle exactly as its manifest says, the way Claude
Desktop does: `${__dirname}` is the bundle's folder and each `${user_config.NAME}` the value the
person gave (or the setting's default). The values come as JSON in LEMONFIBER_BUNDLE_SETTINGS, so
the key stays out of the command line. With the official Python MCP SDK it lists the tools and
calls one read, and prints one JSON object of what it saw."""

import argparse
import json
import os
import re

import anyio
from mcp import Client, StdioServerParameters

from connection import text_of


def resolved(text: str, folder: str, settings: dict, declared: dict) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        if name == "__dirname":
            return folder
        setting = name.removeprefix("user_config.")
        if setting in settings:
            return settings[setting]
        return str(declared.get(setting, {}).get("default", ""))

    return re.sub(r"\$\{([^}]+)\}", value, text)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bundle", required=True, help="the unpacked bundle's folder")
    parser.add_argument("--read", default="read_status", help="the read tool to call")
    arguments = parser.parse_args()
    with open(os.path.join(arguments.bundle, "manifest.json")) as file:
        manifest = json.load(file)
    settings = json.loads(os.environ["LEMONFIBER_BUNDLE_SETTINGS"])
    declared = manifest.get("user_config", {})
    config = manifest["server"]["mcp_config"]
    fill = lambda text: resolved(text, arguments.bundle, settings, declared)
    params = StdioServerParameters(
        command=fill(config["command"]),
        args=[fill(arg) for arg in config.get("args", [])],
        env={name: fill(value) for name, value in config.get("env", {}).items()},
    )
    async with Client(params, cache=None, read_timeout_seconds=60) as client:
        tools = await client.list_tools()
        answer = await client.call_tool(arguments.read, {})
        print(json.dumps({
            "server": client.server_info.name,
            "tools": sorted(tool.name for tool in tools.tools),
            "read": {"is_error": answer.is_error, "kind": (answer.structured_content or {}).get("kind"), "text": text_of(answer)},
        }))


if __name__ == "__main__":
    anyio.run(main)
