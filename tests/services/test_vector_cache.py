"""The coarse vector search: sqlite-vec on a process's first search, then the in-process copy
of the sign bits, kept current by the rows written since — both re-scored from stored floats."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from django.db import transaction
from django.utils import timezone

from graph.embedding.deterministic import DeterministicEmbedder
from graph.indexing import embedding_pass, generations
from graph.models import EntityVector
from graph.storage import vector_cache
from graph.storage.vector_cache import coarse_candidates, sign_bits
from tests.helpers import forget, remember
from tests.vector_support import entity_id, live, reset_index_tables, use_embedder

# The process's copy of SQLite's sign bits.
pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_only]


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    reset_index_tables()
    vector_cache.forget_copies()
    use_embedder(monkeypatch, "deterministic")
    yield
    vector_cache.forget_copies()
    reset_index_tables()


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _hamming_order(stored: dict[int, np.ndarray], query: np.ndarray) -> list[tuple[int, int]]:
    """(distance, entity id) by an independent bit count of sign disagreements."""
    return sorted((int(np.sum((v > 0) != (query > 0))), i) for i, v in stored.items())


def test_sign_bits_pack_each_sign_into_64_bit_words() -> None:
    v = np.zeros((1, 384), dtype=np.float32)
    v[0, 0] = 1.0  # the first dimension is the highest bit of the first byte
    bits = sign_bits(v)
    assert bits.dtype == np.uint64 and bits.shape == (1, 6)
    assert np.unpackbits(bits.view(np.uint8))[0] == 1
    assert int(np.bitwise_count(bits).sum()) == 1


def test_the_first_search_asks_sqlite_vec_and_later_ones_use_the_copy() -> None:
    remember("a", "alpha notes")
    embedding_pass.embed_pending()
    gen = live()
    query = DeterministicEmbedder().embed(["alpha"])[0]

    assert coarse_candidates(gen.generation, gen.created_at, query, 10) is None
    assert coarse_candidates(gen.generation, gen.created_at, query, 10) == [entity_id("a")]
    # A rebuilt generation of the same number is another space: first search again.
    assert coarse_candidates(gen.generation, "another", query, 10) is None


def _random_vectors(
    n: int, seed: int
) -> tuple[generations.Generation, dict[int, np.ndarray], np.ndarray]:
    """n memories whose stored vectors are random unit vectors: (live generation, vectors by
    entity id, a random query). The copy is not built yet (sqlite-vec answers first)."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        remember(f"m{i}", f"memory {i}")
    embedding_pass.embed_pending()
    gen = live()
    ids = [entity_id(f"m{i}") for i in range(n)]
    stored = dict(zip(ids, _unit(rng, n), strict=True))
    with transaction.atomic():
        EntityVector.objects.store(
            gen.generation, [(i, "h", v) for i, v in stored.items()], timezone.now()
        )
    return gen, stored, _unit(rng, 1)[0]


def _assert_nearest(got: list[int] | None, order: list[tuple[int, int]], k: int) -> None:
    """`got` holds k ids at most as far as the k-th of `order` ((distance, id), nearest first)
    and every id nearer than that; ties at the cut may go either way."""
    cut = order[k - 1][0]
    assert got is not None and len(got) == k
    distances = dict((i, d) for d, i in order)
    assert all(i in distances and distances[i] <= cut for i in got)
    assert {i for d, i in order if d < cut} <= set(got)


def test_the_copy_finds_exactly_the_nearest_by_hamming_distance() -> None:
    gen, stored, query = _random_vectors(300, seed=7)
    coarse_candidates(gen.generation, gen.created_at, query, 25)  # sqlite-vec's turn

    got = coarse_candidates(gen.generation, gen.created_at, query, 25)

    _assert_nearest(got, _hamming_order(stored, query), 25)


def test_a_scoped_search_of_the_copy_ranks_only_the_scope() -> None:
    gen, stored, query = _random_vectors(120, seed=11)
    coarse_candidates(gen.generation, gen.created_at, query, 10)  # sqlite-vec's turn
    scope = set(list(stored)[::3])  # 40 of the 120

    got = coarse_candidates(gen.generation, gen.created_at, query, 10, np.asarray(sorted(scope)))

    _assert_nearest(got, [(d, i) for d, i in _hamming_order(stored, query) if i in scope], 10)


