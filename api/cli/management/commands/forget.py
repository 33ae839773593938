"""`memesh forget`: archive a memory, or remove one observation from it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, flag_help, given
from graph.ops.forget import FORGET


class Command(OperationCommand):
    help = FORGET.summary
    operation = FORGET

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument("--name", help=flag_help(op, "name"))
        parser.add_argument("--observation", help=op.field_help("observation"))
        parser.add_argument("--reason", help=op.field_help("reason"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "name", "observation", "reason")

    def render(self, result: dict[str, Any]) -> None:
        if result.get("message"):
            self.stdout.write(result["message"])
        elif result.get("archived"):
            self.stdout.write(f"Archived: {result['name']}")
        else:
            self.stdout.write(f"Removed {result.get('removedCount', 0)} from {result['name']}")
