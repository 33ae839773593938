"""Which memories a briefing may show: trusted, active and unexpired ones, newest first, each
with the trust model's mark (graph/ops/kit/trust/).

Imported or otherwise untrusted memories are never selected: they were written by someone else
and would arrive wearing the authority of the user's own graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from graph.models import Entity, Status
from graph.ops.kit.fields import ACTIVITY_TYPES
from graph.ops.kit.trust.view import source_origin, unconfirmed_label
from graph.storage.documents import EntityDocument

DECISION = "decision"
LESSON = "lesson_learned"
HANDOFF = "handoff"
# Routine records of what happened (graph/ops/kit/fields.py: ACTIVITY_TYPES); everything else of a
# project is "knowledge". Activity ranks below decisions: a week of commits must not push them
# out.


def is_trusted(metadata: Any) -> bool:
    """False for memories that came from outside: imports and anything marked untrusted (the
    trust block's `source_origin: imported`; graph/ops/kit/trust/view.py holds the test)."""
    return source_origin(metadata) == "local"


@dataclass(frozen=True, slots=True)
class Candidate:
    doc: EntityDocument
    # Last time anyone wrote or read it: a decision untouched for 30 days is "unconfirmed".
    touched: datetime
    # The trust model's mark (graph/ops/kit/trust/): a hypothesis or a stale fact says since when
    # it is unconfirmed; "" for a fresh fact.
    mark: str = ""
    stale_fact: bool = False


def aware(value: datetime) -> datetime:
    return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)


def durable(tagged: QuerySet[Entity]) -> QuerySet[Entity]:
    """What the index lists: everything but the handoff and routine activity."""
    return tagged.exclude(type__in=[HANDOFF, *ACTIVITY_TYPES])


def select_candidates(
    queryset: QuerySet[Entity],
    limit: int,
    skip: set[int],
    *,
    page: int = 100,
    now: datetime | None = None,
) -> list[Candidate]:
    """The newest `limit` trusted, active, unexpired (at `now`) entities of `queryset` not in
    `skip`, each with its trust mark.

    The trust test runs in Python: SQLite's JSON lookups under NOT treat a missing key as NULL
    and would drop every memory without the key. Paging keeps a graph full of imports from
    starving the section while still reading only what it needs.
    """
    if limit <= 0:
        return []
    now = now or timezone.now()
    picked: list[tuple[int, datetime]] = []
    rows = (
        queryset.filter(status=Status.ACTIVE)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .order_by("-updated_at", "-id")
    )
    offset = 0
    while len(picked) < limit:
        batch = list(
            rows.values_list("id", "updated_at", "last_accessed_at", "metadata")[
                offset : offset + page
            ]
        )
        for entity_id, updated, accessed, metadata in batch:
            if entity_id in skip or not is_trusted(metadata):
                continue
            touched = max(aware(updated), aware(accessed)) if accessed else aware(updated)
            picked.append((entity_id, touched))
            skip.add(entity_id)
            if len(picked) == limit:
                break
        if len(batch) < page:
            break
        offset += page
    docs = Entity.objects.documents([entity_id for entity_id, _ in picked])
    touched_by_id = dict(picked)
    out = []
    for doc in docs:
        mark = unconfirmed_label(doc, now) or ""
        out.append(Candidate(doc, touched_by_id[doc.id], mark, doc.trust == "fact" and bool(mark)))
    return out
