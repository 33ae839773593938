"""Switching the local model (MEMESH_EMBEDDER_MODEL, or a new default) moves a database to a
new vector generation on the worker, while recall keeps searching the old one with the model
that built it: semantic recall never stops (graph/indexing/generations.py)."""

from __future__ import annotations

from typing import Any

import pytest

from graph import tasks
from graph.indexing import embedding_pass, generations, reindex
from graph.models import EntityVector
from tests.helpers import recall, remember
from tests.vector_support import use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

CORPUS = {
    "office-kitchen": "The office coffee machine is on the third floor",
    "nightly-backups": "Postgres backups run nightly at 02:00 UTC to S3",
    "pets": "Dogs are allowed in the office on Fridays",
    "api-quota": "The public API allows 100 requests per minute per client",
}
# Shares no word with its target: only the vector side can find it.
PARAPHRASE = ("where is the caffeine dispenser?", "office-kitchen")


def answer(query: str) -> tuple[str, bool, list[str]]:
    result = recall(query)
    names = [e["name"] for e in result["entities"]]
    return result["retrieval"]["mode"], result["retrieval"]["degraded"], names


def test_a_local_model_switch_rebuilds_on_the_worker_while_recall_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "local")
    for name, text in CORPUS.items():
        remember(name, text)
    assert embedding_pass.embed_pending().embedded == len(CORPUS)
    old = generations.live_generation()
    assert old is not None and old.model == "all-MiniLM-L6-v2-int8"

    use_embedder(monkeypatch, "local", model="bge-small-en-v1.5")
    query, target = PARAPHRASE

    # Configured but not built yet: the old generation answers, searched with MiniLM.
    mode, degraded, names = answer(query)
    assert (mode, degraded) == ("hybrid", False)
    assert target in names
    assert embedding_pass.embed_pending().local_switch

    during: list[Any] = []
    real_swap = reindex._swap

    def swap_watched(staging: generations.Generation, result: reindex.ReindexResult) -> None:
        # The new generation is complete but not yet live: what recall sees at that moment.
        during.append((generations.live_generation(), staging.model, answer(query)))
        real_swap(staging, result)

    monkeypatch.setattr(reindex, "_swap", swap_watched)
    outcome = tasks.embed_pending_task()  # the worker's task body, run here

    assert outcome == {"embedded": len(CORPUS), "failed": 0, "skipped": None}
    [(live_during, staged_model, (mode, degraded, names))] = during
    assert live_during == old and staged_model == "bge-small-en-v1.5-int8"
    assert (mode, degraded) == ("hybrid", False) and target in names

    new = generations.live_generation()
    assert new is not None and new.model == "bge-small-en-v1.5-int8"
    assert new.generation > old.generation
    assert EntityVector.objects.pending_count(new.generation) == 0
    assert old.generation not in EntityVector.objects.generations_present()
    mode, degraded, names = answer(query)
    assert (mode, degraded) == ("hybrid", False) and target in names
    assert embedding_pass.embed_pending().local_switch is False


def test_a_remote_index_is_not_searched_with_a_local_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only a local model's generation is searched across a switch: another provider's
    queries would go to a service no longer configured."""
    use_embedder(monkeypatch, "deterministic", dimensions="384")
    remember("office-kitchen", CORPUS["office-kitchen"])
    embedding_pass.embed_pending()
    use_embedder(monkeypatch, "local", model="bge-small-en-v1.5")

    mode, degraded, _ = answer("coffee machine")

    assert (mode, degraded) == ("fts", True)
    assert embedding_pass.embed_pending().local_switch is False


def test_bge_recall_admits_no_unrelated_memory_by_meaning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bge's cosines are read on the fusion's scale: a query about nothing stored gets no
    semantic-only memory (raw, bge puts every memory of CORPUS above the cut-off), while a
    paraphrase still finds its memory."""
    use_embedder(monkeypatch, "local", model="bge-small-en-v1.5")
    for name, text in CORPUS.items():
        remember(name, text)
    assert embedding_pass.embed_pending().embedded == len(CORPUS)

    mode, _, unrelated = answer("lattice quantum chromodynamics of gluon fields")
    _, _, paraphrase = answer(PARAPHRASE[0])

    assert mode == "hybrid"
    assert unrelated == []
    assert PARAPHRASE[1] in paraphrase
