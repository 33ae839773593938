"""`memesh learn`: record a structured lesson from the shell (the `learn` operation)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from api.cli.base import PROJECT_HELP, OperationCommand, given
from graph.ops.learn import LEARN


class Command(OperationCommand):
    help = "Record a lesson: what went wrong, what fixed it, why, and how to prevent it."
    operation = LEARN

    def add_operation_arguments(self, parser: CommandParser) -> None:
        # Required by the operation, which names a missing one (flags or --input).
        parser.add_argument("--error", help="What went wrong (required).")
        parser.add_argument("--fix", help="What fixed it (required).")
        parser.add_argument("--root-cause", default=None, help="Why it happened.")
        parser.add_argument("--prevention", default=None, help="How to prevent it next time.")
        parser.add_argument(
            "--severity",
            choices=["critical", "major", "minor"],
            default=None,
            help="Severity (default minor).",
        )
        parser.add_argument("--project", default=None, help=PROJECT_HELP)
        parser.add_argument(
            "--no-project", action="store_true", help="A general lesson that belongs to no project."
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        if options["no_project"] and options["project"] is not None:
            raise CommandError("--project and --no-project cannot be combined")
        payload = given(options, "error", "fix", "root_cause", "prevention", "severity", "project")
        if options["no_project"]:
            payload["project"] = False
        return payload

    def render(self, result: dict[str, Any]) -> None:
        self.stdout.write(f"Learned: {result['name']}")