def test_the_copy_follows_new_changed_and_archived_memories() -> None:
    remember("a", "alpha notes")
    embedding_pass.embed_pending()
    gen = live()
    embed = DeterministicEmbedder().embed
    coarse_candidates(gen.generation, gen.created_at, embed(["x"])[0], 5)
    assert coarse_candidates(gen.generation, gen.created_at, embed(["x"])[0], 5) is not None

    remember("b", "bravo notes")  # new
    remember("a", "zulu appendix")  # changed: re-embedded into a new row
    embedding_pass.embed_pending()
    near_b = EntityVector.objects.nearest(
        gen.generation, embed(["bravo notes"])[0], k=1, coarse=5, token=gen.created_at
    )
    assert [i for i, _ in near_b] == [entity_id("b")]
    near_a = EntityVector.objects.nearest(
        gen.generation,
        embed(["a alpha notes zulu appendix"])[0],
        k=1,
        coarse=5,
        token=gen.created_at,
    )
    assert near_a[0][0] == entity_id("a")
    assert near_a[0][1] > 0.99  # scored from the new stored vector, not the old one

    forget("b")  # archived: its row is gone, though the copy may still list it
    near = EntityVector.objects.nearest(
        gen.generation, embed(["bravo notes"])[0], k=5, coarse=5, token=gen.created_at
    )
    assert entity_id("b") not in [i for i, _ in near]


def test_with_keep_the_copy_returns_the_best_by_cosine_best_first() -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda"]
    for n, word in enumerate(words):
        remember(f"m{n}", f"{word} notes about {words[(n + 3) % len(words)]} and more")
    embedding_pass.embed_pending()
    gen = live()
    query = DeterministicEmbedder().embed(["alpha gamma notes"])[0]
    stored = EntityVector.objects.floats(gen.generation, [entity_id(f"m{n}") for n in range(9)])
    exact = sorted(stored, key=lambda i: -float(stored[i] @ query))

    assert coarse_candidates(gen.generation, gen.created_at, query, 400, keep=3) is None
    assert coarse_candidates(gen.generation, gen.created_at, query, 400, keep=3) == exact[:3]


def test_a_re_embedded_memory_is_re_ranked_by_its_new_vector() -> None:
    remember("a", "gamma notes")
    remember("b", "beta notes")
    embedding_pass.embed_pending()
    gen = live()
    query = DeterministicEmbedder().embed(["gamma"])[0]
    coarse_candidates(gen.generation, gen.created_at, query, 400, keep=1)  # the first search
    assert coarse_candidates(gen.generation, gen.created_at, query, 400, keep=1) == [entity_id("a")]

    remember("b", "gamma", replace=True)
    embedding_pass.embed_pending()

    assert coarse_candidates(gen.generation, gen.created_at, query, 400, keep=1) == [entity_id("b")]


def test_the_copy_stays_exact_while_vectors_arrive_a_few_at_a_time() -> None:
    # The backlog's vectors reach the copy between searches: the copy grows in place past
    # its capacity (64, then 128 rows) and still ranks every row it holds.
    remember("m0", "memory 0")
    embedding_pass.embed_pending()
    gen = live()
    query = DeterministicEmbedder().embed(["memory 77 notes"])[0]
    coarse_candidates(gen.generation, gen.created_at, query, 10)  # sqlite-vec's turn
    for start in range(1, 150, 9):
        for i in range(start, start + 9):
            remember(f"m{i}", f"memory {i} notes")
        embedding_pass.embed_pending()
        assert coarse_candidates(gen.generation, gen.created_at, query, 10) is not None
    ids = [entity_id(f"m{i}") for i in range(154)]
    stored = EntityVector.objects.floats(gen.generation, ids)
    assert len(stored) == 154

    got = coarse_candidates(gen.generation, gen.created_at, query, 25)

    _assert_nearest(got, _hamming_order(stored, query), 25)
    half = {i: float(v.astype(np.float16).astype(np.float32) @ query) for i, v in stored.items()}
    best = sorted(half, key=lambda i: -half[i])[:5]
    assert coarse_candidates(gen.generation, gen.created_at, query, 400, keep=5) == best
