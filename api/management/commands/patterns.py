"""`memesh patterns`: the user's work patterns (the `user_patterns` operation)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli import OperationCommand
from graph.ops.patterns import CATEGORIES, USER_PATTERNS, UserPatternsOutput, render_markdown


class Command(OperationCommand):
    help = "Show work schedule, tool preferences, focus areas, workflow, strengths, learning."
    operation = USER_PATTERNS

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--category",
            action="append",
            choices=CATEGORIES,
            dest="categories",
            help="Only this category (repeatable). Default: all.",
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return {"categories": options["categories"]} if options["categories"] else {}

    def render(self, result: dict[str, Any]) -> None:
        self.stdout.write(render_markdown(UserPatternsOutput.model_validate(result)))
