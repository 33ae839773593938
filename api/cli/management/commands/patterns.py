"""`memesh patterns`: the user's work patterns (the `user_patterns` operation)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, flag_help, given
from graph.ops.user_patterns import CATEGORIES, USER_PATTERNS, UserPatternsOutput, render_markdown


class Command(OperationCommand):
    help = "Show work schedule, tool preferences, focus areas, workflow, strengths, learning."
    operation = USER_PATTERNS

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument(
            "--category",
            action="append",
            choices=CATEGORIES,
            dest="categories",
            help=flag_help(op, "categories", repeatable=True),
        )
        parser.add_argument("--project", help=op.field_help("project"))
        parser.add_argument(
            "--cross-project", action="store_true", help=op.field_help("cross_project")
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(options, "categories", "project")
        if options["cross_project"]:
            payload["cross_project"] = True
        return payload

    def render(self, result: dict[str, Any]) -> None:
        self.stdout.write(render_markdown(UserPatternsOutput.model_validate(result)))
