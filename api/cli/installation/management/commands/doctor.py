"""`memesh doctor`: what works and what does not, with the fix for each problem (graph's
checks, then the dream side's: dream/doctor.py).

`--fix` first repairs what the index-consistency check finds
(graph/indexing/consistency.py), then runs every check; the exit status is that of the
checks after the repair (0 healthy, 1 not). The Integrations section (which agent hosts memesh
is set up in, for the user and for this directory's repository) warns but never fails.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from dream import doctor as dream_doctor
from graph import doctor
from graph.project import project_root
from hosts import health as host_health

MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


class Command(MemeshCommand):
    help = "Check the database, the embedder, the vector index and the indexes' consistency."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print the checks as JSON.")
        parser.add_argument(
            "--no-probe", action="store_true", help="Do not call the embedder to test it."
        )
        parser.add_argument(
            "--fix",
            action="store_true",
            help="Repair keyword- and vector-index rows that disagree with the memories, "
            "then check again.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        repair = doctor.fix() if options["fix"] else None
        checks = dream_doctor.run_checks(probe=not options["no_probe"])
        integrations = host_health.integration_checks(project_root())
        report = doctor.as_json(checks, integrations)
        if repair is not None:
            report["fix"] = repair.as_json()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            if repair is not None:
                self.stdout.write(f"fix: {repair.summary()}")
            for check in checks:
                self.stdout.write(f"{MARKS[check.status]} {check.name}: {check.detail}")
            self.stdout.write("Integrations")
            for check in integrations:
                self.stdout.write(f"  {MARKS[check.status]} {check.name}: {check.detail}")
        if not report["ok"]:
            raise SystemExit(1)
