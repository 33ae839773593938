"""What a write sets: a new memory's trust, a derivation's, the doubt a remember may add to
an existing memory (and the trust it may not raise), and the history of trust events."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from core.errors import InvalidInput
from graph.errors import ObserveRequired
from graph.models import FACT_CONFIDENCE, HYPOTHESIS_CONFIDENCE, Entity, MemoryKind, TrustStatus
from graph.ops.kit.fields import ACTIVITY_TYPES
from graph.ops.kit.trust.fields import INVALIDATION_TAGS

MAX_HISTORY = 50  # trust_history keeps the latest events
HISTORY_KEY = "trust_history"
FORGOTTEN_KEY = "forgotten"
SUPERSEDED_BY_KEY = "superseded_by"


# --- unions ---------------------------------------------------------------------------------


def union_tags(values: Iterable[str | None]) -> str:
    """Invalidation tags as one value: every tag named by any of them, in canonical order."""
    named = {t.strip() for value in values if value for t in value.split(",")}
    return ", ".join(t for t in INVALIDATION_TAGS if t in named)


def union_conditions(values: Iterable[str | None]) -> str:
    """Invalidation conditions as one value: each distinct line once, first seen first."""
    lines: list[str] = []
    for value in values:
        for line in (value or "").splitlines():
            if line.strip() and line not in lines:
                lines.append(line)
    return "\n".join(lines)


# --- what a write sets ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Requested:
    """The provenance inputs of one call (remember, supersede); None: not given."""

    source: str | None = None
    confidence: float | None = None
    invalidation_tag: str | None = None
    invalidation_condition: str | None = None
    kind: str | None = None
    parent_id: int | None = None
    ttl_hours: float | None = None

    @classmethod
    def of(cls, data: object) -> Requested:
        return cls(**{name: getattr(data, name, None) for name in cls.__slots__})


@dataclass(frozen=True, slots=True)
class Facets:
    """An entity's trust columns, as a write sets them."""

    trust: str
    confidence: float
    source: str | None
    invalidation_tag: str
    invalidation_condition: str
    kind: str
    parent_id: int | None
    hop_count: int
    last_observed_at: datetime | None
    expires_at: datetime | None
    # For the history event: the memories it was derived from.
    derived_from: tuple[int, ...] = ()

    def columns(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if name != "derived_from"}


def default_kind(type_: str) -> str:
    return MemoryKind.EPISODIC if type_ in ACTIVITY_TYPES else MemoryKind.SEMANTIC


def _expiry(ttl_hours: float | None, now: datetime) -> datetime | None:
    return now + timedelta(hours=ttl_hours) if ttl_hours is not None else None


def parent_of(parent_id: int | None) -> Entity | None:
    """The parent a call names, or NotFound-style InvalidInput naming `parent_id`."""
    if parent_id is None:
        return None
    parent = Entity.objects.filter(pk=parent_id).first()
    if parent is None:
        raise InvalidInput(f"parent_id: no memory with id {parent_id}", field="parent_id")
    return parent


def facets_for_new(
    requested: Requested, *, type_: str, why: str | None, parent: Entity | None, now: datetime
) -> Facets:
    """The trust of a memory a remember (or supersede) creates: a fact when sourced, else a
    hypothesis; an unsourced one with a parent is a derivation of it (module docstring)."""
    sourced = requested.source is not None
    condition = requested.invalidation_condition or (" ".join(why.split()) if why else "")
    confidence = requested.confidence
    if confidence is None:
        confidence = FACT_CONFIDENCE if sourced else HYPOTHESIS_CONFIDENCE
    hop_count = 0
    tag = requested.invalidation_tag or ""
    if parent is not None and not sourced:
        hop_count = parent.hop_count + 1
        confidence = min(confidence, parent.confidence)
        tag = union_tags([tag, parent.invalidation_tag])
        condition = union_conditions([condition, parent.invalidation_condition])
    return Facets(
        trust=TrustStatus.FACT if sourced else TrustStatus.HYPOTHESIS,
        confidence=confidence,
        source=requested.source,
        invalidation_tag=tag,
        invalidation_condition=condition,
        kind=requested.kind or default_kind(type_),
        parent_id=parent.pk if parent is not None else None,
        hop_count=hop_count,
        last_observed_at=now if sourced else None,
        expires_at=_expiry(requested.ttl_hours, now),
        derived_from=(parent.pk,) if parent is not None and not sourced else (),
    )


