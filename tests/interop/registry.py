"""Holds MCP Registry entries to the registry's server.json schema (packaging/registry), with the
jsonschema package the interop venv pins, formats checked. Prints one JSON object: each file and
the problems found in it (none when it is valid)."""

import json
import sys

from jsonschema import Draft7Validator, FormatChecker


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
        ]
    print(json.dumps(found))


if __name__ == "__main__":
    main()
