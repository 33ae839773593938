"""`memesh demo [--reset]`: insert the demo tour, or remove it (POST /v1/demo/seed and
/v1/demo/reset; dream/demo.py)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand
from dream.demo import DEMO_RESET, DEMO_SEED
from graph.ops.kit.operation import Operation


class Command(OperationCommand):
    help = (
        "Insert the demo tour (decisions, lessons, commits with evidence, a pending proposal; "
        "every entity marked metadata.demo = true), or remove exactly those with --reset."
    )
    operation = DEMO_SEED
    json_help = "Print { inserted, removed } as JSON."
    resetting = False

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Remove every demo entity and the demo proposal instead (all or nothing); "
            "memories of your own are never touched.",
        )

    def selected_operation(self, options: dict[str, Any]) -> Operation:
        self.resetting = bool(options["reset"])
        return DEMO_RESET if self.resetting else DEMO_SEED

    def render(self, result: dict[str, Any]) -> None:
        if self.resetting:
            self.stdout.write(f"Removed {result['removed']} demo entities.")
        elif result["inserted"]:
            self.stdout.write(
                f"Inserted {result['inserted']} demo entities; remove them with "
                "`memesh demo --reset`."
            )
        else:
            self.stdout.write("The demo tour is already there; nothing was inserted.")
