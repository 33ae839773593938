"""Hybrid recall: what `retrieval` reports, how `match` labels each result, and what the vector
side finds that the keyword side cannot (spec: recall, "Retrieval metadata", "Provenance").

Semantic behaviour is tested with the default local model (MiniLM, no network), retrieval
reporting and provider calls with the deterministic embedder and the fake OpenAI server.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connections

from graph.embedding.local import LocalMiniLM
from graph.indexing import embedding_pass, generations
from graph.search.text import embedding_text
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.helpers import names, recall, remember
from tests.processes import free_port
from tests.vector_support import live, use_embedder, use_fake_openai

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]  # conftest's _clean_indexes

# Distractors and targets for the local model. Names are chosen so that no paraphrase query
# below shares a (stemmed) word with its target: those can only be found by meaning.
CORPUS = {
    "auth-token-signing": "We sign session tokens with RS256",
    "nightly-backups": "Postgres backups run nightly at 02:00 UTC to S3",
    "office-kitchen": "The office coffee machine is on the third floor",
    "frontend-styling": "Frontend styling uses Tailwind CSS utility classes",
    "release-pipeline": "Production deploys go through GitHub Actions on every merge to main",
    "first-day": "New hires get a laptop and accounts on their first day",
    "api-quota": "The public API allows 100 requests per minute per client",
    "log-retention": "Application logs are shipped to Loki and kept for 30 days",
    "pr-checklist": "Run the test suite with pytest before opening a pull request",
    "pets": "Dogs are allowed in the office on Fridays",
    "parking": "Visitor parking is behind building B",
}

# (query, target): the query shares no word with the target after stemming and stopwords.
PARAPHRASES = [
    ("where is the caffeine dispenser?", "office-kitchen"),
    ("throttling on our HTTP endpoints", "api-quota"),
    ("bringing animals to work", "pets"),
]


@pytest.fixture
def local_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """CORPUS remembered and embedded with the default local model."""
    use_embedder(monkeypatch, "local")
    for name, observation in CORPUS.items():
        remember(name, observation)
    report = embedding_pass.embed_pending()
    assert (report.embedded, report.error) == (len(CORPUS), None)


def retrieval(result: dict[str, Any]) -> tuple[str, bool]:
    return result["retrieval"]["mode"], result["retrieval"]["degraded"]


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in result["entities"]}


# --- retrieval reporting ---------------------------------------------------------------------


def test_without_an_embedder_recall_is_keyword_only_and_not_degraded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "none")
    remember("plain", "keyword only memory about walruses")

    result = recall("walruses")

    assert names(result) == ["plain"]
    assert retrieval(result) == ("fts", False)
    assert result["entities"][0]["match"]["source"] == "keyword"


def test_turning_embeddings_off_over_an_existing_index_is_not_degraded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Keyword-only is then the configured behaviour, not a failure.
    use_embedder(monkeypatch, "deterministic")
    remember("plain", "keyword only memory about walruses")
    assert embedding_pass.embed_pending().embedded == 1
    use_embedder(monkeypatch, "none")

    result = recall("walruses")

    assert names(result) == ["plain"]
    assert retrieval(result) == ("fts", False)


@pytest.mark.sqlite_only  # sqlite-vec failing to load
def test_missing_sqlite_vec_degrades_to_keyword_results(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("plain", "keyword only memory about walruses")
    assert embedding_pass.embed_pending().embedded == 1
    # As on a machine where the extension failed to load (core/db sets vec_error).
    monkeypatch.setattr(connections["default"], "vec_error", "simulated: no vec0 module")

    result = recall("walruses")

    assert names(result) == ["plain"]
    assert retrieval(result) == ("fts", True)


def test_with_vectors_built_recall_is_hybrid_and_not_degraded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("alpha", "walrus colony census")
    remember("beta", "penguin colony census")
    assert embedding_pass.embed_pending().embedded == 2

    # Two words: a one-word query this rare is answered keyword-only (test_rare_term_recall).
    result = recall("walrus colony")

    assert retrieval(result) == ("hybrid", False)
    assert names(result)[0] == "alpha"


def _failing_provider_cases() -> list[Any]:
    return [
        pytest.param({"fail": Reply(status=401)}, id="401"),
        # Retry-After 0: the embedder retries 5xx, but this test need not wait for it.
        pytest.param({"fail": Reply(status=500, headers={"Retry-After": "0"})}, id="500"),
        pytest.param({"unreachable": True}, id="unreachable-port"),
    ]


@pytest.mark.parametrize("failure", _failing_provider_cases())
def test_a_failing_provider_degrades_to_keyword_results(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer, failure: dict[str, Any]
) -> None:
    use_fake_openai(monkeypatch, embedding_server)
    remember("walrus-note", "walruses haul out on the ice")
    remember("other-note", "penguins nest on the rocks")
    assert embedding_pass.embed_pending().embedded == 2  # the live index is this provider's
    if "fail" in failure:
        embedding_server.fail_always = failure["fail"]
    else:
        use_fake_openai(
            monkeypatch, embedding_server, base_url=f"http://127.0.0.1:{free_port()}/v1"
        )

    result = recall("walruses haul")

    assert retrieval(result) == ("fts", True)
    assert names(result) == ["walrus-note"]
    assert result["entities"][0]["match"]["source"] == "keyword"


def test_a_live_index_of_another_provider_degrades(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("walrus-note", "walruses haul out on the ice")
    assert embedding_pass.embed_pending().embedded == 1
    use_fake_openai(monkeypatch, embedding_server)

    result = recall("walruses")

    assert retrieval(result) == ("fts", True)
    assert names(result) == ["walrus-note"]
    # The query is never embedded for an index it cannot be compared with.
    assert embedding_server.requests == []


def test_a_live_index_of_another_width_degrades(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("walrus-note", "walruses haul out on the ice")
    assert embedding_pass.embed_pending().embedded == 1
    use_embedder(monkeypatch, "deterministic", dimensions="256")

    result = recall("walruses")

    assert retrieval(result) == ("fts", True)
    assert names(result) == ["walrus-note"]


def test_a_provider_now_answering_another_width_degrades(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    # Same provider and model name (same identity), but the server's vectors changed width:
    # a query vector of the wrong width must not be searched against the live index.
    use_fake_openai(monkeypatch, embedding_server)
    remember("walrus-note", "walruses haul out on the ice")
    assert embedding_pass.embed_pending().embedded == 1
    assert live().dimensions == 384
    embedding_server.width = 256

    result = recall("walruses haul")

    assert retrieval(result) == ("fts", True)
    assert names(result) == ["walrus-note"]


# transaction=True: FTS5 records its row count (which says "memories exist") at commit.
@pytest.mark.django_db(transaction=True)
def test_memories_without_vectors_yet_degrade(monkeypatch: pytest.MonkeyPatch) -> None:
    # Memories written before embeddings were turned on: no index exists until the worker
    # (or `memesh embed`) builds one.
    remember("walrus-note", "walruses haul out on the ice")
    use_embedder(monkeypatch, "deterministic")

    result = recall("walruses")

    assert generations.live_generation() is None
    assert retrieval(result) == ("fts", True)
    assert names(result) == ["walrus-note"]


# --- provenance --------------------------------------------------------------------------------


@pytest.mark.usefixtures("local_corpus")
def test_a_result_found_only_by_meaning_is_labelled_semantic() -> None:
    query, target = PARAPHRASES[0]

    result = recall(query)

    assert retrieval(result) == ("hybrid", False)
    found = by_name(result)
    assert target in found, names(result)
    match = found[target]["match"]
    assert match["source"] == "semantic"
    # relevance of a semantic result is the cosine similarity itself, within 0..1.
    model = LocalMiniLM()
    doc, q = model.embed([embedding_text(target, None, [CORPUS[target]]), query])
    assert 0.0 < match["relevance"] <= 1.0
    assert match["relevance"] == pytest.approx(float(np.dot(doc, q)), abs=2e-3)
    # Nothing here shares a word with the query, so nothing may claim a keyword match.
    assert all(e["match"]["source"] == "semantic" for e in result["entities"])


@pytest.mark.usefixtures("local_corpus")
def test_keyword_hits_are_labelled_keyword_beside_semantic_ones() -> None:
    remember("pets-policy", "Cats and dogs may come along to the workplace")
    assert embedding_pass.embed_pending().embedded == 1

    # "Fridays" is a word of `pets`; nothing of `pets-policy` is in the query.
    result = recall("bringing animals to work on Fridays")

    found = by_name(result)
    assert found["pets"]["match"]["source"] == "keyword"
    assert 0.0 < found["pets"]["match"]["relevance"] <= 1.0
    assert found["pets-policy"]["match"]["source"] == "semantic"
    assert 0.0 < found["pets-policy"]["match"]["relevance"] < 1.0


# --- nothing searchable, and the listing -----------------------------------------------------


def test_a_query_with_nothing_searchable_returns_nothing_and_embeds_nothing(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_fake_openai(monkeypatch, embedding_server)
    remember("walrus-note", "walruses haul out on the ice")
    assert embedding_pass.embed_pending().embedded == 1
    embedding_server.requests.clear()
    # The wiring does reach the provider for a real query...
    assert retrieval(recall("walruses haul")) == ("hybrid", False)
    assert len(embedding_server.requests) == 1
    embedding_server.requests.clear()

    # ...but not for one with nothing searchable in it.
    for query in ("???", "@#$%"):
        result = recall(query)
        assert result["entities"] == [], query
        assert result["retrieval"]["mode"] == "fts"
    assert embedding_server.requests == []


def test_an_empty_query_lists_recent_memories_without_match_and_without_a_vector_call(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_fake_openai(monkeypatch, embedding_server)
    remember("older", "first memory")
    remember("newer", "second memory")
    assert embedding_pass.embed_pending().embedded == 2
    embedding_server.requests.clear()

    for result in (recall(), recall("")):
        assert names(result) == ["newer", "older"]
        assert all("match" not in e for e in result["entities"])
        assert retrieval(result) == ("fts", False)
    assert embedding_server.requests == []


def test_a_repeated_query_reuses_its_cached_embedding(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_fake_openai(monkeypatch, embedding_server)
    remember("walrus-note", "walruses haul out on the ice")
    assert embedding_pass.embed_pending().embedded == 1
    embedding_server.requests.clear()

    first = recall("where do walruses rest")
    second = recall("where do walruses rest")

    assert retrieval(first) == retrieval(second) == ("hybrid", False)
    assert names(first) == names(second) == ["walrus-note"]
    assert embedding_server.texts_sent() == ["where do walruses rest"]


# --- what the local model finds ----------------------------------------------------------------


@pytest.mark.usefixtures("local_corpus")
def test_acceptance_rs256_is_found_for_a_question_about_token_signing() -> None:
    result = recall("how are auth tokens signed?")

    assert retrieval(result) == ("hybrid", False)
    assert "auth-token-signing" in names(result)[:5]


@pytest.mark.usefixtures("local_corpus")
@pytest.mark.parametrize(("query", "target"), PARAPHRASES)
def test_a_paraphrase_sharing_no_word_is_found_in_the_top_five(query: str, target: str) -> None:
    result = recall(query)

    assert retrieval(result) == ("hybrid", False)
    assert target in names(result)[:5], names(result)


@pytest.mark.usefixtures("local_corpus")
def test_an_exact_keyword_match_stays_first_despite_semantic_neighbours() -> None:
    remember("metrics-retention", "Prometheus metrics are stored for two weeks")
    remember("trace-storage", "Distributed traces are sampled and stored in Tempo")
    assert embedding_pass.embed_pending().embedded == 2

    result = recall("how long do we keep observability data in Loki")

    assert names(result)[0] == "log-retention"
    assert result["entities"][0]["match"]["source"] == "keyword"
    # A neighbour did come in by meaning alone: the keyword hit had competition.
    assert by_name(result)["metrics-retention"]["match"]["source"] == "semantic"


# --- filters -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outside", "inside"),
    [
        pytest.param({"namespace": "personal"}, {"namespace": "team"}, id="namespace"),
        pytest.param({"tag": "project:office"}, {"tag": "project:pets"}, id="tag"),
    ],
)
@pytest.mark.usefixtures("local_corpus")
def test_filters_apply_to_semantic_results(outside: dict[str, str], inside: dict[str, str]) -> None:
    remember(
        "pets-policy",
        "Cats and dogs may come along to the workplace",
        namespace="team",
        tags=["project:pets"],
    )
    remember("office-hours", "The office opens at eight", tags=["project:office"])
    assert embedding_pass.embed_pending().embedded == 2
    query = "bringing animals to work"

    # Control: with the filter that admits it, the neighbour is found, and only by meaning.
    admitted = by_name(recall(query, **inside))
    assert admitted["pets-policy"]["match"]["source"] == "semantic"

    filtered = recall(query, **outside)
    assert "pets-policy" not in names(filtered)
    assert retrieval(filtered) == ("hybrid", False)


@pytest.mark.usefixtures("local_corpus")
def test_a_filtered_recall_finds_its_neighbour_behind_many_closer_ones_outside_the_filter() -> None:
    """The vector side searches the filter's scope: fifty closer memories outside the tag
    would otherwise take every neighbour slot (40) and leave the tagged one unfound."""
    for i in range(50):
        remember(f"animals-{i}", f"Animals may be brought to work on day {i} of the month")
    remember("pets-policy", "Cats and dogs may come along to the workplace", tags=["team:pets"])
    assert embedding_pass.embed_pending().embedded == 51

    result = recall("bringing animals to work", tag="team:pets")

    assert names(result) == ["pets-policy"]
    assert result["entities"][0]["match"]["source"] == "semantic"


# --- session context -------------------------------------------------------------------------


@pytest.mark.usefixtures("local_corpus")
def test_the_turn_next_to_the_keyword_match_outranks_an_unrelated_one_that_matches_as_well() -> (
    None
):
    """The answer of a conversation is often the turn after the one with the question's words.
    c2 and d2 say the same; only c2 follows the turn that matches the rest of the question
    (d2, written later, would win the tie)."""
    remember("c1", "Mel: what did you adopt from the shelter last spring?", tags=["conv:x"])
    remember("c2", "Caroline: a grey kitten called Luna", tags=["conv:x"])
    remember("d1", "Caroline: the bakery needs volunteers on weekends", tags=["conv:y"])
    remember("d2", "Caroline: a grey kitten called Luna", tags=["conv:y"])
    embedding_pass.embed_pending()

    ranked = names(recall("what did Caroline adopt from the shelter? Luna"))

    assert ranked.index("c2") < ranked.index("d2")
