"""A `memesh mcp` process as a live agent (docs/messages.md): while it serves its client, its
registrations stay live for `message discover`.

- With MEMESH_RECIPIENT set to a valid principal id, the process registers itself under it,
  in its bound project, with its own session and the client's declared name as host kind —
  as soon as the client has shown itself (its first tools/list or tools/call; the name comes
  with those requests).
- Every registration of the process's session (that one, and any an agent made with
  `message register`) is renewed every RENEW_EVERY_SECONDS, shorter than the shortest lease,
  while the process lives; its leases end when it stops. A process that died without
  stopping (killed) lapses on its own when its lease runs out.
A process without a declared principal does none of this until its first `message` call (it
may register then): an ordinary memory session never touches the database for it.
An invalid MEMESH_RECIPIENT registers nothing; the calls that default to it are refused with
the id rule's code (messaging/principal.py), so the mistake is seen rather than ignored.
"""

from __future__ import annotations

import logging

import anyio
import anyio.to_thread
from django.db import close_old_connections

from api.mcp_server.server import ReadyGate
from messaging.principal import describe, principal_problem
from messaging.registrations import (
    DEFAULT_LEASE_SECONDS,
    MIN_LEASE_SECONDS,
    registration_renew,
    session_leases_end,
    session_leases_renew,
)

logger = logging.getLogger(__name__)

RENEW_EVERY_SECONDS = MIN_LEASE_SECONDS / 3
MESSAGE_TOOL = "message"


class Presence:
    def __init__(self, *, project: str | None, session: str, declared: str | None) -> None:
        self.project = project
        self.session = session
        self.declared = declared
        valid = declared is not None and principal_problem(declared) is None
        if declared is not None and not valid:
            logger.warning("memesh mcp: MEMESH_RECIPIENT: %s", describe(declared))
        self.principal = declared if valid else None
        self.host_kind: str | None = None
        self._registered = False
        self._seen = anyio.Event()

    def seen(self, host_kind: str, tool: str | None) -> None:
        """The client made a request (tools/list, or a call of `tool`): its declared name is
        known now. Without a declared principal the process has nothing to keep live until
        it uses the `message` tool (which may register it), so it touches no database
        before."""
        if self.host_kind is None:
            self.host_kind = host_kind
        if self.principal is not None or tool == MESSAGE_TOOL:
            self._seen.set()

    @property
    def active(self) -> bool:
        """Whether the process may hold a registration (so its leases end when it stops)."""
        return self._seen.is_set()

    def renew(self) -> None:
        """Register the declared principal once, then renew the session's leases (on a
        worker thread: the ORM is synchronous)."""
        close_old_connections()
        try:
            if self.principal and self.project and not self._registered:
                registration_renew(
                    project=self.project,
                    principal=self.principal,
                    session=self.session,
                    host_kind=self.host_kind or "mcp",
                    work=None,
                    lease_seconds=DEFAULT_LEASE_SECONDS,
                )
                self._registered = True
            else:
                session_leases_renew(session=self.session)
        finally:
            close_old_connections()

    def end(self) -> None:
        close_old_connections()
        try:
            session_leases_end(session=self.session)
        finally:
            close_old_connections()

    async def keep_alive(self, ready: ReadyGate | None) -> None:
        """Runs beside the server until cancelled."""
        await self._seen.wait()
        while True:
            try:
                if ready is not None:
                    await ready()
                await anyio.to_thread.run_sync(self.renew)
            except Exception as exc:  # a busy or unmigrated database: try again next round
                logger.warning("memesh mcp: the session's lease was not renewed: %s", exc)
            await anyio.sleep(RENEW_EVERY_SECONDS)
