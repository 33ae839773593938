"""Late interaction in the recall path (graph/search/late_interaction.py, docs/recall.md): the
worker stores each memory's pieces with its vector, the query's pieces travel with its shared
embedding, and recall re-orders the head of the hybrid ranking only when every memory in it
has its pieces. Real SQLite, the default local model."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np
import pytest
from django.apps import apps
from django.utils import timezone

from graph.embedding import provider
from graph.indexing import embedding_pass, generations, query_cache
from graph.models import Entity, EntityVector, MetaEntry, QueryVector
from graph.search import late_interaction as li
from tests.helpers import names, recall, remember
from tests.vector_support import live, use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

migration = importlib.import_module("graph.migrations.0007_vector_pieces")

# Five turns of one conversation. The question shares "pottery" with two of them and "kids"
# with another; the turn that answers it holds both, and so does one that repeats them. They
# are written in this order: the sign-up turn is within the answer's session reach
# (fusion.SESSION_REACH) and the repeating one is not, so before late interaction the session
# context keeps the sign-up turn above the one that repeats the question's words.
TURNS = {
    "turn-pottery-sign-up": "Melanie: I signed up for a pottery class at the community centre.",
    "turn-kids-pottery": "Melanie: I took my kids to pottery on Saturday, they made little bowls.",
    "turn-kids-park": "Melanie: The kids love the park near our house.",
    "turn-guitar": "Caroline: I bought a new guitar for the band and we played on Friday.",
    "turn-again": ("Melanie: the kids and pottery again; pottery with kids is what Melanie does."),
}
QUESTION = "When did Melanie take her kids to pottery?"


@pytest.fixture
def turns(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    use_embedder(monkeypatch, "local")
    for name, text in TURNS.items():
        remember(name, text, tags=["conv:test"])
    assert embedding_pass.embed_pending().embedded == len(TURNS)
    return dict(Entity.objects.filter(name__in=TURNS).values_list("name", "id"))


def test_the_worker_stores_each_memory_s_pieces_beside_its_vector(turns: dict[str, int]) -> None:
    pieces = EntityVector.objects.pieces_of(live().generation, list(turns.values()))

    assert set(pieces) == set(turns.values())
    assert all(len(blob) > 0 and len(blob) % li.DIMS == 0 for blob in pieces.values())


def test_an_embedder_without_pieces_stores_none_and_leaves_the_ranking_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("walrus", "the walrus keeps its tusks clean")
    embedding_pass.embed_pending()

    assert EntityVector.objects.filter(pieces__isnull=False).count() == 0
    result = recall("walrus tusks")
    assert (names(result), result["retrieval"]["mode"]) == (["walrus"], "hybrid")


def _hybrid_order(query: str, ids: dict[str, int]) -> list[str]:
    """recall's order with the pieces of every memory withheld (the ranking before this)."""
    gen = live().generation
    saved = dict(EntityVector.objects.filter(generation=gen).values_list("entity_id", "pieces"))
    EntityVector.objects.filter(generation=gen).update(pieces=None)
    try:
        return names(recall(query, tag="conv:test"))
    finally:
        for entity_id, blob in saved.items():
            EntityVector.objects.filter(generation=gen, entity_id=entity_id).update(pieces=blob)


def test_recall_reorders_the_hybrid_head_by_late_interaction(turns: dict[str, int]) -> None:
    before = _hybrid_order(QUESTION, turns)
    after = names(recall(QUESTION, tag="conv:test"))

    assert after != before
    assert after[0] == before[0] == "turn-kids-pottery"
    # The turn holding every word of the question passes the one holding two of them.
    assert after.index("turn-again") < after.index("turn-pottery-sign-up")
    assert before.index("turn-again") > before.index("turn-pottery-sign-up")
    assert sorted(after) == sorted(before)  # the same memories, only their order moves


# Seven turns holding "Melanie", "kids", "pottery" and "class", and one of them also "take":
# a tie on their words for six of them and the answer, written first (the oldest of a tie ranks
# last). Only the answer says the kids went.
TIED_TURNS = {
    "answer": (
        "Melanie: Last Saturday I took my two kids to their first pottery class; they made bowls."
    ),
    "d1": "Caroline: Melanie, is the pottery class for kids any good?",
    "d2": "Melanie: The kids keep asking about a pottery class.",
    "d3": "Caroline: My cousin runs a pottery class, Melanie, no kids allowed.",
    "d4": "Melanie: Pottery class prices for kids are silly.",
    "d5": "Caroline: Melanie said the kids might hate a pottery class.",
    "d6": "Melanie: A pottery class for kids? Maybe next year.",
    "d7": "Caroline: Take the kids to a pottery class, Melanie, take them.",
}
TIED_QUESTION = "When did Melanie take her kids to pottery class?"


