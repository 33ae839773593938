"""`memesh briefing`: the same fenced block the `briefing` operation returns, for agents whose
only integration is a shell; `--index` prints the durable-memory index alone
(graph/ops/briefing/'s `briefing_index`, with its own 40-line / 3072-byte caps).

The level: `--level`, else the `briefing` setting (`memesh config set briefing <level>`), else
`minimal` — the operation resolves it, as it does for MCP.
"""

from __future__ import annotations

import json
from typing import Any, cast

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from core.errors import InvalidInput
from graph.ops.briefing import BRIEFING, BriefingInput, briefing_index
from graph.project import project_id


class Command(OperationCommand):
    help = "Print this project's briefing: decisions, lessons, knowledge and recent activity."
    operation = BRIEFING
    json_help = "Print project, text and entityCount as JSON (with --index: and truncated)."

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        what = parser.add_mutually_exclusive_group()
        what.add_argument(
            "--level", choices=op.field_choices("level"), default=None, help=op.field_help("level")
        )
        # Not a field: another call (briefing_index), which only the CLI offers on its own.
        what.add_argument(
            "--index",
            action="store_true",
            help="Print only the index of this project's durable memories, with [mem:id] "
            "handles (at most 40 lines / 3072 bytes; says when there are more).",
        )
        parser.add_argument("--project", default=None, help=op.field_help("project"))
        parser.add_argument("--recipient", default=None, help=op.field_help("recipient"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        return given(options, "project", "level", "recipient")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["index"]:
            super().handle(*args, **options)
            return
        if options["input"]:
            raise InvalidInput("--index takes --project only, not --input", field="index")
        # The operation's own input rules for --project (a blank or overlong name is refused).
        data = cast(BriefingInput, BRIEFING.parse(given(options, "project")))
        index = briefing_index(data.project or project_id())
        result = index.model_dump(mode="json", by_alias=True)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.render_index(result)

    def render(self, result: dict[str, Any]) -> None:
        if result["text"]:
            self.stdout.write(result["text"])
        else:
            self.stderr.write(f"No memories to brief for project {result['project']} yet.")

    def render_index(self, result: dict[str, Any]) -> None:
        if result["text"]:
            self.stdout.write(result["text"])
        else:
            self.stderr.write(f"No durable memories to index for project {result['project']} yet.")
