"""The trust model's inputs: field types, limits and the descriptions every operation that
takes them shares (remember, supersede, observe, the peer tools)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from graph.ops.kit.fields import StrictInput, stripped_not_blank

INVALIDATION_TAGS = ("temporal", "paradigm", "architectural", "observational")
InvalidationTag = Literal["temporal", "paradigm", "architectural", "observational"]
KindName = Literal["semantic", "episodic"]
TrustName = Literal["fact", "hypothesis"]
MAX_SOURCE_CHARS = 500
MAX_CONDITION_CHARS = 2000
MAX_REASON_CHARS = 1000
MAX_TTL_HOURS = 24 * 365 * 10


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

# The provenance inputs, each declared once with its limits and description and taken as
# `name: <Field> = None` by every model that accepts it (remember, ProvenanceInput below), so
# their schemas cannot drift apart. Absent means "not given": each defaults to None.
SourceField = Annotated[SourceText | None, Field(description=SOURCE_HELP)]
ConfidenceField = Annotated[ConfidenceValue | None, Field(description=CONFIDENCE_HELP)]
InvalidationTagField = Annotated[InvalidationTag | None, Field(description=INVALIDATION_TAG_HELP)]
InvalidationConditionField = Annotated[
    ConditionText | None, Field(description=INVALIDATION_CONDITION_HELP)
]
KindField = Annotated[KindName | None, Field(description=KIND_HELP)]
ParentIdField = Annotated[MemoryId | None, Field(description=PARENT_ID_HELP)]
TtlHoursField = Annotated[TtlHours | None, Field(description=TTL_HOURS_HELP)]


class ProvenanceInput(StrictInput):
    """The provenance fields of a write that creates a memory (supersede, the peer's remember
    and supersede); remember declares the same fields in its own order."""

    source: SourceField = None
    confidence: ConfidenceField = None
    invalidation_tag: InvalidationTagField = None
    invalidation_condition: InvalidationConditionField = None
    kind: KindField = None
    ttl_hours: TtlHoursField = None
