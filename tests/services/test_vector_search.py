"""EntityVector.objects.nearest within a scope, on either backend (sqlite-vec's sign bits and
the process copy on SQLite, pgvector's HNSW on PostgreSQL): the neighbours come from inside the
scope, with their exact cosine similarity, best first."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from graph.models import EntityVector
from graph.storage.vector_cache import forget_copies

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

GENERATION = 1
WIDTH = 16


def stored_vectors(count: int) -> dict[int, np.ndarray]:
    """`count` unit vectors under entity ids 1..count, written through the manager."""
    rng = np.random.default_rng(11)
    vectors = rng.standard_normal((count, WIDTH)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    EntityVector.objects.create_table(GENERATION, WIDTH)
    rows = [(i + 1, f"hash-{i}", vectors[i]) for i in range(count)]
    EntityVector.objects.store(GENERATION, rows, timezone.now())
    forget_copies()
    return {i + 1: vectors[i] for i in range(count)}


def exact_best(
    vectors: dict[int, np.ndarray], query: np.ndarray, among: list[int], k: int
) -> list[int]:
    sims = {i: float(vectors[i] @ query) for i in among}
    return sorted(sims, key=lambda i: (-sims[i], -i))[:k]


def test_a_small_scope_gets_its_exact_nearest_with_their_similarities() -> None:
    vectors = stored_vectors(60)
    query = vectors[1]
    among = list(range(20, 40))

    found = EntityVector.objects.nearest(GENERATION, query, k=5, coarse=400, among=among)

    assert [i for i, _ in found] == exact_best(vectors, query, among, 5)
    for entity_id, similarity in found:
        assert similarity == pytest.approx(float(vectors[entity_id] @ query), abs=1e-5)


@pytest.mark.parametrize("analysed", [False, True])
def test_a_scope_far_from_the_query_still_gets_neighbours_from_inside_it(analysed: bool) -> None:
    vectors = stored_vectors(300)
    if analysed:  # PostgreSQL then knows the table's size and sizes its candidate list by it
        with connection.cursor() as cur:
            cur.execute("ANALYZE")
    query = vectors[1]
    # The 30 memories farthest from the query: none is among its nearest candidates.
    farthest = exact_best({i: -v for i, v in vectors.items()}, query, list(vectors), 30)

    for _ in range(2):  # the first search of a process, then a long-lived one's
        found = EntityVector.objects.nearest(
            GENERATION, query, k=5, coarse=10, token="t", among=farthest
        )

    assert len(found) == 5
    assert {i for i, _ in found} <= set(farthest)
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
