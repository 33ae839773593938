"""The shape every operation-backed CLI command shares: parse flags into the operation's
input, run it as the CLI (source_host "cli", this directory's project), print JSON with
--json or the command's own text otherwise, and turn memesh errors into CommandError."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from django.core.management.base import BaseCommand, CommandError, CommandParser

from graph.errors import MemeshError
from graph.operation import CallContext, Operation
from graph.project import project_id

PROJECT_HELP = "Project id (default: this directory's project)."


def cli_context() -> CallContext:
    return CallContext(source_host="cli", project=project_id())


def given(options: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The options among `keys` that were given (not None)."""
    return {key: options[key] for key in keys if options.get(key) is not None}


class OperationCommand(BaseCommand):
    operation: ClassVar[Operation]
    json_help: ClassVar[str] = "Print the result as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        self.add_operation_arguments(parser)
        parser.add_argument("--json", action="store_true", help=self.json_help)
        parser.add_argument(
            "--input",
            metavar="JSON",
            help="The operation's whole input as a JSON object (as REST and MCP take it); "
            "replaces the other flags.",
        )

    def add_operation_arguments(self, parser: CommandParser) -> None:
        """The command's own flags."""

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        """The operation's input, from the parsed flags."""
        return {}

    def render(self, result: dict[str, Any]) -> None:
        """Print the result for a person (without --json)."""
        self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            payload = json.loads(options["input"]) if options["input"] else self.payload(options)
        except json.JSONDecodeError as exc:
            raise CommandError(f"--input is not JSON: {exc}") from None
        try:
            result = self.operation.run(payload, cli_context())
        except MemeshError as exc:
            if options["json"]:
                # The same {errorCode, error} the other transports answer, and exit 1.
                error = {"success": False, "errorCode": exc.error_code, "error": exc.message}
                self.stdout.write(json.dumps(error, ensure_ascii=False))
                raise SystemExit(1) from None
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.render(result)


class PinCommand(OperationCommand):
    """`memesh pin` and `memesh unpin`: the same flags and output, another operation."""

    json_help = "Print { name, pinned, found } as JSON."

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", help="Entity name (required).")

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "name")

    def render(self, result: dict[str, Any]) -> None:
        if not result["found"]:
            # Not an error (the reference): the command says so and exits 0.
            verb = self.operation.name
            self.stdout.write(f'Entity "{result["name"]}" not found; nothing to {verb}.')
        else:
            self.stdout.write(f"{'Pinned' if result['pinned'] else 'Unpinned'}: {result['name']}")
