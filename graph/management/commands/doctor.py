"""`memesh doctor`: what works and what does not, with the fix for each problem."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from graph import doctor

MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


class Command(BaseCommand):
    help = "Check the database, the embedder and the vector index."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print the checks as JSON.")
        parser.add_argument(
            "--no-probe", action="store_true", help="Do not call the embedder to test it."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        checks = doctor.run_checks(probe=not options["no_probe"])
        report = doctor.as_json(checks)
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            for check in checks:
                self.stdout.write(f"{MARKS[check.status]} {check.name}: {check.detail}")
        if not report["ok"]:
            raise SystemExit(1)
