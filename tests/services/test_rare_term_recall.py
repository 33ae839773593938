"""A one-word query whose word is in few memories is answered keyword-only, without embedding
the query (graph.search.fusion.vector_side_can_add, docs/recall.md "When the vector side is
not run"): every memory holding the word is a keyword candidate, so the vectors have nothing to
add. A common word, or a longer query, still runs hybrid. Real SQLite, the default local
model."""

from __future__ import annotations

from typing import Any

import pytest

from graph.embedding import provider
from graph.indexing import embedding_pass, query_cache
from graph.models import QueryVector
from graph.ops.recall.selector import MIN_CANDIDATES
from tests.helpers import recall, remember
from tests.vector_support import use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

RARE = {
    "kestrel-outage": "The kestrel proxy outage was traced to a stale DNS cache.",
    "kestrel-alarm": "After the kestrel fix we added an alarm on the cache TTL.",
}
# More memories holding "deploy" than a recall reads keyword candidates (MIN_CANDIDATES).
COMMON = MIN_CANDIDATES + 5


@pytest.fixture
def notes(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "local")
    for name, text in RARE.items():
        remember(name, text, tags=["team:ops"])
    for i in range(COMMON):
        remember(f"deploy-{i}", f"The deploy of build {i} went out to staging.", tags=["team:web"])
    assert embedding_pass.embed_pending().embedded == len(RARE) + COMMON
    query_cache.query_cache_clear()


def embedded(query: str) -> bool:
    """Whether this process, or the table processes share, holds the query's embedding."""
    embedder = provider.current()
    assert embedder is not None
    query_cache.flush_shared_query_vectors(force=True)
    return query_cache.known_query_embedding(embedder, query) is not None


def answer(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(e["name"], e["match"]) for e in result["entities"]]


def test_a_rare_exact_word_answers_as_keyword_only_without_embedding_the_query(
    notes: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = recall("kestrel")

    assert result["retrieval"] == {"mode": "fts", "degraded": False, "truncated": False}
    assert not embedded("kestrel")
    assert QueryVector.objects.count() == 0
    use_embedder(monkeypatch, "none")
    keyword_only = recall("kestrel")
    assert answer(result) == answer(keyword_only)
    assert {name for name, _ in answer(result)} == set(RARE)


def test_a_common_word_still_runs_hybrid(notes: None) -> None:
    result = recall("deploy")

    assert result["retrieval"]["mode"] == "hybrid"
    assert embedded("deploy")


def test_a_query_of_several_rare_words_still_runs_hybrid(notes: None) -> None:
    # Its memories need not hold the whole query: the vectors may find one by meaning.
    result = recall("kestrel outage")

    assert result["retrieval"]["mode"] == "hybrid"
    assert embedded("kestrel outage")


def test_a_rare_word_whose_memories_are_all_out_of_scope_asks_the_vectors(notes: None) -> None:
    # The keyword side finds nothing within the filter, so it did not find every memory the
    # recall keeps that holds the word: the vector side runs as it would have.
    result = recall("kestrel", tag="team:web")

    assert result["retrieval"]["mode"] == "hybrid"
    assert embedded("kestrel")
