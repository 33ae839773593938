"""The trust model (docs/trust.md): provenance and trust of every memory, and the rules that
keep confidence from being laundered.

- A memory with a `source` is a **fact**, one without is a **hypothesis** (the entity's
  `status`, active | archived, is a separate thing). `confidence` is an input, by default
  FACT_CONFIDENCE for a fact and HYPOTHESIS_CONFIDENCE for a hypothesis.
- A memory derived from others without a source of its own (a remember with `parent_id`, a
  supersede without `source`, an accepted dream digest or pattern) is a hypothesis, no more
  confident than the least confident of them, holding the union of their invalidation tags
  and conditions, one hop further from an observation, and never observed itself.
- Only `observe` raises trust: it re-stamps `last_observed_at`, raises confidence, and is the
  one path from hypothesis to fact, which needs a source. remember on an existing memory,
  import and accepting a proposal may add doubt (a lower confidence, a condition, a tag) but
  are refused (`trust.observe-required`) or ignored where they would raise it.
- `ttl_hours` sets `expires_at`: an expired memory is hidden from recall, briefing, export and
  memory_list unless a call asks for `include_expired`.

This module holds the rules and the `trust` block every read shows; the services call it and
own their writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, Field

from graph.errors import InvalidInput, ObserveRequired
from graph.models import (
    FACT_CONFIDENCE,
    HYPOTHESIS_CONFIDENCE,
    Entity,
    MemoryKind,
    TrustStatus,
)
from graph.ops.fields import ACTIVITY_TYPES, Output, stripped_not_blank

INVALIDATION_TAGS = ("temporal", "paradigm", "architectural", "observational")
InvalidationTag = Literal["temporal", "paradigm", "architectural", "observational"]
KindName = Literal["semantic", "episodic"]
TrustName = Literal["fact", "hypothesis"]
MAX_SOURCE_CHARS = 500
MAX_CONDITION_CHARS = 2000
MAX_REASON_CHARS = 1000
MAX_TTL_HOURS = 24 * 365 * 10
# A fact not observed for this long is shown as "unconfirmed since …" (the briefing's 30 days
# for an untouched decision, applied to observation).
STALE_AFTER_DAYS = 30
# What an observe without an explicit confidence adds (to at most 1.0).
OBSERVE_STEP = 0.1
MAX_HISTORY = 50  # trust_history keeps the latest events
HISTORY_KEY = "trust_history"
FORGOTTEN_KEY = "forgotten"
SUPERSEDED_BY_KEY = "superseded_by"


def one_line(value: str) -> str:
    """Whitespace collapsed: a condition is one line, so a union can hold one per line."""
    return " ".join(stripped_not_blank(value).split())


SourceText = Annotated[
    str, Field(min_length=1, max_length=MAX_SOURCE_CHARS), AfterValidator(stripped_not_blank)
]
ConditionText = Annotated[
    str, Field(min_length=1, max_length=MAX_CONDITION_CHARS), AfterValidator(one_line)
]
ReasonText = Annotated[
    str, Field(min_length=1, max_length=MAX_REASON_CHARS), AfterValidator(one_line)
]
ConfidenceValue = Annotated[float, Field(ge=0.0, le=1.0)]
TtlHours = Annotated[float, Field(gt=0, le=MAX_TTL_HOURS)]
MemoryId = Annotated[int, Field(ge=1)]

# The descriptions of the provenance inputs, shared by every operation that takes them.
SOURCE_HELP = (
    "Where this can be checked: a runbook, a file, a URL, a commit, the user's words. "
    "Presence makes the memory a fact (observed now); absence a hypothesis. On an existing "
    "memory only `observe` changes it."
)
CONFIDENCE_HELP = (
    "0-1. Default 1.0 for a fact, 0.5 for a hypothesis; a derivation is capped at its "
    "parent's. On an existing memory it may only be lowered (`observe` raises it)."
)
INVALIDATION_TAG_HELP = (
    "What kind of change would retire it: `temporal` (time passes), `paradigm` (the approach "
    "changes), `architectural` (the design changes) or `observational` (a new observation "
    "contradicts it)."
)
INVALIDATION_CONDITION_HELP = (
    "The test that would retire this memory, e.g. `delete if deploys move to a zero-downtime "
    f"reload`; at most {MAX_CONDITION_CHARS} characters, one line. A decision's `why` is used "
    "when none is given. On an existing memory it is added to the ones it has."
)
KIND_HELP = (
    "`semantic` (what holds) or `episodic` (what happened). Default: episodic for activity "
    "types (commit, session, ...), semantic otherwise."
)
PARENT_ID_HELP = (
    "Id of the memory this one is derived from. Without a `source` the new memory is a "
    "hypothesis one hop further (hop_count + 1), no more confident than its parent and "
    "holding its invalidation conditions. Only when the memory is created."
)
TTL_HOURS_HELP = (
    f"Lifetime in hours for a scratch note (at most {MAX_TTL_HOURS}); after it the memory is "
    "hidden from recall, briefing, export and memory_list unless they ask for "
    "`include_expired`. On an existing memory it restarts the clock from now."
)
INCLUDE_EXPIRED_HELP = "Also return memories whose `ttl_hours` has run out."


# --- the trust block every read shows -------------------------------------------------------


class TrustOutput(Output):
    status: TrustName = Field(
        description="`fact` (sourced and observed) or `hypothesis` (unsourced or derived)."
    )
    confidence: float = Field(description="0-1, the confidence recall's score uses.")
    source: str | None = Field(description="Where it can be checked; null when unsourced.")
    source_origin: Literal["local", "imported"] = Field(
        description="`imported` when it came (or was changed) by an import: someone else's "
        "graph, never injected into a briefing; `local` otherwise."
    )
    kind: KindName
    hop_count: int = Field(description="Derivation steps from an observation (0: observed).")
    parent_id: int | None = Field(description="The memory it was derived from, if any.")
    unattributable: bool = Field(
        description="True for a derived memory with no source of its own (hop_count > 0)."
    )
    last_observed_at: str | None = Field(
        description="ISO 8601 time of the last observation against its source; null: never."
    )
    observed_age_days: float | None = Field(
        description="Days since `last_observed_at`; null when never observed."
    )
    stale: bool = Field(
        description=f"A fact not observed for {STALE_AFTER_DAYS} days or more: re-check it."
    )
    unconfirmed_since: str | None = Field(
        description="For a hypothesis (since its last observation, else since it was stored) "
        "and a stale fact: the time it has been unconfirmed since; null for a fresh fact."
    )
    invalidation_tag: str | None = Field(
        description="temporal | paradigm | architectural | observational, comma-separated "
        "when derived from several; null for none."
    )
    invalidation_condition: str | None = Field(
        description="What would retire it (one condition per line when derived from several)."
    )
    expires_at: str | None = Field(description="ISO 8601 end of its `ttl_hours`; null: permanent.")
    expired: bool = Field(description="True once `expires_at` has passed.")


class TrustRow(Protocol):
    """What the trust block is computed from: a stored row's columns, times as ISO text."""

    @property
    def trust(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def source(self) -> str | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def hop_count(self) -> int: ...
    @property
    def parent_id(self) -> int | None: ...
    @property
    def last_observed_at(self) -> str | None: ...
    @property
    def expires_at(self) -> str | None: ...
    @property
    def created_at(self) -> str: ...
    @property
    def invalidation_tag(self) -> str: ...
    @property
    def invalidation_condition(self) -> str: ...
    @property
    def metadata(self) -> dict[str, Any]: ...


def parse_time(value: str) -> datetime:
    """An ISO 8601 time as stored rows hand it out (`…Z`, or naive UTC), made aware."""
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def source_origin(metadata: object) -> Literal["local", "imported"]:
    """`imported` for a memory an import created or changed (graph/ops/bundle_import.py's
    markers), `local` otherwise."""
    if not isinstance(metadata, dict):
        return "local"
    provenance = metadata.get("provenance")
    if (
        metadata.get("untrusted") is True
        or "import" in metadata
        or (isinstance(provenance, dict) and provenance.get("imported") is True)
    ):
        return "imported"
    return "local"


def is_stale(row: TrustRow, now: datetime) -> bool:
    if row.trust != TrustStatus.FACT:
        return False
    if row.last_observed_at is None:
        return True
    return now - parse_time(row.last_observed_at) >= timedelta(days=STALE_AFTER_DAYS)


def unconfirmed_since(row: TrustRow, now: datetime) -> str | None:
    """Since when a memory has stood unconfirmed: a hypothesis since its last observation (or
    its creation), a stale fact since its last observation; None for a fresh fact."""
    if row.trust == TrustStatus.HYPOTHESIS:
        return row.last_observed_at or row.created_at
    if is_stale(row, now):
        return row.last_observed_at or row.created_at
    return None


def unconfirmed_label(row: TrustRow, now: datetime) -> str | None:
    """The words every surface marks an unconfirmed memory with (briefing lines, the
    SessionStart block that renders the briefing, the review page): `hypothesis, unconfirmed
    since <date>` or, for a stale fact, `unconfirmed since <date>: re-check before relying`;
    None for a fresh fact."""
    since = unconfirmed_since(row, now)
    if since is None:
        return None
    date = since[:10]
    if row.trust == TrustStatus.HYPOTHESIS:
        return f"hypothesis, unconfirmed since {date}"
    return f"unconfirmed since {date}: re-check before relying"


def is_expired(expires_at: str | None, now: datetime) -> bool:
    return expires_at is not None and parse_time(expires_at) <= now


def iso_text(value: datetime | None) -> str | None:
    """A time as stored rows hand it out (graph/storage/documents.py): naive UTC + `Z`."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat() + "Z"


@dataclass(frozen=True, slots=True)
class _EntityRow:
    """An Entity's trust columns in TrustRow's shape."""

    trust: str
    confidence: float
    source: str | None
    kind: str
    hop_count: int
    parent_id: int | None
    last_observed_at: str | None
    expires_at: str | None
    created_at: str
    invalidation_tag: str
    invalidation_condition: str
    metadata: dict[str, Any]


def entity_trust(entity: Entity, now: datetime) -> TrustOutput:
    """The trust block of an Entity in hand (a write's answer)."""
    return trust_output(_entity_row(entity), now)


def entity_unconfirmed(entity: Entity, now: datetime) -> str | None:
    """unconfirmed_label of an Entity in hand."""
    return unconfirmed_label(_entity_row(entity), now)


def _entity_row(entity: Entity) -> _EntityRow:
    return _EntityRow(
        trust=entity.trust,
        confidence=entity.confidence,
        source=entity.source,
        kind=entity.kind,
        hop_count=entity.hop_count,
        parent_id=entity.parent_id,
        last_observed_at=iso_text(entity.last_observed_at),
        expires_at=iso_text(entity.expires_at),
        created_at=iso_text(entity.created_at) or "",
        invalidation_tag=entity.invalidation_tag,
        invalidation_condition=entity.invalidation_condition,
        metadata=entity.metadata if isinstance(entity.metadata, dict) else {},
    )


def trust_output(row: TrustRow, now: datetime) -> TrustOutput:
    age = (
        round((now - parse_time(row.last_observed_at)).total_seconds() / 86400, 2)
        if row.last_observed_at is not None
        else None
    )
    return TrustOutput.model_construct(
        status=row.trust,
        confidence=row.confidence,
        source=row.source,
        source_origin=source_origin(row.metadata),
        kind=row.kind,
        hop_count=row.hop_count,
        parent_id=row.parent_id,
        unattributable=row.source is None and row.hop_count > 0,
        last_observed_at=row.last_observed_at,
        observed_age_days=max(age, 0.0) if age is not None else None,
        stale=is_stale(row, now),
        unconfirmed_since=unconfirmed_since(row, now),
        invalidation_tag=row.invalidation_tag or None,
        invalidation_condition=row.invalidation_condition or None,
        expires_at=row.expires_at,
        expired=is_expired(row.expires_at, now),
    )


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
