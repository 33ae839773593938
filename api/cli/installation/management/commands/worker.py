"""`memesh worker`: the Celery worker that embeds memories and runs background work.

Its start-up is one line of ours once it is ready. Celery's banner, its configuration dump
and its warnings are for debugging it: they appear at `--log-level debug` only.

It also runs the automatic-dream schedule (dream/beat.py) unless `--no-schedule` or
MEMESH_DREAM_CHECK_SECONDS=0: Celery beat as a thread of this process rather than Celery's
`-B`, which forks a beat process that would outlive a worker killed outright (the embedded
worker's watchdog ends this process only).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from core import paths, request_activity
from core.lifecycle import exit_with_parent

LOG_LEVELS = ["critical", "error", "warning", "info", "debug"]


def broker_description() -> str:
    """Where the worker takes its tasks from, without a password."""
    url: str = settings.CELERY_BROKER_URL
    if url.startswith("filesystem://"):
        return f"filesystem broker at {paths.celery_broker_dir(paths.memesh_home())}"
    from kombu.utils.url import maybe_sanitize_url

    return f"broker {maybe_sanitize_url(url)}"


def lower_priority(increment: int) -> None:
    """Run this process `increment` nice levels below where it started (MEMESH_WORKER_NICENESS):
    the embedding it does yields the CPU to requests, and takes all of it when none arrive."""
    if increment and hasattr(os, "nice"):
        # Not permitted here: the worker still runs, at its parent's priority.
        with contextlib.suppress(OSError):
            os.nice(increment)


class Command(MemeshCommand):
    help = "Run the background worker (embedding, reindex and dream tasks)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--concurrency", type=int, default=1)
        parser.add_argument(
            "--log-level",
            default="warning",
            choices=LOG_LEVELS,
            help="debug also shows Celery's start-up banner and its warnings.",
        )
        parser.add_argument(
            "--no-schedule",
            action="store_true",
            help="Do not run the automatic-dream schedule in this worker (MEMESH_DREAM_CHECK_"
            "SECONDS=0 turns it off everywhere).",
        )
        parser.add_argument(
            "--parent-pid",
            type=int,
            help="Exit when this process is gone (set by `memesh serve` for its worker).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from celery.exceptions import SecurityWarning
        from celery.signals import worker_ready

        from core.task_queue import app
        from graph.embedding import provider

        if options["parent_pid"]:
            exit_with_parent(options["parent_pid"], graceful=False)
        lower_priority(settings.MEMESH_WORKER_NICENESS)
        provider.use_threads(settings.MEMESH_WORKER_EMBEDDER_THREADS)
        yield_seconds: float = settings.MEMESH_WORKER_YIELD_SECONDS
        if yield_seconds > 0:
            stamp = request_activity.Stamp(request_activity.activity_path(), create=False)
            provider.pace_local_embedder(functools.partial(stamp.pace, yield_seconds))

        level: str = options["log_level"]
        concurrency: int = options["concurrency"]
        # solo pool: one embedding model per process; the work is CPU-bound batches.
        pool = "solo" if concurrency == 1 else "prefork"
        every: int = 0 if options["no_schedule"] else settings.MEMESH_DREAM_CHECK_SECONDS
        schedule = f", dream check every {every} s" if _start_schedule(app, every) else ""
        line = (
            f"Background worker ready{' (embedded)' if options['parent_pid'] else ''}: "
            f"concurrency {concurrency} ({pool} pool), {broker_description()}{schedule}\n"
        )

        @worker_ready.connect(weak=False)
        def announce(**kwargs: Any) -> None:
            sys.stderr.write(line)
            sys.stderr.flush()

        quiet = []
        if level != "debug":
            quiet = ["--quiet"]  # Celery's banner
            # Celery warns about a worker running as root (common in containers) because a
            # worker accepting pickle runs whatever the broker hands it; as root with pickle
            # it refuses to start at all. This one accepts JSON only (Celery's default
            # accept_content, which memesh leaves as is), so the warning is noise in the
            # user's terminal; debug still shows it.
            warnings.filterwarnings("ignore", category=SecurityWarning)
        app.worker_main(
            [
                *quiet,
                "worker",
                f"--pool={pool}",
                f"--concurrency={concurrency}",
                f"--loglevel={level}",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
            ]
        )


def _start_schedule(app: Any, every_seconds: int) -> bool:
    """Have this worker run beat, in a thread, with the dream check; False when off."""
    from celery import bootsteps
    from celery.beat import EmbeddedService

    from dream import beat as dream_beat

    entries = dream_beat.beat_schedule(every_seconds)
    if not entries:
        return False
    app.conf.beat_schedule = entries
    filename = str(dream_beat.schedule_file(paths.memesh_home()))

    class ScheduleThread(bootsteps.StartStopStep):
        label = "memesh dream schedule"

        def create(self, worker: Any) -> Any:
            return EmbeddedService(
                worker.app,
                thread=True,
                schedule_filename=filename,
                scheduler_cls=dream_beat.DreamScheduler,
            )

    app.steps["worker"].add(ScheduleThread)
    return True
