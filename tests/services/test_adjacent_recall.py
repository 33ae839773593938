"""A hybrid recall brings in the turns around its best candidates (graph/ops/recall/adjacent.py,
docs/recall.md "Adjacent turns"): scored by their own similarity and lifted by the candidate
they stand next to, even when neither the keyword nor the vector side found them. Real SQLite,
the default local model."""

from __future__ import annotations

from typing import Any

import pytest

from graph.embedding import provider
from graph.indexing import embedding_pass, query_cache
from graph.models import Entity, EntityVector
from graph.search import fusion
from tests.helpers import recall, remember, restamp
from tests.vector_support import live, use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

# One conversation: the question's words are in "turn-shadow"; the turn before it holds the
# answer in other words, and the turn after it is small talk.
TURNS = [
    ("turn-garden", "Maria: The tomatoes in the garden finally turned red this week."),
    ("turn-adopted", "Maria: Last Tuesday I brought home a tiny pup from the rescue centre!"),
    ("turn-shadow", "Maria: Her name is Shadow, after the dark patch around her eye."),
    ("turn-later", "John: Alright, talk soon then."),
    ("turn-bike", "John: I rode forty miles on my bike along the coast on Sunday."),
]
QUESTION = "When did Maria adopt Shadow?"


def similarity(name: str) -> float:
    embedder = provider.current()
    assert embedder is not None
    query = query_cache.query_embedding(embedder, QUESTION).vector
    entity_id = Entity.objects.get(name=name).id
    return EntityVector.objects.similarities(live().generation, query, [entity_id])[entity_id]


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in result["entities"]}


@pytest.fixture
def conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "local")
    for name, text in TURNS:
        remember(name, text, tags=["conv:test"], source="chat log")
    remember("elsewhere", "Maria: a shadow fell across the porch.", tags=["conv:other"])
    assert embedding_pass.embed_pending().embedded == len(TURNS) + 1


def test_the_turns_around_the_best_candidate_join_the_results(conversation: None) -> None:
    # Too far in meaning to be a vector neighbour, and sharing no word with the question:
    # only its place next to the best candidate brings the small talk in.
    assert similarity("turn-later") < fusion.SEMANTIC_CUTOFF

    result = by_name(recall(QUESTION, tag="conv:test"))

    assert {"turn-shadow", "turn-adopted", "turn-later"} <= set(result)
    later = result["turn-later"]["match"]
    assert later["source"] == "semantic"
    assert later["relevance"] == pytest.approx(similarity("turn-later"), abs=1e-4)


def test_a_keyword_only_recall_brings_no_turn_in(
    conversation: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_embedder(monkeypatch, "none")

    result = recall(QUESTION, tag="conv:test")

    assert result["retrieval"]["mode"] == "fts"
    assert "turn-later" not in by_name(result)


def test_a_turn_the_recall_s_filters_drop_is_not_brought_in(conversation: None) -> None:
    restamp("turn-later", trust="hypothesis")

    result = by_name(recall(QUESTION, tag="conv:test", status="fact"))

    assert "turn-shadow" in result and "turn-later" not in result


# Another conversation: only "chat-asked" holds the question's words, so it is the one
# candidate (it holds all of them: no neighbour search runs) and the turns around it can join
# only through their place in the session.
RECIPE_TURNS = [
    ("chat-bike", "John: I rode forty miles on my bike along the coast on Sunday."),
    ("chat-weather", "Maria: The weather was lovely for it, I bet."),
    ("chat-asked", "John: Did you ever try that lemon cake recipe I sent you?"),
    ("chat-reply", "Maria: Not yet, this week was hectic."),
    ("chat-same-speaker", "John: No rush at all, whenever you have an evening free."),
    ("chat-farther", "Maria: Alright, talk soon then."),
]


@pytest.fixture
def recipe_conversation(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "local")
    for name, text in RECIPE_TURNS:
        remember(name, text, tags=["conv:friends"], source="chat log")
    assert embedding_pass.embed_pending().embedded == len(RECIPE_TURNS)


def test_the_turns_two_writes_around_the_best_candidate_join_and_no_farther(
    recipe_conversation: None,
) -> None:
    result = by_name(recall("lemon cake recipe", tag="conv:friends"))

    # Within fusion.SESSION_REACH (two writes) of the one candidate, before and after it: the
    # same speaker's turns in a dialogue. Three writes away is out of reach.
    assert set(result) == {
        "chat-bike",
        "chat-weather",
        "chat-asked",
        "chat-reply",
        "chat-same-speaker",
    }
    assert result["chat-asked"]["match"]["source"] == "keyword"
    assert result["chat-same-speaker"]["match"]["source"] == "semantic"


def test_the_turns_that_joined_are_the_ones_fusion_lifts_by_the_joined_weight(
    recipe_conversation: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, set[int]] = {}
    with_context = fusion.with_context

    def spy(*args: Any, **kwargs: Any) -> list[fusion.Fused]:
        seen["joined"] = set(kwargs.get("joined", ()))
        return with_context(*args, **kwargs)

    monkeypatch.setattr(fusion, "with_context", spy)
    recall("lemon cake recipe", tag="conv:friends")

    ids = dict(Entity.objects.values_list("id", "name"))
    # Every turn but the one candidate came in by its place alone.
    assert {ids[i] for i in seen["joined"]} == {
        "chat-bike",
        "chat-weather",
        "chat-reply",
        "chat-same-speaker",
    }
