"""Access counting for recall, written in batches so that recall never takes the write lock.

Each recall notes the ids it returned, and, when it ran in a session, that the session was
returned them (the ledger graph/ops/feedback.py settles into hits and misses). Both reach the
database in one transaction at most once a second per process, at process exit, and before
feedback settles a session (`flush_accesses`). In a server process (`flush_in_background`) a
thread of its own writes them a second after the first recall that noted some; elsewhere (the
CLI, MCP over stdio) the next recall after that second does, or the one that finds 1,000
waiting. On a server's request path that write was its slowest moment: about one served
recall in a hundred took 5–25 ms longer (docs/performance-notes.md). A reader never waits
for another process's writer (WAL readers do not block), and a recall costs no write
transaction of its own. The price: a process killed without running its exit handlers
loses up to a second of access counts, which only feed the frequency and recency factors of
ranking, and of returned rows, which only means those memories are not counted as misses of
that session. Neither changes hits or misses: only feedback does (DESIGN §5.2). Every MCP
recall runs in a session, so the ledger grows without any feedback call: a flush that writes
returned rows also prunes the rows untouched for OUTCOME_RETENTION (at most once an hour per
process; feedback prunes when it settles).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import DatabaseError, transaction
from django.utils import timezone

from graph.models import Entity, SessionOutcome

logger = logging.getLogger(__name__)

FLUSH_AFTER_SECONDS = 1.0
FLUSH_AT_PENDING = 1000
# Ledger rows (graph.models.SessionOutcome) older than this belong to sessions long over.
OUTCOME_RETENTION = timedelta(days=30)
PRUNE_EVERY_SECONDS = 3600.0

_lock = threading.Lock()
_counts: Counter[int] = Counter()
_last_seen: dict[int, datetime] = {}
# (session, entity id) -> when a recall in that session last returned it.
_returned: dict[tuple[str, int], datetime] = {}
_first_pending_at: float | None = None
_last_pruned_at: float | None = None
# Set when something waits to be written; the background writer's cue (flush_in_background).
_noted = threading.Event()
_writer: threading.Thread | None = None


def note_accesses(
    entity_ids: Iterable[int], when: datetime, *, session_id: str | None = None
) -> None:
    """Count one access for each id (a recall result actually returned), and note that the
    session, when there is one, was returned it."""
    global _first_pending_at
    with _lock:
        for entity_id in entity_ids:
            _counts[entity_id] += 1
            _last_seen[entity_id] = when
            if session_id is not None:
                _returned[(session_id, entity_id)] = when
        if _counts and _first_pending_at is None:
            _first_pending_at = time.monotonic()
        if _writer is not None:
            if _counts or _returned:
                _noted.set()
            return
        due = len(_counts) + len(_returned) >= FLUSH_AT_PENDING or (
            _first_pending_at is not None
            and time.monotonic() - _first_pending_at >= FLUSH_AFTER_SECONDS
        )
    if due:
        flush_accesses()


def flush_in_background() -> None:
    """From now on, write this process's accesses from a thread of its own, a second after
    the first recall that noted some, never on a recall's path (a server process calls it
    once it has started; calling it again changes nothing)."""
    global _writer
    with _lock:
        if _writer is not None:
            return
        _writer = threading.Thread(target=_write_loop, name="memesh-access-writer", daemon=True)
        _writer.start()
        if _counts or _returned:
            _noted.set()


def _write_loop() -> None:
    while True:
        _noted.wait()
        time.sleep(FLUSH_AFTER_SECONDS)  # a second of recalls in one transaction
        _noted.clear()  # before the write: what is noted during it sets the cue again
        try:
            flush_accesses()
        except Exception:  # the thread must outlive any one write; the next one retries
            logger.exception("could not record recall accesses")


def flush_accesses() -> int:
    """Write the pending access counts (and returned rows) now; returns how many entities
    were updated."""
    global _first_pending_at, _last_pruned_at
    with _lock:
        if not _counts and not _returned:
            return 0
        counts, last_seen, returned = dict(_counts), dict(_last_seen), dict(_returned)
        _counts.clear()
        _last_seen.clear()
        _returned.clear()
        _first_pending_at = None
        prune = bool(returned) and (
            _last_pruned_at is None or time.monotonic() - _last_pruned_at >= PRUNE_EVERY_SECONDS
        )
        if prune:
            _last_pruned_at = time.monotonic()
    try:
        with transaction.atomic():
            Entity.objects.accesses_add(counts, last_seen)
            SessionOutcome.objects.returned_add(returned)
            if prune:
                SessionOutcome.objects.prune(timezone.now() - OUTCOME_RETENTION)
    except DatabaseError:
        # Keep them for the next flush rather than lose them to a busy database.
        logger.warning("could not record %d recall accesses; will retry", len(counts))
        with _lock:
            for entity_id, n in counts.items():
                _counts[entity_id] += n
                _last_seen.setdefault(entity_id, last_seen[entity_id])
            for key, when in returned.items():
                _returned.setdefault(key, when)
            if _first_pending_at is None:
                _first_pending_at = time.monotonic()
        return 0
    return len(counts)


def _flush_at_exit() -> None:
    try:
        flush_accesses()
    except Exception:  # the interpreter is going away; never turn exit into a traceback
        logger.exception("could not record recall accesses at exit")


atexit.register(_flush_at_exit)


def discard_pending_accesses() -> None:
    """Forget what has not been written (between tests, whose databases roll back)."""
    global _first_pending_at
    with _lock:
        _counts.clear()
        _last_seen.clear()
        _returned.clear()
        _first_pending_at = None
