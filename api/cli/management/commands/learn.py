"""`memesh learn`: record a structured lesson from the shell (the `learn` operation)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from api.cli.base import OperationCommand, flag_help, given
from graph.ops.learn import LEARN


class Command(OperationCommand):
    help = "Record a lesson: what went wrong, what fixed it, why, and how to prevent it."
    operation = LEARN

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        # Required by the operation, which names a missing one (flags or --input).
        parser.add_argument("--error", help=flag_help(op, "error"))
        parser.add_argument("--fix", help=flag_help(op, "fix"))
        parser.add_argument("--root-cause", default=None, help=op.field_help("root_cause"))
        parser.add_argument("--prevention", default=None, help=op.field_help("prevention"))
        parser.add_argument(
            "--severity",
            choices=op.field_choices("severity"),
            default=None,
            help=op.field_help("severity"),
        )
        # The field's two kinds of value as two flags: --project takes an id (`--project
        # false` names a project "false"), --no-project sends `false`.
        parser.add_argument(
            "--project",
            default=None,
            help=f"{op.field_help('project')} This flag takes an id; for `false`, --no-project.",
        )
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
