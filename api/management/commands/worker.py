"""`memesh worker`: the Celery worker that embeds memories and runs background work."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli import MemeshCommand
from memesh_site.lifecycle import exit_with_parent


class Command(MemeshCommand):
    help = "Run the background worker (embedding, reindex and dream tasks)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--concurrency", type=int, default=1)
        parser.add_argument(
            "--log-level", default="warning", choices=["critical", "error", "warning", "info"]
        )
        parser.add_argument(
            "--parent-pid",
            type=int,
            help="Exit when this process is gone (set by `memesh serve` for its worker).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from memesh_site.celery import app

        if options["parent_pid"]:
            exit_with_parent(options["parent_pid"], graceful=False)

        # solo pool: one embedding model per process; the work is CPU-bound batches.
        pool = "solo" if options["concurrency"] == 1 else "prefork"
        app.worker_main(
            [
                "worker",
                f"--pool={pool}",
                f"--concurrency={options['concurrency']}",
                f"--loglevel={options['log_level']}",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
            ]
        )
