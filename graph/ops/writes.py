"""What every write service does after changing an entity: rewrite its keyword-index row in
the write's transaction, and ask for its vector once that transaction commits.

Storage (`Entity.objects.index_sync`) knows the SQL; when embedding is requested, and through
which queue, is this layer's decision.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import transaction

from graph.embedding import provider
from graph.models import Entity, Status

logger = logging.getLogger(__name__)


def index_after_write(entity_ids: Iterable[int]) -> None:
    """Rewrite these entities' keyword-index rows inside the current transaction (they commit
    or roll back with the write), and queue their embedding once it has committed."""
    Entity.objects.index_sync(entity_ids)
    transaction.on_commit(request_embedding)


def entity_archive(entity: Entity, now: datetime) -> None:
    """Archive (never delete) an entity; the caller re-indexes it."""
    Entity.objects.filter(pk=entity.pk).update(status=Status.ARCHIVED, updated_at=now)
    entity.status = Status.ARCHIVED
    entity.updated_at = now


_queue_lock = threading.Lock()
_last_queued = 0.0


def request_embedding() -> None:
    """Queue an embedding pass for the worker (after a write commits).

    A burst of writes shares one task: a request within MEMESH_EMBED_DEBOUNCE_SECONDS of the
    last queued one is dropped, and every task is delayed by that window, so it starts after
    any write whose request was dropped has committed — the task finds that write pending.
    """
    global _last_queued
    if provider.current() is None:
        return
    window = settings.MEMESH_EMBED_DEBOUNCE_SECONDS
    now = time.monotonic()
    with _queue_lock:
        if window and now - _last_queued < window:
            return
        _last_queued = now
    from graph.tasks import embed_pending_task

    try:
        if window:
            embed_pending_task.apply_async(countdown=window)
        else:
            embed_pending_task.delay()
    except Exception:  # a broken broker must not fail a write that has committed
        logger.exception("could not queue the embedding task; `memesh embed` catches up")
