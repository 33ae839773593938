"""feedback: which memories helped — the hits and misses behind recall's impact factor,

    impact = (hits + 1) / (hits + misses + 2)        (graph/search/scoring.py)

What counts (docs/recall.md, "Impact: hits and misses"):
- a hit: a memory cited back as `[mem:<id>]` (graph/search/citations.py) in text sent to
  memesh — a `remember`'s new observations, note or title; the `text` of a feedback call, such
  as the agent's replies the Stop hook reads (`record_citations`) — or listed in `hits`;
- a miss: a memory listed in `misses`, or one a recall returned to a session and the session
  had not cited when its citations were recorded (a feedback call; `record_citations`; not a
  `remember`, which happens mid-session).
Reads never count (DESIGN §5.2): recall only notes, per session, which memories it returned
(graph/ops/recall/access.py), and a session that never records citations leaves no misses.

With a session, a memory counts at most once per session, as a hit or a miss, kept in the
SessionOutcome ledger: a citation after the settle turns that session's miss into a hit
(misses −1, hits +1); a miss reported for a memory the session cited is ignored (a citation
wins, in one call as across calls); a repeated hit or miss changes nothing (`unchanged`). A
call without a session (REST and CLI calls naming no `session_id`) counts what it lists, once
per call. Ledger rows untouched for 30 days (access.OUTCOME_RETENTION) are pruned.

Ids are entity ids: the number in a handle, `id` in recall's results. An id that is no memory
is reported in `unknown`, not refused: a transcript may cite a memory that went away, and the
rest of the call must still count. An id in both `hits` and `misses` is refused
(validation.bad-body, field `misses`). Hits and misses stay on the entity (its recall_hits /
recall_misses, already read with recall's candidates); they are this install's usage, like
access counts, and do not travel in export bundles.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Annotated, Self

from django.db import transaction
from django.utils import timezone
from pydantic import Field, model_validator

from graph.models import Entity, Outcome, SessionOutcome
from graph.ops.kit.fields import (
    MAX_NOTE_CHARS,
    SESSION_ID_HELP,
    Output,
    SessionId,
    StrictInput,
    field_error,
)
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.ops.recall.access import OUTCOME_RETENTION, flush_accesses
from graph.search.citations import cited_ids

MAX_FEEDBACK_IDS = 100

# SQLite's largest integer: a bigger id is no memory, and the driver could not even bind it.
MAX_ENTITY_ID = 2**63 - 1
EntityId = Annotated[int, Field(ge=1, le=MAX_ENTITY_ID)]


class FeedbackInput(StrictInput):
    hits: list[EntityId] = Field(
        default_factory=list,
        max_length=MAX_FEEDBACK_IDS,
        description=(
            "Ids of memories that changed what you did (recall's `id`, the number in "
            f"`[mem:<id>]`); each counts as citing it would. At most {MAX_FEEDBACK_IDS}."
        ),
    )
    misses: list[EntityId] = Field(
        default_factory=list,
        max_length=MAX_FEEDBACK_IDS,
        description=(
            f"Ids of memories you were shown that were of no use. At most {MAX_FEEDBACK_IDS}; "
            "an id may not be in `hits` too."
        ),
    )
    text: Annotated[str, Field(max_length=MAX_NOTE_CHARS)] | None = Field(
        default=None,
        description=(
            "Text whose `[mem:<id>]` handles count as hits: what the agent wrote, such as its "
            "replies of a session — not the memory block it was shown, whose handles list "
            f"memories rather than cite them. At most {MAX_NOTE_CHARS} characters."
        ),
    )
    session_id: SessionId | None = Field(
        default=None,
        description=(
            f"{SESSION_ID_HELP} With a session, the memories recall returned to it and that "
            "it has not cited become misses."
        ),
    )

    @model_validator(mode="after")
    def _hit_or_miss(self) -> Self:
        both = [i for i in self.hits if i in set(self.misses)]
        if both:
            raise field_error("misses", f"{both[0]} is in `hits` too: a memory is a hit or a miss")
        return self


class FeedbackOutput(Output):
    hits: list[int] = Field(description="Memories this call counted as a hit.")
    misses: list[int] = Field(
        description=(
            "Memories this call counted as a miss: listed in `misses`, or returned to the "
            "session by recall and not cited."
        )
    )
    unchanged: list[int] = Field(
        description=(
            "Memories the session had already counted so (once per session; a citation wins "
            "over a miss)."
        )
    )
    unknown: list[int] = Field(description="Ids that are no memory: nothing was counted.")


def feedback_record(
    *,
    hits: Iterable[int],
    misses: Iterable[int] = (),
    session_id: str | None = None,
    settle: bool = True,
) -> FeedbackOutput:
    """Count `hits` and `misses` (the module docstring has the rule), and with `settle` turn
    what recall returned to the session and it did not cite into misses."""
    if settle and session_id is not None:
        # This process's recalls reach the ledger first: their returned rows are batched.
        flush_accesses()
    return _record(list(hits), list(misses), session_id, settle)


def record_citations(
    text: str,
    *,
    session_id: str | None = None,
    settle: bool = True,
    exclude: Collection[int] = (),
) -> FeedbackOutput:
    """Count every memory `text` cites as `[mem:<id>]` as a hit, except those in `exclude`
    (a memory does not cite itself), and settle the session unless told not to.

    The Stop hook hands the session's transcript here: pass the agent's own words, not the
    memory block injected into the session, whose handles are a listing, not citations.
    """
    cited = [i for i in cited_ids(text) if i not in exclude]
    if not cited and not (settle and session_id is not None):
        return FeedbackOutput(hits=[], misses=[], unchanged=[], unknown=[])  # nothing to count
    return feedback_record(hits=cited, session_id=session_id, settle=settle)


@transaction.atomic
def _record(
    hits: list[int], misses: list[int], session_id: str | None, settle: bool
) -> FeedbackOutput:
    now = timezone.now()
    hits = list(dict.fromkeys(hits))
    cited = set(hits)
    misses = [i for i in dict.fromkeys(misses) if i not in cited]  # a citation wins
    known = Entity.objects.existing_ids([*hits, *misses])
    unknown = [i for i in [*hits, *misses] if i not in known]
    hits = [i for i in hits if i in known]
    misses = [i for i in misses if i in known]

    counted_hits: list[int] = []
    counted_misses: list[int] = []
    unchanged: list[int] = []
    deltas: dict[int, tuple[int, int]] = {}
    if session_id is None:
        counted_hits, counted_misses = hits, misses
        deltas = {i: (1, 0) for i in hits} | {i: (0, 1) for i in misses}
    else:
        before = SessionOutcome.objects.outcomes_of(session_id, [*hits, *misses])
        outcomes: dict[int, str] = {}
        for i in hits:
            if before.get(i) == Outcome.HIT:
                unchanged.append(i)
                continue
            outcomes[i] = Outcome.HIT
            counted_hits.append(i)
            deltas[i] = (1, -1 if before.get(i) == Outcome.MISS else 0)
        for i in misses:
            if before.get(i) in (Outcome.HIT, Outcome.MISS):
                unchanged.append(i)
                continue
            outcomes[i] = Outcome.MISS
            counted_misses.append(i)
            deltas[i] = (0, 1)
        if settle:
            for i in SessionOutcome.objects.returned_ids(session_id):
                if i not in outcomes:
                    outcomes[i] = Outcome.MISS
                    counted_misses.append(i)
                    deltas[i] = (0, 1)
        SessionOutcome.objects.outcomes_set(session_id, outcomes, now)
        if settle:
            SessionOutcome.objects.prune(now - OUTCOME_RETENTION)
    Entity.objects.impact_add(deltas)
    return FeedbackOutput(
        hits=counted_hits, misses=counted_misses, unchanged=unchanged, unknown=unknown
    )


def _feedback(data: FeedbackInput, ctx: CallContext) -> FeedbackOutput:
    hits = [*data.hits, *(cited_ids(data.text) if data.text else [])]
    return feedback_record(hits=hits, misses=data.misses, session_id=ctx.session(data.session_id))


FEEDBACK = Operation(
    name="feedback",
    summary=(
        "Tell memesh which memories helped: `hits` changed what you did (as citing them "
        "[mem:id] does), `misses` were of no use. In a session, the memories recall returned "
        "and you did not cite count as misses. Recall ranks memories of equal relevance by "
        "this record (impact); reading a memory never changes it."
    ),
    input_model=FeedbackInput,
    output_model=FeedbackOutput,
    handler=_feedback,
    # Counts, not content; repeated without a session it counts again.
    hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    examples=[
        {"hits": [1], "session_id": "example-session"},
        {"text": "Kept JWT, as decided [mem:1].", "misses": [99], "session_id": "example-session"},
    ],
)
