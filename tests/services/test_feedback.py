"""Citations and feedback feed recall's impact factor (graph/ops/feedback.py); reads never do."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.errors import InvalidInput
from graph.models import Entity, Outcome, SessionOutcome
from graph.ops.feedback import MAX_FEEDBACK_IDS, feedback_record, record_citations
from graph.ops.kit.operation import CallContext
from graph.ops.recall import access
from graph.ops.recall.access import flush_accesses
from graph.ops.registry import OPERATIONS
from graph.search.scoring import impact
from tests.helpers import CTX, names, recall, remember

pytestmark = pytest.mark.django_db

TWIN_TEXT = "the deploy script needs the staging credentials first"


def feedback(**payload: Any) -> dict[str, Any]:
    return OPERATIONS["feedback"].run(payload, CTX)


def id_of(name: str) -> int:
    return Entity.objects.get(name=name).pk


def counts(name: str) -> tuple[int, int]:
    entity = Entity.objects.get(name=name)
    return entity.recall_hits, entity.recall_misses


def impact_of(name: str) -> float:
    return impact(*counts(name))


def twins() -> tuple[int, int]:
    """Two memories with the same text (names of the same length, so bm25 ties them)."""
    remember("twin-a", TWIN_TEXT)
    remember("twin-b", TWIN_TEXT)
    return id_of("twin-a"), id_of("twin-b")


# --- ranking ---------------------------------------------------------------------------------


def test_two_memories_with_equal_text_rank_by_their_impact() -> None:
    a, b = twins()
    # Equal relevance: newest first, before any feedback.
    assert names(recall("deploy staging credentials")) == ["twin-b", "twin-a"]

    feedback(hits=[a])

    assert impact_of("twin-a") > impact_of("twin-b")
    assert names(recall("deploy staging credentials")) == ["twin-a", "twin-b"]

    # And back: misses pull a memory under its twin.
    feedback(misses=[a, a])  # one call counts a listed id once
    feedback(misses=[a])
    feedback(hits=[b])
    assert counts("twin-a") == (1, 2) and counts("twin-b") == (1, 0)
    assert names(recall("deploy staging credentials")) == ["twin-b", "twin-a"]


def test_impact_moves_with_citations_and_not_with_reads() -> None:
    a, b = twins()
    session = CallContext(source_host="test", session_id="s-reads")
    for _ in range(5):
        OPERATIONS["recall"].run({"query": "deploy staging"}, session)
        recall("staging credentials", session_id="s-other")
    recall()  # the recent listing
    OPERATIONS["export"].run({}, CTX)
    flush_accesses()
    # Reads counted accesses, and noted what each session was returned, but no hit or miss.
    assert Entity.objects.get(name="twin-a").access_count == 10
    assert counts("twin-a") == counts("twin-b") == (0, 0)
    assert set(SessionOutcome.objects.values_list("outcome", flat=True)) == {Outcome.RETURNED}
    assert names(recall("deploy staging credentials")) == ["twin-b", "twin-a"]

    # The session's citations: a cited, b returned and not cited.
    result = record_citations(f"Ran the staging step first, per [mem:{a}].", session_id="s-reads")

    assert result.hits == [a] and result.misses == [b]
    assert counts("twin-a") == (1, 0) and counts("twin-b") == (0, 1)
    assert names(recall("deploy staging credentials")) == ["twin-a", "twin-b"]


# --- the session rule ------------------------------------------------------------------------


def test_returned_and_not_cited_counts_as_a_miss_once_per_session() -> None:
    a, b = twins()
    recall("deploy", session_id="s1")

    first = feedback(session_id="s1")
    second = feedback(session_id="s1")

    assert first == {"hits": [], "misses": [a, b], "unchanged": [], "unknown": []}
    assert second == {"hits": [], "misses": [], "unchanged": [], "unknown": []}
    assert counts("twin-a") == counts("twin-b") == (0, 1)


def test_a_citation_after_the_settle_turns_the_miss_into_a_hit() -> None:
    a, _ = twins()
    recall("deploy", session_id="s1")
    feedback(session_id="s1")
    assert counts("twin-a") == (0, 1)

    result = feedback(hits=[a], session_id="s1")

    assert result["hits"] == [a]
    assert counts("twin-a") == (1, 0)
    assert feedback(hits=[a], session_id="s1")["unchanged"] == [a]  # once per session
    assert counts("twin-a") == (1, 0)


def test_a_miss_reported_for_a_memory_the_session_cited_is_ignored() -> None:
    a, _ = twins()
    feedback(hits=[a], session_id="s1")

    result = feedback(misses=[a], session_id="s1")

    assert result["unchanged"] == [a] and result["misses"] == []
    assert counts("twin-a") == (1, 0)


def test_a_citation_in_text_wins_over_a_miss_in_the_same_call() -> None:
    a, _ = twins()
    result = feedback(text=f"see [mem:{a}]", misses=[a])
    assert result["hits"] == [a] and result["misses"] == []
    assert counts("twin-a") == (1, 0)


def test_sessions_are_counted_apart() -> None:
    a, _ = twins()
    feedback(hits=[a], session_id="s1")
    feedback(hits=[a], session_id="s2")
    assert counts("twin-a") == (2, 0)


def test_without_a_session_each_call_counts_and_nothing_is_settled() -> None:
    a, _ = twins()
    recall("deploy", session_id="s1")
    feedback(hits=[a])
    feedback(hits=[a])
    assert counts("twin-a") == (2, 0) and counts("twin-b") == (0, 0)
    assert not SessionOutcome.objects.exclude(outcome=Outcome.RETURNED).exists()


def test_a_listing_is_not_returned_to_the_session() -> None:
    twins()
    recall(session_id="s1")  # no query: the recent listing
    assert feedback(session_id="s1")["misses"] == []


def test_feedback_is_not_a_write_of_the_memory() -> None:
    a, _ = twins()
    entity = Entity.objects.get(pk=a)
    feedback(hits=[a])
    after = Entity.objects.get(pk=a)
    assert (after.updated_at, after.last_accessed_at) == (entity.updated_at, None)


# --- input -----------------------------------------------------------------------------------


def test_unknown_ids_are_reported_and_the_rest_still_counts() -> None:
    a, _ = twins()
    result = feedback(hits=[a, 9999], misses=[8888])
    assert result == {"hits": [a], "misses": [], "unchanged": [], "unknown": [9999, 8888]}
    assert counts("twin-a") == (1, 0)


def test_an_id_in_hits_and_misses_is_refused_naming_misses() -> None:
    a, _ = twins()
    with pytest.raises(InvalidInput) as exc:
        feedback(hits=[a], misses=[a])
    assert exc.value.field == "misses"
    assert counts("twin-a") == (0, 0)


@pytest.mark.parametrize(
    "payload",
    [
        {"hits": list(range(1, MAX_FEEDBACK_IDS + 2))},
        {"misses": list(range(1, MAX_FEEDBACK_IDS + 2))},
        {"hits": ["1"]},  # ids are numbers, not strings
        {"hits": [0]},
        {"session_id": ""},
        {"session_id": "has space"},
        {"session_id": "x" * 129},
        {"hit": [1]},
    ],
)
def test_bad_input_is_refused(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        feedback(**payload)


def test_empty_feedback_without_a_session_counts_nothing() -> None:
    assert feedback() == {"hits": [], "misses": [], "unchanged": [], "unknown": []}


# --- citations in remember -------------------------------------------------------------------


def test_a_memory_citing_another_counts_a_hit_for_the_cited_one_not_itself() -> None:
    a, b = twins()
    out = remember("later", f"Reused the staging order [mem:{a}] and [MEM:{b}].")
    own = out["entityId"]

    remember("later", f"Still true [mem:{own}] [mem:{a}]")  # appending: cites itself and a

    assert out["cited"] == [a, b]
    assert counts("twin-a") == (2, 0) and counts("twin-b") == (1, 0)
    assert counts("later") == (0, 0)


def test_a_note_citing_a_memory_counts_it_once_per_session() -> None:
    a, _ = twins()
    session = CallContext(source_host="test", session_id="s1")
    for text in (f"Handoff\n\nFollowed [mem:{a}].", f"Handoff two\n\nAgain [mem:{a}]."):
        OPERATIONS["remember"].run({"note": text}, session)
    assert counts("twin-a") == (1, 0)


def test_text_already_stored_cites_nothing_again() -> None:
    a, _ = twins()
    remember("later", f"per [mem:{a}]")
    out = remember("later", f"per [mem:{a}]")  # a duplicate observation is not stored
    assert "cited" not in out
    assert counts("twin-a") == (1, 0)


def test_a_remember_does_not_settle_the_session() -> None:
    a, b = twins()
    recall("deploy", session_id="s1")
    remember("later", f"per [mem:{a}]", session_id="s1")
    assert counts("twin-b") == (0, 0)  # b is still only returned
    assert feedback(session_id="s1")["misses"] == [b]


def test_unknown_handles_in_a_remember_are_ignored() -> None:
    out = remember("later", "per [mem:424242] and [mem: the auth note]")
    assert "cited" not in out


def test_other_writers_copy_text_without_citing() -> None:
    a, _ = twins()
    OPERATIONS["learn"].run(
        {"error": f"ignored [mem:{a}]", "fix": "read it first", "project": False}, CTX
    )
    assert counts("twin-a") == (0, 0)


# --- the Stop hook's entry point --------------------------------------------------------------


def test_record_citations_counts_a_transcript_and_settles_the_session() -> None:
    a, b = twins()
    recall("deploy", session_id="claude-1")
    transcript = f"I used [mem:{a}] twice: [mem:{a}]. Nothing else. [mem:777]"

    result = record_citations(transcript, session_id="claude-1")

    assert (result.hits, result.misses, result.unknown) == ([a], [b], [777])
    assert counts("twin-a") == (1, 0) and counts("twin-b") == (0, 1)


def test_old_session_rows_are_pruned_when_a_session_settles() -> None:
    a, _ = twins()
    feedback(hits=[a], session_id="old")
    SessionOutcome.objects.update(updated_at=datetime(2000, 1, 1, tzinfo=UTC))
    feedback_record(hits=[], session_id="new")
    assert not SessionOutcome.objects.filter(session_id="old").exists()
    assert counts("twin-a") == (1, 0)  # the count stays; only the ledger row goes


def test_recalls_in_sessions_that_never_send_feedback_prune_the_ledger_too(monkeypatch) -> None:
    a, _ = twins()
    feedback(hits=[a], session_id="old")
    SessionOutcome.objects.update(updated_at=datetime(2000, 1, 1, tzinfo=UTC))
    monkeypatch.setattr(access, "_last_pruned_at", None)

    recall("deploy", session_id="s1")
    flush_accesses()

    assert set(SessionOutcome.objects.values_list("session_id", flat=True)) == {"s1"}