def facets_derived(sources: Sequence[Entity], *, type_: str) -> Facets:
    """The trust of a memory derived from `sources` with no source of its own (an accepted
    digest, pattern or transcript proposal): a hypothesis with the minimum confidence of its
    sources, the union of their invalidation tags and conditions, one hop further than the
    furthest, parent the first, never observed. With no source memories at all (a proposal
    mined from a transcript) it is a hypothesis at the default confidence, one hop out."""
    return Facets(
        trust=TrustStatus.HYPOTHESIS,
        confidence=min((s.confidence for s in sources), default=HYPOTHESIS_CONFIDENCE),
        source=None,
        invalidation_tag=union_tags(s.invalidation_tag for s in sources),
        invalidation_condition=union_conditions(s.invalidation_condition for s in sources),
        kind=default_kind(type_),
        parent_id=sources[0].pk if sources else None,
        hop_count=max((s.hop_count for s in sources), default=0) + 1,
        last_observed_at=None,
        expires_at=None,
        derived_from=tuple(s.pk for s in sources),
    )


def apply_to_existing(entity: Entity, requested: Requested, *, now: datetime) -> list[str]:
    """What a remember on an existing memory may change of its trust, set on `entity` (the
    caller saves the returned fields). Doubt may be added — a lower confidence, more tags and
    conditions, another kind, a new lifetime; trust may not be raised: a different source or
    a higher confidence is refused with `trust.observe-required` (observe is the path)."""
    if requested.source is not None and requested.source != entity.source:
        raise ObserveRequired(
            "source: a stored memory's source changes only by `observe` (with that source), "
            "the one path that raises trust; or `supersede` it with a new memory",
            field="source",
        )
    if requested.confidence is not None and requested.confidence > entity.confidence:
        raise ObserveRequired(
            f"confidence: {requested.confidence} is above the stored {entity.confidence}; only "
            "`observe` raises a memory's confidence",
            field="confidence",
        )
    if requested.parent_id is not None and requested.parent_id != entity.parent_id:
        raise InvalidInput(
            "parent_id: set only when a memory is created (supersede derives a new one)",
            field="parent_id",
        )
    fields: list[str] = []
    if requested.confidence is not None and requested.confidence < entity.confidence:
        entity.confidence = requested.confidence
        fields.append("confidence")
    tag = union_tags([entity.invalidation_tag, requested.invalidation_tag])
    if tag != entity.invalidation_tag:
        entity.invalidation_tag = tag
        fields.append("invalidation_tag")
    condition = union_conditions([entity.invalidation_condition, requested.invalidation_condition])
    if condition != entity.invalidation_condition:
        entity.invalidation_condition = condition
        fields.append("invalidation_condition")
    if requested.kind is not None and requested.kind != entity.kind:
        entity.kind = requested.kind
        fields.append("kind")
    if requested.ttl_hours is not None:
        entity.expires_at = _expiry(requested.ttl_hours, now)
        fields.append("expires_at")
    return fields


# --- history ----------------------------------------------------------------------------------


def with_event(
    metadata: dict[str, Any], action: str, at: datetime, **details: Any
) -> dict[str, Any]:
    """`metadata` with one more `trust_history` event ({at, action, ...details without
    Nones}), the latest MAX_HISTORY kept: what memory_list shows as a memory's history."""
    event = {"at": at.astimezone(UTC).isoformat(), "action": action}
    event.update({key: value for key, value in details.items() if value is not None})
    history = [*metadata.get(HISTORY_KEY, []), event][-MAX_HISTORY:]
    return {**metadata, HISTORY_KEY: history}


def created_event(facets: Facets) -> dict[str, Any]:
    """The details of a memory's first history event."""
    return {
        "status": facets.trust,
        "confidence": facets.confidence,
        "source": facets.source,
        "derived_from": list(facets.derived_from) or None,
    }
