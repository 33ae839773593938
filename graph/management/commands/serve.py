"""`memesh serve`: the HTTP API (/v1) and MCP over streamable HTTP (/mcp) on loopback port 3737,
with the database migrated first."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memesh_site.env import envbool, envint, envstr


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Command(BaseCommand):
    help = "Run the memesh HTTP server (REST under /v1, MCP at /mcp) on 127.0.0.1:3737."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=envstr("MEMESH_HTTP_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=envint("MEMESH_HTTP_PORT", 3737))
        parser.add_argument(
            "--no-migrate",
            action="store_true",
            help="Do not apply pending database migrations before serving.",
        )
        parser.add_argument(
            "--log-level", default="warning", choices=["critical", "error", "warning", "info"]
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            default=not envbool("MEMESH_WORKER", True),
            help="Do not start the background worker (embedding); run `memesh worker` yourself.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        host: str = options["host"]
        port: int = options["port"]
        if not is_loopback(host):
            # A remote listener must demand a bearer token on every request; until that
            # authentication exists, memesh refuses to listen beyond this machine.
            raise CommandError(
                f"refusing to bind {host}: memesh serves loopback addresses only "
                "(127.0.0.1, ::1, localhost)."
            )
        if not options["no_migrate"]:
            call_command("migrate", interactive=False, verbosity=0)

        import uvicorn

        db = settings.DATABASES["default"]["NAME"]
        sys.stderr.write(f"memesh {settings.VERSION} serving http://{host}:{port}/v1 (db: {db})\n")
        sys.stderr.write(f"MCP (streamable HTTP): http://{host}:{port}/mcp\n")
        sys.stderr.write("Only this machine can reach it (loopback bind).\n")
        worker = None if options["no_worker"] else _start_worker(options["log_level"])
        try:
            uvicorn.run(
                "memesh_site.asgi:application",
                host=host.strip("[]"),
                port=port,
                log_level=options["log_level"],
                access_log=options["log_level"] == "info",
                # The composed app needs lifespan: /mcp's session manager runs for the
                # server's lifetime (memesh_site/asgi.py).
                lifespan="on",
            )
        finally:
            if worker is not None:
                _stop(worker)


def _start_worker(log_level: str) -> subprocess.Popen[bytes] | None:
    """The embedded background worker: a child process that lives as long as the server."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None  # tasks run inside the request's process
    sys.stderr.write("Background worker started (embedding runs off the request path).\n")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memesh_site.cli",
            "worker",
            "--log-level",
            log_level,
            "--parent-pid",
            str(os.getpid()),
        ],
        stdin=subprocess.DEVNULL,
    )


def _stop(worker: subprocess.Popen[bytes]) -> None:
    worker.terminate()
    try:
        worker.wait(timeout=10)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
