"""`memesh supersede`: correct a memory with a new one that replaces it; the old one is kept,
archived and linked (graph/ops/supersede.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import ProvenanceCommand, flag_help, given
from graph.ops.supersede import SUPERSEDE


class Command(ProvenanceCommand):
    help = SUPERSEDE.summary
    operation = SUPERSEDE

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument("--name", help=op.field_help("name"))
        parser.add_argument("--id", type=int, help=op.field_help("id"))
        parser.add_argument("--new-name", dest="new_name", help=op.field_help("new_name"))
        parser.add_argument(
            "--obs",
            action="append",
            dest="observations",
            help=flag_help(op, "observations", repeatable=True),
        )
        parser.add_argument("--type", help=op.field_help("type"))
        parser.add_argument("--title", help=op.field_help("title"))
        parser.add_argument(
            "--tag", action="append", dest="tags", help=flag_help(op, "tags", repeatable=True)
        )
        parser.add_argument("--why", help=op.field_help("why"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(
            options,
            "name", "id", "new_name", "observations", "type", "title", "tags", "why",
        )  # fmt: skip

    def render(self, result: dict[str, Any]) -> None:
        old, new = result["superseded"], result["new"]
        self.stdout.write(
            f"Superseded: {old['name']} (archived, kept) by {new['name']} "
            f"({new['trust']['status']})"
        )
