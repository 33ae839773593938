"""The `trust` block every read shows, and the words every surface marks an unconfirmed
memory with."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol

from pydantic import Field

from graph.models import Entity, TrustStatus
from graph.ops.kit.fields import Output
from graph.ops.kit.trust.fields import KindName, TrustName

# A fact not observed for this long is shown as "unconfirmed since …" (the briefing's 30 days
# for an untouched decision, applied to observation).
STALE_AFTER_DAYS = 30


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
    """`imported` for a memory an import created or changed (graph/ops/bundle/importer.py's
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


# Plain strings (TrustStatus values): comparing against the enum members costs more than the
# rest of a trust block, which every result of every read builds.
_FACT = TrustStatus.FACT.value
_HYPOTHESIS = TrustStatus.HYPOTHESIS.value
_STALE_AFTER = timedelta(days=STALE_AFTER_DAYS)


def _stale(trust: str, observed: datetime | None, now: datetime) -> bool:
    return trust == _FACT and (observed is None or now - observed >= _STALE_AFTER)


def _observed(row: TrustRow) -> datetime | None:
    return parse_time(row.last_observed_at) if row.last_observed_at is not None else None


def is_stale(row: TrustRow, now: datetime) -> bool:
    return _stale(row.trust, _observed(row), now)


def _since(row: TrustRow, stale: bool) -> str | None:
    if row.trust == _HYPOTHESIS or stale:
        return row.last_observed_at or row.created_at
    return None


def unconfirmed_since(row: TrustRow, now: datetime) -> str | None:
    """Since when a memory has stood unconfirmed: a hypothesis since its last observation (or
    its creation), a stale fact since its last observation; None for a fresh fact."""
    return _since(row, is_stale(row, now))


def unconfirmed_label(row: TrustRow, now: datetime) -> str | None:
    """The words every surface marks an unconfirmed memory with (briefing lines, the
    SessionStart block that renders the briefing, the review page): `hypothesis, unconfirmed
    since <date>` or, for a stale fact, `unconfirmed since <date>: re-check before relying`;
    None for a fresh fact."""
    since = unconfirmed_since(row, now)
    if since is None:
        return None
    date = since[:10]
    if row.trust == _HYPOTHESIS:
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
    observed = _observed(row)
    age = round((now - observed).total_seconds() / 86400, 2) if observed is not None else None
    stale = _stale(row.trust, observed, now)
    # model_construct: every value comes typed from the row (as entity_outputs builds its own).
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
        stale=stale,
        unconfirmed_since=_since(row, stale),
        invalidation_tag=row.invalidation_tag or None,
        invalidation_condition=row.invalidation_condition or None,
        expires_at=row.expires_at,
        expired=is_expired(row.expires_at, now),
    )
