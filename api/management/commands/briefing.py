"""`memesh briefing`: the same fenced block the `briefing` operation returns, for agents whose
only integration is a shell."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli import PROJECT_HELP, OperationCommand, given
from graph.ops.briefing import BRIEFING


class Command(OperationCommand):
    help = "Print this project's briefing: decisions, lessons, knowledge and recent activity."
    operation = BRIEFING
    json_help = "Print project, text and entityCount as JSON."

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--level",
            choices=["minimal", "standard", "full"],
            default=None,
            help="minimal (default), standard (adds task state and an index) or full.",
        )
        parser.add_argument("--project", default=None, help=PROJECT_HELP)

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "project", "level")

    def render(self, result: dict[str, Any]) -> None:
        if result["text"]:
            self.stdout.write(result["text"])
        else:
            self.stderr.write(f"No memories to brief for project {result['project']} yet.")
