"""One entry of an imported bundle, and what makes it valid: checked in full before the
chunk it belongs to is written (graph/ops/bundle/importer.py)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from graph.ops.kit.fields import (
    MAX_TITLE,
    Name,
    NamespaceName,
    ObservationText,
    TagName,
    TypeName,
    valid_text,
)
from graph.ops.kit.trust.fields import INVALIDATION_TAGS, ConfidenceValue, KindName, SourceText
from graph.ops.kit.trust.view import parse_time

MAX_ENTRY_ITEMS = 10_000  # an entity accumulates observations over many remembers
# A version export writes is three levels deep ({at, observations: [...]}); the bound keeps
# an entry's metadata within what the JSON encoder can write without recursing too deep.
MAX_HISTORY_DEPTH = 16
# A derived memory's conditions are a union, one per line: room for several of them.
MAX_CONDITION_UNION_CHARS = 20_000


def _title(value: str | None) -> str | None:
    """Blank means "says nothing"; over-long is truncated: one row must not cost the bundle."""
    if value is None or not valid_text(value).strip():
        return None
    return value.strip()[:MAX_TITLE]


def _storable_history(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Version history is kept as data, so it is checked as data: what SQLite's JSON accepts
    (no NaN or infinity) and an export can write back out (valid Unicode, bounded depth).
    Unchecked, a lone surrogate here was stored and then failed every later export."""
    stack: list[tuple[object, int]] = [(versions, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_HISTORY_DEPTH:
            raise ValueError(f"must be nested at most {MAX_HISTORY_DEPTH} levels deep")
        if isinstance(value, str):
            valid_text(value)
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must hold finite numbers only (JSON has no NaN or Infinity)")
        elif isinstance(value, dict):
            stack.extend((key, depth) for key in value)
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
    return versions


class _EntryRelation(BaseModel):
    # `from` is ignored: the entry holding the relation is its source.
    model_config = ConfigDict(extra="ignore", strict=True)
    to: Name
    type: TypeName


def _tags(value: str | None) -> str | None:
    if value is None:
        return None
    named = [t.strip() for t in value.split(",") if t.strip()]
    unknown = [t for t in named if t not in INVALIDATION_TAGS]
    if unknown:
        raise ValueError(f"must be among {', '.join(INVALIDATION_TAGS)} (got {unknown[0]!r})")
    return ", ".join(named) or None


def _time(value: str | None) -> str | None:
    """An ISO 8601 time (kept as text; the import parses it with parse_time)."""
    if value is None:
        return None
    try:
        parse_time(valid_text(value))
    except ValueError:
        raise ValueError("must be an ISO 8601 time") from None
    return value


def _condition(value: str | None) -> str | None:
    return None if value is None or not valid_text(value).strip() else value.strip()


class EntryTrust(BaseModel):
    """An entry's provenance as export writes it (graph/ops/bundle/exporter.py). `status` is
    not read: an entry is a fact only when it carries a `source` (docs/trust.md)."""

    model_config = ConfigDict(extra="ignore", strict=True)
    source: SourceText | None = None
    confidence: ConfidenceValue | None = None
    invalidation_tag: Annotated[str | None, AfterValidator(_tags)] = None
    invalidation_condition: Annotated[
        str | None, Field(max_length=MAX_CONDITION_UNION_CHARS), AfterValidator(_condition)
    ] = None
    kind: KindName | None = None
    hop_count: Annotated[int, Field(ge=0, le=1000)] = 0
    last_observed_at: Annotated[str | None, AfterValidator(_time)] = None
    expires_at: Annotated[str | None, AfterValidator(_time)] = None


class EntryOrigin(BaseModel):
    """What an import from another program's files (graph/ops/foreign/) keeps of the record it
    read: where it came from and the source's own times, archived state and counters. Read
    only when bundle_import is called with `foreign=True`: a bundle file cannot set it."""

    model_config = ConfigDict(extra="forbid")
    source: Annotated[str, Field(max_length=2000)]  # `import:<format>:<path>`
    place: Annotated[str, Field(max_length=2000)]  # the file, and its line or row
    created_at: datetime | None = None
    updated_at: datetime | None = None
    archived: bool = False
    access_count: Annotated[int, Field(ge=0)] = 0
    last_accessed_at: datetime | None = None
    recall_hits: Annotated[int, Field(ge=0)] = 0
    recall_misses: Annotated[int, Field(ge=0)] = 0
    extra: dict[str, Any] = Field(default_factory=dict)  # kept as metadata.foreign


class BundleEntry(BaseModel):
    """One entry of an imported bundle. Unknown keys are ignored (bundles of other versions
    carry ids, timestamps, ...); the fields that are used are checked as strictly as
    remember checks them."""

    model_config = ConfigDict(extra="ignore", strict=True)
    name: Name
    type: TypeName
    title: Annotated[str | None, AfterValidator(_title)] = None
    namespace: NamespaceName | None = None
    observations: list[ObservationText] = Field(default_factory=list, max_length=MAX_ENTRY_ITEMS)
    tags: list[TagName] = Field(default_factory=list, max_length=MAX_ENTRY_ITEMS)
    relations: list[_EntryRelation] = Field(default_factory=list, max_length=MAX_ENTRY_ITEMS)
    # Earlier versions (`replace`, import overwrite) as export writes them; kept as data.
    replaced_history: Annotated[
        list[dict[str, Any]],
        Field(max_length=MAX_ENTRY_ITEMS),
        AfterValidator(_storable_history),
    ] = Field(default_factory=list)
    trust: EntryTrust | None = None
    origin: EntryOrigin | None = None
