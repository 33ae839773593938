"""`memesh memories`: browse and audit memories by trust (the memory_list operation)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from graph.ops.memory_list import MEMORY_LIST


class Command(OperationCommand):
    help = MEMORY_LIST.summary
    operation = MEMORY_LIST

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument(
            "--status", choices=op.field_choices("status"), help=op.field_help("status")
        )
        parser.add_argument(
            "--namespace", choices=op.field_choices("namespace"), help=op.field_help("namespace")
        )
        parser.add_argument("--tag", help=op.field_help("tag"))
        parser.add_argument("--type", help=op.field_help("type"))
        parser.add_argument("--kind", choices=op.field_choices("kind"), help=op.field_help("kind"))
        parser.add_argument("--stale", action="store_true", help=op.field_help("stale"))
        parser.add_argument(
            "--include-expired", action="store_true", help=op.field_help("include_expired")
        )
        parser.add_argument("--limit", type=int, help=op.field_help("limit"))
        parser.add_argument("--offset", type=int, help=op.field_help("offset"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(options, "status", "namespace", "tag", "type", "kind", "limit", "offset")
        for flag in ("stale", "include_expired"):
            if options[flag]:
                payload[flag] = True
        return payload

    def render(self, result: dict[str, Any]) -> None:
        if not result["memories"]:
            self.stdout.write("No memories match.")
            return
        for memory in result["memories"]:
            trust = memory["trust"]
            label = memory["title"] or (memory["observations"] or [memory["name"]])[0]
            state = trust["status"] if memory["status"] == "active" else memory["status"]
            since = (
                f", unconfirmed since {trust['unconfirmed_since'][:10]}"
                if (trust["unconfirmed_since"])
                else ""
            )
            self.stdout.write(
                f"[mem:{memory['id']}] {memory['name']} — {state} {trust['confidence']}"
                f"{since}: {label[:120]}"
            )
            forgotten = memory["metadata"].get("forgotten")
            if isinstance(forgotten, dict) and forgotten.get("reason"):
                self.stdout.write(f"    forgotten: {forgotten['reason']}")
        if result["truncated"]:
            shown = result["offset"] + len(result["memories"])
            self.stdout.write(f"({shown} of {result['total']}: --offset {shown} for more)")
