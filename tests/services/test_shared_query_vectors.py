"""A recall query's embedding is shared by the processes of one database
(graph/storage/query_vectors.py, graph/indexing/query_cache.py): a query another process embedded
is not embedded again, the table holds no query text, and it keeps the newest rows only."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from django.utils import timezone

from graph.embedding import provider
from graph.indexing import embedding_pass, query_cache
from graph.models import QueryVector
from graph.storage import query_vectors
from tests.helpers import recall, remember
from tests.vector_support import use_embedder

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _deterministic(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    use_embedder(monkeypatch, "deterministic")
    yield
    query_cache.query_cache_clear()


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The texts the configured embedder was asked to embed (it still embeds them)."""
    asked: list[list[str]] = []
    embedder = provider.current()
    assert embedder is not None
    real = embedder.embed

    def counted(texts: Sequence[str]) -> np.ndarray:
        asked.append(list(texts))
        return real(texts)

    monkeypatch.setattr(embedder, "embed", counted)
    return asked


def _seed() -> None:
    remember("walrus-notes", "the walrus keeps its tusks clean")
    embedding_pass.embed_pending()


def test_a_query_embedded_once_is_not_embedded_again_by_a_fresh_process(
    embedded: list[list[str]],
) -> None:
    _seed()
    first = recall("walrus tusks")
    assert first["retrieval"]["mode"] == "hybrid"
    assert query_cache.flush_shared_query_vectors(force=True) == 1  # queued by that recall
    query_cache.query_cache_clear()  # what a process that never saw the query holds
    embedded.clear()

    again = recall("walrus tusks")

    assert embedded == []
    assert again["retrieval"]["mode"] == "hybrid"
    assert [e["name"] for e in again["entities"]] == [e["name"] for e in first["entities"]]


def _ranking(out: dict[str, object]) -> list[tuple[str, object]]:
    return [(e["name"], e["match"]) for e in out["entities"]]  # type: ignore[attr-defined]


def test_a_shared_vector_ranks_exactly_as_a_fresh_embedding(
    embedded: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The keyword candidates are weighed for fusion whichever way the query's vector came:
    # ranked without that weighing, partial matches would be scored as whole ones.
    monkeypatch.setattr(query_cache, "SHARE_AFTER_SECONDS", 0.0)
    remember("walrus-tusks", "the walrus keeps its tusks clean on the ice")
    remember("walrus-only", "a walrus sleeps")
    remember("tusks-only", "elephant tusks are ivory")
    remember("ice-only", "the ice shelf breaks in spring")
    embedding_pass.embed_pending()
    fresh = recall("walrus tusks ice")
    query_cache.query_cache_clear()
    embedded.clear()

    shared = recall("walrus tusks ice")

    assert embedded == []
    assert _ranking(shared) == _ranking(fresh)


def test_the_shared_row_is_the_vector_under_a_hash_not_the_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(query_cache, "SHARE_AFTER_SECONDS", 0.0)
    _seed()
    recall("walrus tusks")

    (row,) = QueryVector.objects.all()
    embedder = provider.current()
    assert embedder is not None
    expected = embedder.embed(["walrus tusks"])[0]
    assert len(row.key) == 64 and "walrus" not in row.key
    assert b"walrus" not in bytes(row.vector)
    assert np.allclose(np.frombuffer(bytes(row.vector), dtype=np.float32), expected)


def test_another_model_or_width_does_not_read_the_row(
    monkeypatch: pytest.MonkeyPatch, embedded: list[list[str]]
) -> None:
    monkeypatch.setattr(query_cache, "SHARE_AFTER_SECONDS", 0.0)
    _seed()
    recall("walrus tusks")
    embedder = provider.current()
    assert embedder is not None
    query_cache.query_cache_clear()

    monkeypatch.setattr(type(embedder), "identity", property(lambda self: "another/model"))
    assert query_cache.known_query_vector(embedder, "walrus tusks") is None
    monkeypatch.undo()
    assert query_cache.known_query_vector(embedder, "walrus tusks") is not None


def test_writes_wait_for_a_second_or_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_cache, "SHARE_AT_PENDING", 3)
    embedder = provider.current()
    assert embedder is not None
    query_cache.query_vector(embedder, "one", share=True)
    query_cache.query_vector(embedder, "two", share=True)
    assert query_cache.flush_shared_query_vectors() == 0  # under a second, under the batch
    query_cache.query_vector(embedder, "three", share=True)
    query_cache.query_vector(embedder, "three", share=True)  # a repeat from the cache: queued once

    assert query_cache.flush_shared_query_vectors() == 3
    assert QueryVector.objects.count() == 3
    assert query_cache.flush_shared_query_vectors(force=True) == 0


def test_the_table_keeps_the_newest_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(query_vectors, "MAX_ROWS", 3)
    start = timezone.now()
    for n in range(5):
        QueryVector.objects.store(
            [(f"{n:064d}", np.zeros(4, np.float32).tobytes())],
            start + timezone.timedelta(seconds=n),
        )

    assert sorted(QueryVector.objects.values_list("key", flat=True)) == [
        f"{n:064d}" for n in (2, 3, 4)
    ]


def test_a_missing_table_costs_an_embedding_not_the_recall(embedded: list[list[str]]) -> None:
    # A database a release behind (served with --no-migrate) has no table yet.
    from django.db import connection

    _seed()
    with connection.cursor() as cur:
        cur.execute("DROP TABLE graph_queryvector")  # rolled back with the test's transaction
    embedded.clear()

    out = recall("walrus tusks")

    assert out["retrieval"] == {"mode": "hybrid", "degraded": False, "truncated": False}
    assert [e["name"] for e in out["entities"]] == ["walrus-notes"]
    assert embedded == [["walrus tusks"]]
