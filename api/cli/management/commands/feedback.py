"""`memesh feedback`: record which memories helped (hits) and which did not (misses), the
evidence behind recall's impact factor (graph/ops/feedback.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, flag_help, given
from graph.ops.feedback import FEEDBACK


class Command(OperationCommand):
    help = FEEDBACK.summary
    operation = FEEDBACK
    json_help = "Print { hits, misses, unchanged, unknown } as JSON."

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument(
            "--hit",
            dest="hits",
            action="append",
            type=int,
            metavar="ID",
            help=flag_help(op, "hits", repeatable=True),
        )
        parser.add_argument(
            "--miss",
            dest="misses",
            action="append",
            type=int,
            metavar="ID",
            help=flag_help(op, "misses", repeatable=True),
        )
        parser.add_argument("--text", help=op.field_help("text"))
        parser.add_argument("--session", dest="session_id", help=op.field_help("session_id"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "hits", "misses", "text", "session_id")

    def render(self, result: dict[str, Any]) -> None:
        for key, label in (
            ("hits", "Hits"),
            ("misses", "Misses"),
            ("unchanged", "Already counted in this session"),
            ("unknown", "Not found (nothing counted)"),
        ):
            if result[key]:
                self.stdout.write(f"{label}: {', '.join(str(i) for i in result[key])}")
        if not any(result[key] for key in ("hits", "misses", "unchanged", "unknown")):
            self.stdout.write("Nothing to count.")
