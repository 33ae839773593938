"""`memesh embed`: compute the vectors still missing, here and now (the worker's task, run
synchronously)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from graph.embedding import provider
from graph.indexing import embedding_pass


class Command(MemeshCommand):
    help = "Embed every memory whose vector is missing or stale, without a worker."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        report = embedding_pass.embed_pending()
        data = {
            "embedded": report.embedded,
            "failed": report.failed,
            "skipped": report.skipped,
            "error": report.error,
            "generation": report.generation,
        }
        if options["json"]:
            self.stdout.write(json.dumps(data))
        elif report.skipped:
            self.stdout.write(f"Nothing embedded: {report.skipped}.")
        else:
            self.stdout.write(f"Embedded {report.embedded} memories.")
            if report.error:
                self.stderr.write(f"Stopped on a provider error: {report.error}")
        # No embedder configured is a choice, not a failure.
        if report.error or (report.skipped and provider.current() is not None):
            raise SystemExit(1)
