"""`memesh serve`: the HTTP API (/v1) and MCP over streamable HTTP (/mcp) on loopback port 3737,
with the database migrated first.

A non-loopback host is refused unless `--allow-remote` (or MEMESH_HTTP_ALLOW_REMOTE=true) is
given; then a bearer token is provisioned before the server listens and required on every /v1
and /mcp request of that listener (api/edge/remote_auth.py). The requirement is keyed to the
bind address: `--allow-remote` on a loopback host generates no token and requires no auth.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.db import connections

from api.cli import forward as cli_forward
from api.cli.base import MemeshCommand
from api.cli.installation.management.commands.worker import LOG_LEVELS
from api.edge import remote_auth
from api.edge.remote_auth import is_loopback
from core import lifecycle, serve_record
from core.db.schema import migrate_if_needed
from graph import status

API_PATH = "/v1"
DOCS_PATH = "/v1/docs"
REVIEW_PATH = "/review/"
DASHBOARD_PATH = "/dashboard/"
ADMIN_PATH = "/admin/"
MCP_PATH = "/mcp"
WORKERS_ENV = "MEMESH_HTTP_WORKERS"
# Two processes use both cores of a small machine for concurrent clients (one process serves
# one request at a time under the GIL); each costs its own Django and, once a query is
# embedded, its own copy of the model.
MAX_WORKERS = 32


def url_host(host: str) -> str:
    """`host` as it appears in a URL: IPv6 literals in brackets."""
    bare = host.strip("[]")
    return f"[{bare}]" if ":" in bare else bare


def accept_bind_host(host: str) -> None:
    """A specific remote bind address is a Host header its clients will send: accept it (Django
    and /mcp's DNS-rebinding check both read ALLOWED_HOSTS; the app is imported after this).
    Wildcard binds (0.0.0.0, ::) name no host; MEMESH_ALLOWED_HOSTS adds the names clients use."""
    bare = host.strip("[]")
    if bare in ("0.0.0.0", "::"):
        return
    name = url_host(bare)
    if name not in settings.ALLOWED_HOSTS:
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, name]


class Command(MemeshCommand):
    help = "Run the memesh HTTP server (REST under /v1, MCP at /mcp) on 127.0.0.1:3737."
    migrates = False  # below, unless --no-migrate
    # A long-lived server checks its SQLite (FTS5, sqlite-vec) once as it starts.
    requires_system_checks = "__all__"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=settings.MEMESH_HTTP_HOST)
        parser.add_argument("--port", type=int, default=settings.MEMESH_HTTP_PORT)
        parser.add_argument(
            "--allow-remote",
            action="store_true",
            default=settings.MEMESH_HTTP_ALLOW_REMOTE,
            help="Allow a non-loopback --host; every /v1 and /mcp request of that listener then "
            "needs 'Authorization: Bearer <token>' (MEMESH_REMOTE_TOKEN or "
            "$MEMESH_HOME/remote-token).",
        )
        parser.add_argument(
            "--workers",
            type=int,
            default=settings.MEMESH_HTTP_WORKERS,
            help="Server processes sharing the port (default 2; "
            f"{WORKERS_ENV}). SQLite in WAL mode serves them all; more than one makes /mcp "
            "stateless (no server-initiated stream).",
        )
        parser.add_argument(
            "--no-migrate",
            action="store_true",
            help="Do not apply pending database migrations before serving.",
        )
        parser.add_argument(
            "--log-level",
            default="warning",
            choices=LOG_LEVELS,
            help="Of the server and its worker: info adds the access log; debug also shows "
            "Celery's start-up banner and warnings.",
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            default=not settings.MEMESH_WORKER,
            help="Do not start the background worker (embedding); run `memesh worker` yourself.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # What the user's environment chose, before this process adds its own variables:
        # a CLI process compares its own with it (api/cli/forward.py).
        chosen_environment = dict(os.environ)
        host: str = options["host"]
        port: int = options["port"]
        workers: int = options["workers"]
        if not 1 <= workers <= MAX_WORKERS:
            raise CommandError(f"--workers must be between 1 and {MAX_WORKERS} (got {workers})")
        remote = not is_loopback(host)
        if remote and not options["allow_remote"]:
            raise CommandError(
                f"refusing to bind {host}: it is not a loopback address (127.0.0.1, ::1, "
                "localhost), so memesh would be reachable from other machines. Pass "
                "--allow-remote (or set MEMESH_HTTP_ALLOW_REMOTE=true) to serve it with "
                "bearer-token authentication."
            )
        # The token exists before the socket does: there is no unauthenticated window.
        provisioned = remote_auth.provision_token() if remote else None
        remote_auth.configure(remote=remote, token=provisioned.token if provisioned else None)
        if remote:
            accept_bind_host(host)
        # uvicorn's worker processes import the application afresh: what this process decided
        # (listener kind, accepted host, worker count) reaches them through the environment.
        remote_auth.export_to_workers()
        os.environ["MEMESH_ALLOWED_HOSTS"] = ",".join(
            h for h in settings.ALLOWED_HOSTS if h != "testserver"
        )
        os.environ[WORKERS_ENV] = str(workers)
        os.environ[lifecycle.SERVE_PID_ENV] = str(os.getpid())
        original = None
        if not options["no_migrate"]:
            migrate_if_needed()
            # The original MeMesh beside memesh's database: read while this process still has
            # its connection (closed just below), and said after the addresses.
            original = status.original_memesh_state()
        # From here this process only supervises uvicorn's workers, which open their own
        # connections: one left open here would pin the database's -wal and -shm files for
        # the server's lifetime although nothing here reads through it again.
        connections.close_all()

        import uvicorn

        self.announce(
            host, port, provisioned, allow_remote=options["allow_remote"], workers=workers
        )
        if original is not None and original.not_imported:
            sys.stderr.write(f"{original.sentence()}.\n")
        # The token a CLI process shows to have a command run here (api/cli/forward.py):
        # in the record for them, in the environment for this server's processes.
        cli_token = cli_forward.new_token()
        os.environ[cli_forward.TOKEN_ENV] = cli_token
        worker = None if options["no_worker"] else _start_worker(options["log_level"])
        # What `memesh status` checks against the process and the port, and what a CLI
        # process reads to find this server.
        _clear_record_on_sigterm()
        serve_record.record_write(
            host=host,
            port=port,
            worker=worker is not None,
            extra=cli_forward.record_fields(chosen_environment, cli_token),
        )
        try:
            uvicorn.run(
                "memesh_site.asgi:application",
                host=host.strip("[]"),
                port=port,
                log_level=options["log_level"],
                access_log=options["log_level"] in ("info", "debug"),
                # The composed app needs lifespan: /mcp's session manager runs for the
                # server's lifetime (memesh_site/asgi.py).
                lifespan="on",
                workers=workers,
            )
        finally:
            serve_record.record_clear()
            if worker is not None:
                _stop(worker)

    def announce(
        self,
        host: str,
        port: int,
        provisioned: remote_auth.ProvisionedToken | None,
        *,
        allow_remote: bool,
        workers: int = 1,
    ) -> None:
        base = f"http://{url_host(host)}:{port}"
        # A team server's database by its URL without the password (core/db/postgres/url.py).
        db = (
            settings.DATABASES["default"].get("MEMESH_SAFE_URL")
            or settings.DATABASES["default"]["NAME"]
        )
        lines = [
            f"memesh {settings.VERSION} serving {base}{API_PATH} (db: {db})",
            f"API docs: {base}{DOCS_PATH}",
            f"Dashboard: {base}{DASHBOARD_PATH} (log in with a reviewer account)",
            f"Review dream proposals: {base}{REVIEW_PATH} (admin: {base}{ADMIN_PATH})",
            f"MCP (streamable HTTP): {base}{MCP_PATH}",
            f"{workers} server process{'es' if workers > 1 else ''}",
        ]
        if provisioned is None:
            if allow_remote:
                lines.append(
                    f"--allow-remote has no effect on loopback host {host}: no token is "
                    "generated and no authentication is required."
                )
            lines.append("Only this machine can reach it (loopback bind).")
        else:
            lines += [
                f"Remote bind ({host}): every {API_PATH} and {MCP_PATH} request needs "
                "'Authorization: Bearer <token>', loopback connections to this listener included.",
                f"Bearer token (from {provisioned.source}): {provisioned.token}",
                "Remote clients must send a Host header this server accepts "
                f"({', '.join(h for h in settings.ALLOWED_HOSTS if h != 'testserver')}); "
                "MEMESH_ALLOWED_HOSTS adds the names they use.",
            ]
        sys.stderr.write("".join(f"{line}\n" for line in lines))


def _clear_record_on_sigterm() -> None:
    """Remove the server's record when SIGTERM ends it. With one process, uvicorn shuts down on
    SIGTERM, restores the handler it found and raises the signal again, so with the default
    handler the process ends before any `finally` runs (with several, its supervisor returns
    and the `finally` clears the record). This handler clears it, then ends the process as
    SIGTERM would."""

    def clear_then_terminate(signum: int, frame: object) -> None:
        serve_record.record_clear()
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)

    signal.signal(signal.SIGTERM, clear_then_terminate)


def _start_worker(log_level: str) -> subprocess.Popen[bytes] | None:
    """The embedded background worker: a child process that lives as long as the server. It
    says itself, in one line, when it is ready."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None  # tasks run inside the request's process
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
