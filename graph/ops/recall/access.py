"""Access counting for recall, written in batches so that recall never takes the write lock.

Each recall notes the ids it returned; the counts reach the database in one transaction at
most once a second per process (on the next recall after that), when 1,000 ids are waiting,
and at process exit. A reader therefore never waits for another process's writer (WAL readers
do not block), and a recall costs no write transaction. The price: a process killed without
running its exit handlers loses up to a second of access counts, which only feed the
frequency and recency factors of ranking.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from django.db import DatabaseError, transaction

from graph.models import Entity

logger = logging.getLogger(__name__)

FLUSH_AFTER_SECONDS = 1.0
FLUSH_AT_PENDING = 1000

_lock = threading.Lock()
_counts: Counter[int] = Counter()
_last_seen: dict[int, datetime] = {}
_first_pending_at: float | None = None


def note_accesses(entity_ids: Iterable[int], when: datetime) -> None:
    """Count one access for each id (a recall result actually returned)."""
    global _first_pending_at
    with _lock:
        for entity_id in entity_ids:
            _counts[entity_id] += 1
            _last_seen[entity_id] = when
        if _counts and _first_pending_at is None:
            _first_pending_at = time.monotonic()
        due = len(_counts) >= FLUSH_AT_PENDING or (
            _first_pending_at is not None
            and time.monotonic() - _first_pending_at >= FLUSH_AFTER_SECONDS
        )
    if due:
        flush_accesses()


def flush_accesses() -> int:
    """Write the pending access counts now; returns how many entities were updated."""
    global _first_pending_at
    with _lock:
        if not _counts:
            return 0
        counts, last_seen = dict(_counts), dict(_last_seen)
        _counts.clear()
        _last_seen.clear()
        _first_pending_at = None
    try:
        with transaction.atomic():
            Entity.objects.accesses_add(counts, last_seen)
    except DatabaseError:
        # Keep them for the next flush rather than lose them to a busy database.
        logger.warning("could not record %d recall accesses; will retry", len(counts))
        with _lock:
            for entity_id, n in counts.items():
                _counts[entity_id] += n
                _last_seen.setdefault(entity_id, last_seen[entity_id])
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
        _first_pending_at = None
