"""`memesh observe`: record a fresh observation of a memory, the one path from hypothesis to
fact (graph/ops/observe.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from graph.ops.observe import OBSERVE


class Command(OperationCommand):
    help = OBSERVE.summary
    operation = OBSERVE

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument("--name", help=op.field_help("name"))
        parser.add_argument("--id", type=int, help=op.field_help("id"))
        parser.add_argument("--source", help=op.field_help("source"))
        parser.add_argument("--confidence", type=float, help=op.field_help("confidence"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "name", "id", "source", "confidence")

    def render(self, result: dict[str, Any]) -> None:
        trust = result["trust"]
        verb = "Promoted to fact" if result["promoted"] else "Observed"
        self.stdout.write(
            f"{verb}: {result['name']} (confidence {result['previous_confidence']} -> "
            f"{trust['confidence']}, source {trust['source']})"
        )
