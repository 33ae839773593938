"""`memesh mcp`: the MCP server on stdio, for agent hosts that launch it as a subprocess.

stdout carries only the protocol: while serving, the SDK points fd 1 at stderr, and Django's
logging goes to stderr (settings.LOGGING). The bound project is the working directory the host
starts the server in. Nothing slow runs before the server answers `initialize`: the database is
migrated on a worker thread when the first tool call arrives (calls wait for it), and an
embedding model loads only when a call first needs one.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from django.core.management.base import CommandParser
from django.db import connections

from api.cli.base import MemeshCommand
from api.envelope import known_failure
from core.db.schema import migrate_if_needed
from core.errors import MemeshError

if TYPE_CHECKING:
    from api.mcp_server.presence import Presence


class DatabaseUnavailable(MemeshError):
    error_code = "server.internal"
    http_status = 503


class MigrationGate:
    """Migrates when the first tool call arrives; `wait()` blocks callers until done.

    Not at start: loading the migration graph is ~0.2 s of CPU, which under the GIL would slow
    the `initialize` answer it was meant to stay out of the way of. A migration that fails is
    reported to the calls waiting for it and tried again by the next call, so a server started
    on a full disk, say, works once there is room, without a restart.
    """

    def __init__(self, enabled: bool) -> None:
        self._pending = enabled
        self._lock = anyio.Lock()

    async def wait(self) -> None:
        if not self._pending:
            return
        async with self._lock:  # one migration at a time; the calls behind it then pass
            if not self._pending:
                return
            try:
                await anyio.to_thread.run_sync(_migrate)
            except Exception as exc:  # the server stays up to say why, on every call
                sys.stderr.write(f"memesh mcp: the database could not be migrated: {exc}\n")
                if known_failure(exc) is not None:
                    raise  # a storage condition, say: its own code and hint (api/envelope.py)
                raise DatabaseUnavailable(f"the database could not be migrated: {exc}") from exc
            self._pending = False


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
        from api.mcp_server import early_stdio

        early_stdio.begin()  # already begun when started as `memesh mcp` (memesh_site/cli.py)
        anyio.run(serve_stdio, not options["no_migrate"])


async def serve_stdio(migrate: bool) -> None:
    import secrets

    from django.conf import settings

    from api.cli.host import CliHost

    host = CliHost()
    if settings.MEMESH_MCP_RUNS_CLI:
        # Before the server is built (the SDK and every operation's schemas, ~0.7 s of CPU):
        # the hooks an agent host fires while this process starts (a Codex session's
        # UserPromptSubmit) are run here from then on, each on the command thread
        # (api/cli/runner.py), rather than in a process of their own that sets Django up again.
        host.start()
    presence: Presence | None = None
    try:
        from api.mcp_server.presence import Presence
        from api.mcp_server.server import build_server
        from api.mcp_server.stdio import stdio_transport
        from graph.project import project_id

        gate = MigrationGate(migrate)
        project = project_id()
        recipient = settings.MEMESH_RECIPIENT or None
        # The process is one agent session; while it serves, its registrations stay live
        # (api/mcp_server/presence.py), and they end when it stops.
        presence = Presence(
            project=project, session=f"mcp:{secrets.token_hex(12)}", declared=recipient
        )
        server = build_server(
            project=project,
            ready=gate.wait,
            one_session=True,
            process_session=presence.session,
            recipient=recipient,
            on_request=presence.seen,
        )
        async with anyio.create_task_group() as group:
            group.start_soon(stop_on_signal, group.cancel_scope)
            group.start_soon(presence.keep_alive, gate.wait)
            async with stdio_transport() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
    finally:
        host.stop()
        if presence is not None and presence.active:  # it may have registered: end its leases
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await anyio.to_thread.run_sync(presence.end)


async def stop_on_signal(scope: anyio.CancelScope) -> None:
    """SIGINT or SIGTERM stops the server at once, the way the client closing stdin does.

    Claude Code ends a session with SIGINT and sends SIGTERM 100 ms later. Cancelling the
    server stops it reading requests; a tool call already running on its worker thread is
    not abandoned: the cancellation waits for it, so its transaction commits whole (its
    answer is not sent). Then the process ends as after end of input (leases ended, the
    recall access counts flushed at exit: graph/ops/recall/access.py). Further signals are
    ignored meanwhile: the SIGTERM that follows must not kill a transaction that is
    finishing (SIGKILL still ends the process, and SQLite then rolls the transaction back).
    """
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            break
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    scope.cancel()
