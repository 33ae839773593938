"""`memesh task`: read or record where the work on this project stands (`task_state`)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from graph.ops.task_state import FIELDS, TASK_STATE, read_task_state, task_state_freshness


class Command(OperationCommand):
    help = (
        "Show this project's task state, or record it: --goal, --next, --blocked, --done "
        '(an empty string clears a field, e.g. --blocked ""). Record only what the user said.'
    )

    operation = TASK_STATE

    def add_operation_arguments(self, parser: CommandParser) -> None:
        for name in (*FIELDS, "project"):
            parser.add_argument(f"--{name}", default=None, help=self.operation.field_help(name))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, *FIELDS, "project")

    def render(self, result: dict[str, Any]) -> None:
        self.stdout.write(self._text(result))

    def _text(self, result: dict[str, Any]) -> str:
        project, state = result["project"], result["state"]
        lines: list[str] = []
        if "changed" in result:
            changed = result["changed"]
            lines.append(
                f"Updated: {', '.join(changed)}" if changed else "Unchanged (already recorded)."
            )
        if not state:
            lines.append(f"No task state for {project}.")
            return "\n".join(lines)
        # The full stored state, whatever its age; a stale one is flagged, not hidden.
        freshness = task_state_freshness(read_task_state(project))
        note = {"stale": " (stale: over 72 hours old)", "unknown": " (age unknown)"}.get(
            freshness or "", ""
        )
        lines.append(f"Task state for {project}, stated {state['updated_at']}{note}:")
        lines += [f"  {name}: {state[name]}" for name in FIELDS if name in state]
        return "\n".join(lines)