def test_the_lift_brings_a_memory_from_below_the_head_into_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "local")
    for name, text in TIED_TURNS.items():
        remember(name, text, tags=["conv:test"])
    assert embedding_pass.embed_pending().embedded == len(TIED_TURNS)

    lifted = names(recall(TIED_QUESTION, tag="conv:test"))
    monkeypatch.setattr(li, "LIFT_MIN_COVERAGE", 2.0)  # the control: no lift
    unlifted = names(recall(TIED_QUESTION, tag="conv:test"))

    # The re-order of the first DEPTH cannot reach it; the lift over LIFT_DEPTH does.
    assert "answer" not in unlifted[: li.DEPTH]
    assert "answer" in lifted[: li.DEPTH]
    assert lifted[0] == unlifted[0] == "d7"  # it holds every word: the lift breaks ties only


def test_a_memory_without_pieces_in_the_head_keeps_the_hybrid_order(
    turns: dict[str, int],
) -> None:
    before = _hybrid_order(QUESTION, turns)
    # One memory rewritten: its new vector (and pieces) are not computed yet.
    EntityVector.objects.filter(entity_id=turns["turn-kids-park"]).update(pieces=None)

    assert names(recall(QUESTION, tag="conv:test")) == before


def test_the_query_s_pieces_are_shared_with_its_embedding(turns: dict[str, int]) -> None:
    recall(QUESTION, tag="conv:test")
    embedder = provider.current()
    assert embedder is not None
    computed = query_cache.query_embedding(embedder, QUESTION)
    assert query_cache.flush_shared_query_vectors(force=True) == 1
    query_cache.query_cache_clear()  # a process that never saw the query

    shared = query_cache.known_query_embedding(embedder, QUESTION)

    assert shared is not None
    np.testing.assert_array_equal(shared.vector, computed.vector)
    assert shared.pieces == computed.pieces != b""


def test_a_query_shared_before_pieces_existed_is_embedded_again(turns: dict[str, int]) -> None:
    embedder = provider.current()
    assert embedder is not None
    vector = query_cache.query_embedding(embedder, QUESTION).vector
    query_cache.query_cache_clear()
    key = query_cache._shared_key(embedder, QUESTION)
    QueryVector.objects.store([(key, vector.astype(np.float32).tobytes())], timezone.now())

    assert query_cache.known_query_embedding(embedder, QUESTION) is None
    assert names(recall(QUESTION, tag="conv:test"))[0] == "turn-kids-pottery"


def test_the_migration_has_the_local_model_s_vectors_computed_again(
    turns: dict[str, int],
) -> None:
    gen = live().generation
    EntityVector.objects.filter(generation=gen).update(pieces=None)  # as stored before 0007
    hashes = EntityVector.objects.hashes(gen)

    migration.recompute_local_vectors(apps, None)

    assert set(EntityVector.objects.hashes(gen).values()) == {""}
    assert EntityVector.objects.pending_count(gen) == len(TURNS)
    assert names(recall("pottery", tag="conv:test"))  # the old vectors still answer meanwhile
    assert embedding_pass.embed_pending().embedded == len(TURNS)
    assert EntityVector.objects.hashes(gen) == hashes
    assert len(EntityVector.objects.pieces_of(gen, list(turns.values()))) == len(TURNS)


def test_the_migration_leaves_another_provider_s_vectors_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("walrus", "the walrus keeps its tusks clean")
    embedding_pass.embed_pending()
    marker = MetaEntry.objects.get(key=generations.LIVE_KEY).value
    assert marker["provider"] == "deterministic"
    hashes = EntityVector.objects.hashes(live().generation)

    migration.recompute_local_vectors(apps, None)

    assert EntityVector.objects.hashes(live().generation) == hashes


# Six memories of generated engineering notes: each holds two or three made-up words no other
# holds, amid common ones. A query of a made-up word and two common words is answered by the
# one memory holding all three; late interaction alone read the common words of others closer
# and moved them above it.
RARE_WORDS = json.loads((Path(__file__).parents[1] / "fixtures/recall/rare_words.json").read_text())


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        ("login postmortem zetpymkelkel", "security-note-41"),
        ("quolorpvex avoid never", "perf-commit-482"),
    ],
)
def test_a_memory_holding_a_word_no_other_holds_is_not_moved_below_others(
    monkeypatch: pytest.MonkeyPatch, query: str, answer: str
) -> None:
    use_embedder(monkeypatch, "local")
    for name, memory in RARE_WORDS.items():
        remember(name, *memory["observations"], type=memory["type"])
    assert embedding_pass.embed_pending().embedded == len(RARE_WORDS)

    assert names(recall(query))[0] == answer
