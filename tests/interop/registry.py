"""Holds MCP Registry entries to the registry's server.json schema (packaging/registry), with the
jsonschema package the interop venv pins, formats checked, and to the rules the registry adds when
an entry is published, which the schema does not state. Prints one JSON object: each file and the
problems found in it (none when it is valid)."""

import json
import re
import sys

from jsonschema import Draft7Validator, FormatChecker


SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
VARIABLE = re.compile(r"\{([^{}]*)\}")


def publish_problems(document: dict) -> list[str]:
    """What the registry refuses on publishing that the schema lets through."""
    problems = []
    if document.get("$schema") != SCHEMA:
        problems.append(f"$schema: not the schema the registry takes now ({SCHEMA})")
    for at, package in enumerate(document.get("packages", [])):
        where = f"packages/{at}"
        kind = package.get("registryType")
        if kind == "oci":
            for field in ("version", "fileSha256", "registryBaseUrl"):
                if field in package:
                    problems.append(f"{where}: an image is named by its tag alone, without {field}")
            if not re.search(r":[\w][\w.-]*$|@sha256:[0-9a-f]{64}$", package.get("identifier", "")):
                problems.append(f"{where}/identifier: an image needs a tag or a digest")
        if kind == "mcpb":
            if "fileSha256" not in package:
                problems.append(f"{where}: a bundle needs its fileSha256")
            if not package.get("identifier", "").startswith("https://"):
                problems.append(f"{where}/identifier: a bundle is downloaded over https")
        named = {
            given["name"]
            for given in package.get("environmentVariables", []) + package.get("packageArguments", [])
            if "name" in given
        }
        for variable in VARIABLE.findall(package.get("transport", {}).get("url", "")):
            if variable not in named:
                problems.append(f"{where}/transport/url: {{{variable}}} is no setting of the package")
    for at, remote in enumerate(document.get("remotes", [])):
        url = remote.get("url", "")
        if not url.startswith("https://"):
            problems.append(f"remotes/{at}/url: a remote is reached over https")
        for variable in VARIABLE.findall(url):
            if variable not in remote.get("variables", {}):
                problems.append(f"remotes/{at}/url: {{{variable}}} is not among its variables")
    return problems


def main() -> None:
    schema_file, *entries = sys.argv[1:]
    with open(schema_file) as file:
        validator = Draft7Validator(json.load(file), format_checker=FormatChecker())
    found = {}
    for entry in entries:
        with open(entry) as file:
            document = json.load(file)
        found[entry] = [
            f"{'/'.join(str(part) for part in error.absolute_path)}: {error.message}"
            for error in validator.iter_errors(document)
        ] + publish_problems(document)
    print(json.dumps(found))


if __name__ == "__main__":
    main()
