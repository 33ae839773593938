"""revise: the edits of a stored memory that remember's append and `replace` cannot express —
an overwrite of any length, a splice that keeps the untouched observations' rows, a rename.

The memory tool (api/memory_tool/) edits a memory as a file and calls these; every other
write goes through remember, forget, observe or supersede. They keep the invariants those
keep, in one transaction each:
- the keyword-index row is rewritten inside the transaction and the vector requested after
  it commits (graph.ops.kit.writes.index_after_write);
- an observation is stored stripped, within the observations' limits, and never twice on one
  entity (ignoring whitespace, graph.search.text.normalize_observation);
- trust is untouched: an edit is a correction, not corroboration (only `observe` raises it);
- what an edit replaced or removed is kept in `metadata.replaced_history` as {at,
  observations}, as remember's `replace` and the bundle import keep it; an edit that only
  adds keeps nothing, as remember's append does;
- names are unique database-wide, archived memories included; a move to another namespace
  records `metadata.previous_namespace`, as remember does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import TypeAdapter

from core.errors import OperationFailed
from graph.models import Entity, Observation, Status
from graph.ops.kit.fields import Name, NamespaceName, ObservationText
from graph.ops.kit.writes import index_after_write
from graph.ops.remember.service import dedupe
from graph.search.text import normalize_observation

REPLACED_HISTORY_KEY = "replaced_history"

# Checked as remember's input checks an observation (length, not blank, valid Unicode); a
# failure is a pydantic ValidationError, which every caller already reports as bad input.
_OBSERVATIONS = TypeAdapter(list[ObservationText])
_NAME = TypeAdapter(Name)


def _checked(texts: Sequence[str]) -> list[str]:
    return [text.strip() for text in _OBSERVATIONS.validate_python(list(texts))]


def _ordered(entity: Entity) -> list[Observation]:
    """The entity's observations in id order: the order they were stored in."""
    return list(Observation.objects.filter(entity=entity).order_by("id"))


def _with_version(
    entity: Entity, before: Sequence[str], after: Sequence[str], now: datetime
) -> bool:
    """Keep `before` in the entity's replaced_history when the edit changed the observations
    (whitespace ignored) and there were any; True when a version was recorded."""
    if not before or [normalize_observation(t) for t in before] == [
        normalize_observation(t) for t in after
    ]:
        return False
    version: dict[str, Any] = {"at": now.isoformat(), "observations": list(before)}
    history = [*entity.metadata.get(REPLACED_HISTORY_KEY, []), version]
    entity.metadata = {**entity.metadata, REPLACED_HISTORY_KEY: history}
    return True


def _saved(entity: Entity, now: datetime, fields: Sequence[str]) -> None:
    entity.updated_at = now
    entity.save(update_fields=sorted({*fields, "updated_at"}))
    index_after_write([entity.pk])


@transaction.atomic
def observations_overwrite(
    *, entity_id: int, observations: Sequence[str], now: datetime | None = None
) -> int:
    """The entity's observations become exactly `observations` (new rows, in order, a repeat
    stored once), however many; returns how many were stored. Tags, type, title and trust
    stay. An archived entity comes back, as a remember to it does."""
    now = now or timezone.now()
    entity = Entity.objects.get(pk=entity_id)
    stored = dedupe(_checked(observations), key=normalize_observation)
    before = [o.text for o in _ordered(entity)]
    fields: list[str] = []
    if _with_version(entity, before, stored, now):
        fields.append("metadata")
    Observation.objects.filter(entity=entity).delete()
    Entity.objects.observations_append(entity.pk, stored, now)
    if entity.status != Status.ACTIVE:
        entity.status = Status.ACTIVE
        fields.append("status")
    _saved(entity, now, fields)
    return len(stored)


@transaction.atomic
def observations_splice(
    *, entity_id: int, start: int, stop: int, text: str | None, now: datetime | None = None
) -> bool:
    """Observations `[start, stop)` (positions in id order) become `text`, one observation, or
    none when it is None; `start == stop` inserts `text` before position `start`.

    Untouched observations keep their rows. An edited text takes the first replaced row (and
    its date); an inserted one is appended and the rows after it are stored again behind it
    (same text and date, new ids), since id order is the order. A text the entity already
    holds outside the splice is not stored twice: an edit then merges into it, an insert
    changes nothing. Returns whether `text` was stored.
    """
    entity = Entity.objects.get(pk=entity_id)
    obs = _ordered(entity)
    replaced = obs[start:stop]
    if text is not None:
        text = _checked([text])[0]
        kept = {normalize_observation(o.text) for o in [*obs[:start], *obs[stop:]]}
        if normalize_observation(text) in kept:
            text = None
    if text is None and not replaced:
        return False  # nothing to insert, nothing to remove
    now = now or timezone.now()
    before = [o.text for o in obs]
    after = [*before[:start], *([text] if text is not None else []), *before[stop:]]
    fields = ["metadata"] if replaced and _with_version(entity, before, after, now) else []
    if text is None:
        Observation.objects.filter(pk__in=[o.pk for o in replaced]).delete()
    elif replaced:
        Observation.objects.filter(pk=replaced[0].pk).update(text=text)
        Observation.objects.filter(pk__in=[o.pk for o in replaced[1:]]).delete()
    else:
        tail = obs[start:]
        Entity.objects.observations_append(entity.pk, [text], now)
        Observation.objects.filter(pk__in=[o.pk for o in tail]).delete()
        Observation.objects.bulk_create(
            [Observation(entity=entity, text=o.text, created_at=o.created_at) for o in tail]
        )
    _saved(entity, now, fields)
    return text is not None


@transaction.atomic
def entity_rename(
    *,
    entity_id: int,
    name: str,
    namespace: NamespaceName | None = None,
    now: datetime | None = None,
) -> None:
    """Rename the entity to `name` and, when `namespace` differs from its own, move it there;
    reindexed under the new name. A name held by any other entity, archived included, is
    refused (OperationFailed) before anything changes."""
    name = _NAME.validate_python(name)
    entity = Entity.objects.get(pk=entity_id)
    holder = Entity.objects.filter(name=name).exclude(pk=entity.pk).first()
    if holder is not None:
        archived = " (archived)" if holder.status == Status.ARCHIVED else ""
        raise OperationFailed(
            f'the name "{name}" is already taken in namespace {holder.namespace!r}{archived}',
            field="name",
        )
    fields = ["name"]
    if namespace is not None and namespace != entity.namespace:
        entity.metadata = {**entity.metadata, "previous_namespace": entity.namespace}
        entity.namespace = namespace
        fields += ["namespace", "metadata"]
    entity.name = name
    _saved(entity, now or timezone.now(), fields)
