"""What every write service does after changing an entity: rewrite its keyword-index row in
the write's transaction, and ask for its vector once that transaction commits.

Storage (`Entity.objects.index_sync`) knows the SQL; when embedding is requested, and through
which queue, is this layer's decision.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from graph.embedding import provider
from graph.models import Entity, SessionOutcome, Status

logger = logging.getLogger(__name__)


def index_after_write(entity_ids: Iterable[int]) -> None:
    """Rewrite these entities' keyword-index rows inside the current transaction (they commit
    or roll back with the write), and queue their embedding once it has committed."""
    Entity.objects.index_sync(entity_ids)
    transaction.on_commit(request_embedding)


def index_after_insert(
    entity_id: int, name: str, title: str | None, observations: Sequence[str], tags: Sequence[str]
) -> None:
    """index_after_write for an active entity just inserted with these observations and tags
    (in insertion order): its index row is written from them, not read back."""
    Entity.objects.index_new(entity_id, name, title, observations, tags)
    transaction.on_commit(request_embedding)


def entity_archive(entity: Entity, now: datetime) -> None:
    """Archive (never delete) an entity; the caller re-indexes it."""
    Entity.objects.filter(pk=entity.pk).update(status=Status.ARCHIVED, updated_at=now)
    entity.status = Status.ARCHIVED
    entity.updated_at = now


def entity_annotate(
    *, entity_id: int, metadata: Mapping[str, Any], written_at: datetime | None = None
) -> None:
    """Merge `metadata` into an entity's metadata and, when given, date its creation and last
    write `written_at`: what a caller that stores through remember records for which
    remember's input has no field (the demo tour marks its entities `demo: true` and dates
    them to the days they stand for). No index holds either, so nothing is re-indexed."""
    entity = Entity.objects.get(pk=entity_id)
    fields: dict[str, Any] = {"metadata": {**entity.metadata, **metadata}}
    if written_at is not None:
        fields.update(created_at=written_at, updated_at=written_at)
    Entity.objects.filter(pk=entity_id).update(**fields)


@transaction.atomic
def entities_delete(entity_ids: Collection[int]) -> int:
    """Delete these entities for good — with their observations, tags and relations both ways
    (the foreign keys cascade) and their session outcomes — and take them out of the keyword
    and vector indexes in the same transaction; returns how many were deleted. Every other
    removal archives (graph/ops/forget.py): only the demo tour's reset deletes, since its
    entities were never the user's."""
    ids = sorted(set(entity_ids))
    if not ids:
        return 0
    SessionOutcome.objects.filter(entity_id__in=ids).delete()
    _, by_model = Entity.objects.filter(pk__in=ids).delete()
    Entity.objects.index_sync(ids)  # no row left: out of both keyword tables and every vector
    return by_model.get(Entity._meta.label, 0)


_queue_lock = threading.Lock()
_last_queued = 0.0


def request_embedding() -> None:
    """Queue an embedding pass for the worker (after a write commits).

    A burst of writes shares one task: a request within MEMESH_EMBED_DEBOUNCE_SECONDS of the
    last queued one is dropped, and every task is delayed by that window, so it starts after
    any write whose request was dropped has committed — the task finds that write pending.
    """
    global _last_queued
    window = settings.MEMESH_EMBED_DEBOUNCE_SECONDS
    now = time.monotonic()
    # The window first: inside it the write is already covered by a queued task, whatever
    # the configuration says (_last_queued only moves when a task was queued), and asking
    # the configuration costs a stat of config.json, more than the rest of this check.
    if window and now - _last_queued < window:
        return
    if not provider.configured():
        return
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
