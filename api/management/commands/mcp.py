"""`memesh mcp`: the MCP server on stdio, for agent hosts that launch it as a subprocess.

stdout carries only the protocol: while serving, the SDK points fd 1 at stderr, and Django's
logging goes to stderr (settings.LOGGING). The bound project is the working directory the host
starts the server in. Nothing slow runs before the server answers `initialize`: the database is
migrated on a worker thread when the first tool call arrives (calls wait for it), and an
embedding model loads only when a call first needs one.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import anyio.to_thread
from django.core.management.base import CommandParser
from django.db import connections

from api.cli import MemeshCommand
from graph.errors import MemeshError
from memesh_site.db.schema import migrate_if_needed


class DatabaseUnavailable(MemeshError):
    error_code = "server.internal"
    http_status = 503


class MigrationGate:
    """Migrates once, when the first tool call arrives; `wait()` blocks callers until done.

    Not at start: loading the migration graph is ~0.2 s of CPU, which under the GIL would slow
    the `initialize` answer it was meant to stay out of the way of.
    """

    def __init__(self, enabled: bool) -> None:
        self._done = anyio.Event()
        self._started = not enabled
        self._error: str | None = None
        if not enabled:
            self._done.set()

    async def run(self) -> None:
        if self._done.is_set():
            return
        try:
            await anyio.to_thread.run_sync(_migrate)
        except Exception as exc:  # reported on every call: the server stays up to say why
            self._error = f"the database could not be migrated: {exc}"
            sys.stderr.write(f"memesh mcp: {self._error}\n")
        finally:
            self._done.set()

    async def wait(self) -> None:
        if not self._started:
            self._started = True
            await self.run()
        await self._done.wait()
        if self._error is not None:
            raise DatabaseUnavailable(self._error)


def _migrate() -> None:
    try:
        migrate_if_needed()
    finally:
        # Connections are per thread; this pool thread may never run Django code again.
        connections.close_all()


class Command(MemeshCommand):
    # The handshake must not wait for system checks (they import every URL and view);
    # `memesh check` and `memesh doctor` run them. Nor for migrations: MigrationGate.
    requires_system_checks: list[str] = []
    migrates = False
    help = "Run the memesh MCP server on stdio (for Claude Code, Codex, Gemini CLI, ...)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-migrate",
            action="store_true",
            help="Do not apply pending database migrations before the first tool call.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        anyio.run(serve_stdio, not options["no_migrate"])


async def serve_stdio(migrate: bool) -> None:
    from api.mcp_server import build_server
    from api.mcp_stdio import stdio_transport
    from graph.project import project_id

    gate = MigrationGate(migrate)
    server = build_server(project=project_id(), ready=gate.wait)
    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
