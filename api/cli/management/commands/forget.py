"""`memesh forget`: archive a memory, or remove one observation from it."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from graph.ops.forget import FORGET


class Command(OperationCommand):
    help = FORGET.summary
    operation = FORGET

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", help="Entity name (required).")
        parser.add_argument("--observation", help="Remove only this observation (exact text).")
        parser.add_argument("--reason", help=self.operation.field_help("reason"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "name", "observation", "reason")

    def render(self, result: dict[str, Any]) -> None:
        if result.get("message"):
            self.stdout.write(result["message"])
        elif result.get("archived"):
            self.stdout.write(f"Archived: {result['name']}")
        else:
            self.stdout.write(f"Removed {result.get('removedCount', 0)} from {result['name']}")
