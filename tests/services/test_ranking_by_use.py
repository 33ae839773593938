"""Use moves hybrid recall's ranking among equals (graph/search/scoring.py, impact_first): two
memories with the same text, the default local model, real SQLite. A memory cited several
times — through feedback or a remembered note citing `[mem:<id>]` — ranks above its twin;
one returned to many sessions and never cited sinks below it; a clearly more relevant memory
keeps its place above a cited weaker one."""

from __future__ import annotations

import pytest

from graph.indexing import embedding_pass
from graph.models import Entity
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
from graph.search import scoring
from tests.helpers import CTX, names, recall, remember
from tests.vector_support import use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

TWIN_TEXT = "The deploy script needs the staging credentials first, then the migration runs."
OTHERS = {
    "release-checklist": "The release checklist covers the staging rollout and smoke tests.",
    "vault-rotation": "Credentials for the partner API live in the vault, rotated monthly.",
    "schema-lock": "The migration runner locks the schema table while it works.",
}
QUERY = "deploy staging credentials"


@pytest.fixture
def twins(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The twins' names in the order recall gives them before any use: the first, the second."""
    use_embedder(monkeypatch, "local")
    for name, text in OTHERS.items():
        remember(name, text)
    remember("deploy-order", TWIN_TEXT)
    remember("deploy-order-copy", TWIN_TEXT)
    embedding_pass.embed_pending()
    result = recall(QUERY)
    assert result["retrieval"]["mode"] == "hybrid"
    order = [n for n in names(result) if n.startswith("deploy-order")]
    assert len(order) == 2 and names(result)[:2] == order  # the twins lead, in some order
    return order


def id_of(name: str) -> int:
    return Entity.objects.get(name=name).pk


def test_feedback_hits_lift_a_twin_above_its_equal(twins: list[str]) -> None:
    first, second = twins
    for _ in range(4):
        OPERATIONS["feedback"].run({"hits": [id_of(second)]}, CTX)

    assert names(recall(QUERY))[:2] == [second, first]


def test_notes_citing_a_twin_lift_it_above_its_equal(twins: list[str]) -> None:
    first, second = twins
    for n in range(4):
        OPERATIONS["remember"].run(
            {"note": f"Handoff {n}\n\nRan the steps in order, as [mem:{id_of(second)}] says."},
            CTX,
        )
    embedding_pass.embed_pending()

    assert Entity.objects.get(name=second).recall_hits == 4
    assert names(recall(QUERY))[:2] == [second, first]


def test_a_twin_returned_many_times_and_never_cited_sinks(twins: list[str]) -> None:
    first, second = twins
    for n in range(scoring.SINK_MISSES):
        # Only the first twin is returned, and the session cites nothing: a miss each time.
        # Until the last one it stays first: a few sessions that cited something else say
        # little about the next query.
        session = CallContext(source_host="test", session_id=f"s-{n}")
        assert names(OPERATIONS["recall"].run({"query": QUERY, "limit": 1}, session)) == [first]
        OPERATIONS["feedback"].run({"text": "Done; nothing recalled was used."}, session)

    stored = Entity.objects.get(name=first)
    assert (stored.recall_hits, stored.recall_misses) == (0, scoring.SINK_MISSES)
    # Read more often than its twin (frequency favours it), yet it sinks below it.
    assert stored.access_count == Entity.objects.get(name=second).access_count + scoring.SINK_MISSES
    assert names(recall(QUERY))[:2] == [second, first]


def test_a_much_more_relevant_memory_stays_above_a_cited_weaker_one(twins: list[str]) -> None:
    first, _ = twins
    for _ in range(20):
        OPERATIONS["feedback"].run({"hits": [id_of("vault-rotation")]}, CTX)

    ranked = names(recall(QUERY))
    assert ranked.index(first) < ranked.index("vault-rotation")
    assert ranked.index("deploy-order-copy") < ranked.index("vault-rotation")
