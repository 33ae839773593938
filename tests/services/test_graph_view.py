"""The graph view (graph/ops/graph_view.py): the full view with its noise cap, the work layer
with its evidence counts, the light node both hold (as SQLite writes it and GraphNode
describes it), and the evidence drill-down with its cap, `truncated` and 404."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core.errors import NotFound
from graph.models import Entity
from graph.ops import graph_view
from graph.ops.entity_list import entity_get
from graph.ops.graph_view import GraphNode, graph_evidence_get, graph_get, graph_json
from graph.ops.kit.operation import CallContext
from tests.helpers import forget, remember, restamp

pytestmark = pytest.mark.django_db


def names(result: graph_view.GraphOutput | graph_view.GraphEvidenceOutput) -> list[str]:
    return [e.name for e in result.entities]


def edges(result: graph_view.GraphOutput | graph_view.GraphEvidenceOutput) -> list[tuple]:
    return [(r.from_, r.to, r.type) for r in result.relations]


def evidence(name: str, *targets: str, type: str = "commit") -> None:
    remember(name, f"{name} happened", type=type, relations=[
        {"to": t, "type": "evidences"} for t in targets
    ])  # fmt: skip


def test_the_caps_are_the_references() -> None:
    assert graph_view.NOISE_CAP == 200
    assert graph_view.EVIDENCE_CAP == 200


def test_an_empty_graph_has_empty_views() -> None:
    assert graph_get().model_dump(by_alias=True) == {"entities": [], "relations": []}
    assert graph_get(layer="work").model_dump(by_alias=True) == {
        "entities": [],
        "relations": [],
        "evidenceCounts": {},
    }


def test_the_full_view_holds_signal_entities_then_the_newest_noise_and_every_relation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(graph_view, "NOISE_CAP", 2)
    now = timezone.now()
    remember("old-decision", "chose A", type="decision")
    remember("new-note", "a fact", type="note")
    remember("gone", "forgotten", type="pattern")
    forget("gone")
    for i in range(4):
        evidence(f"commit-{i}", "old-decision")
    restamp("old-decision", updated_at=now - timedelta(days=9))
    restamp("new-note", updated_at=now - timedelta(hours=1))
    restamp("gone", updated_at=now - timedelta(days=5))
    # Recalled yesterday, written nine days ago: used more recently than the archived one.
    restamp("old-decision", last_accessed_at=now - timedelta(hours=20))

    result = graph_get()

    # Signal (archived too), most recently used first; then the 2 newest noise entities.
    assert names(result) == ["new-note", "old-decision", "gone", "commit-3", "commit-2"]
    assert {e.name: e.status for e in result.entities}["gone"] == "archived"
    # Every relation, also those of the commits beyond the cap.
    assert edges(result) == [(f"commit-{i}", "old-decision", "evidences") for i in range(4)]


def test_a_node_holds_what_a_graph_view_draws_and_filters_by() -> None:
    remember("d", "chose A", "over B", type="decision", title="Chose A", source="docs/adr.md",
             tags=["topic:db", "project:x", "project:y"])  # fmt: skip
    remember("n", "see d", relations=[{"to": "d", "type": "related-to"}])
    entity = entity_get(name="d")

    [node] = [e for e in json.loads(graph_json())["entities"] if e["name"] == "d"]

    assert node == {
        "id": entity.id,
        "name": "d",
        "title": "Chose A",
        "type": "decision",
        "status": "active",
        "trust_status": entity.trust.status,
        "created_at": entity.created_at,
        "updated_at": entity.updated_at,
        "tags": ["topic:db", "project:x", "project:y"],  # in the order added
        "observation_count": 2,
    }
    assert list(node) == list(GraphNode.model_fields)
    [untagged] = [e for e in json.loads(graph_json())["entities"] if e["name"] == "n"]
    assert untagged["tags"] == []


@pytest.mark.parametrize("layer", [None, "work"])
def test_the_rest_answer_is_the_selectors_answer_encoded(layer: str | None) -> None:
    remember("d", "chose A", type="decision", title='Zürich "quoted"\n', tags=["project:x"])
    remember("l", "never again", type="lesson_learned", relations=[
        {"to": "d", "type": "caused-by"}
    ])  # fmt: skip
    evidence("c1", "d")
    payload = {} if layer is None else {"layer": layer}
    operation = graph_view.GRAPH

    text = operation.run_json(payload, CallContext(source_host="test"))

    assert text == graph_json(layer=layer)
    # The text the REST route sends is what the handler (MCP, CLI, the dashboard) answers.
    answered = operation.call(payload, CallContext(source_host="test"))
    assert json.loads(text) == answered.model_dump(mode="json", by_alias=True)
    assert answered == graph_get(layer=layer)


@pytest.mark.parametrize("max_nodes", [1, 3, 4, 5, 6])
def test_a_limited_read_holds_the_views_first_nodes_and_counts_them_all(
    monkeypatch: pytest.MonkeyPatch, max_nodes: int
) -> None:
    monkeypatch.setattr(graph_view, "NOISE_CAP", 2)
    for name in ("plan", "goal", "note"):
        remember(name, f"the {name}", type=name)
    for i in range(3):
        evidence(f"commit-{i}", "plan")
    full, work = graph_get(), graph_get(layer="work")  # 3 signal + 2 noise; 2 work items

    limited = graph_view.graph_read(max_nodes=max_nodes)
    limited_work = graph_view.graph_read(layer="work", max_nodes=max_nodes)

    assert names(limited.output()) == names(full)[:max_nodes]
    assert limited.total_nodes == 5
    assert names(limited_work.output()) == names(work)[:max_nodes]
    assert limited_work.total_nodes == 2
    assert edges(limited.output()) == edges(full)  # every relation still
    if max_nodes < 5:
        with pytest.raises(ValueError):
            limited.answer_json()


def test_the_work_layer_holds_active_work_items_and_the_relations_among_them() -> None:
    remember("plan", "ship it", type="plan")
    remember("decision", "chose A", type="decision", relations=[{"to": "plan", "type": "for"}])
    remember("lesson", "never again", type="lesson_learned", relations=[
        {"to": "decision", "type": "caused-by"}
    ])  # fmt: skip
    remember("note", "a fact", type="note", relations=[{"to": "decision", "type": "about"}])
    remember("old-goal", "was the goal", type="goal")
    remember("goal", "the goal", type="goal", relations=[{"to": "old-goal", "type": "supersedes"}])

    result = graph_get(layer="work")

    assert sorted(names(result)) == ["decision", "goal", "lesson", "plan"]
    # Not the note's (not work) nor the supersedes edge (its target is archived).
    assert sorted(edges(result)) == [
        ("decision", "plan", "for"),
        ("lesson", "decision", "caused-by"),
    ]


def test_evidence_counts_count_incoming_evidences_edges_from_active_entities() -> None:
    remember("decision", "chose A", type="decision")
    remember("lesson", "never again", type="lesson_learned")
    remember("quiet", "no evidence yet", type="plan")
    evidence("c1", "decision", "lesson")
    evidence("c2", "decision")
    evidence("c3", "decision")
    evidence("s1", "lesson", type="session-summary")
    remember("n", "not evidence", relations=[{"to": "lesson", "type": "related-to"}])
    forget("c3")

    counts = graph_get(layer="work").evidenceCounts

    assert counts == {"decision": 2, "lesson": 2}  # `quiet` has none: absent


def test_evidence_of_a_node_is_newest_first_with_its_edges() -> None:
    remember("decision", "chose A", type="decision")
    evidence("c-old", "decision")
    evidence("c-new", "decision")
    evidence("c-gone", "decision")
    forget("c-gone")
    restamp("c-old", created_at=timezone.now() - timedelta(days=3))

    result = graph_evidence_get(node="decision")

    assert names(result) == ["c-new", "c-old"]
    assert edges(result) == [
        ("c-new", "decision", "evidences"),
        ("c-old", "decision", "evidences"),
    ]
    assert result.truncated is False


def test_evidence_is_capped_and_says_when_more_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_view, "EVIDENCE_CAP", 2)
    remember("decision", "chose A", type="decision")
    for i in range(2):
        evidence(f"c{i}", "decision")

    exactly = graph_evidence_get(node="decision")
    evidence("c2", "decision")
    more = graph_evidence_get(node="decision")

    assert names(exactly) == ["c1", "c0"] and exactly.truncated is False
    assert names(more) == ["c2", "c1"] and more.truncated is True
    assert len(more.relations) == 2


def test_a_node_without_evidence_is_empty_and_an_unknown_one_is_not_found() -> None:
    remember("decision", "chose A", type="decision")

    empty = graph_evidence_get(node="decision")
    with pytest.raises(NotFound) as caught:
        graph_evidence_get(node="no-such-node")

    assert empty.model_dump(by_alias=True) == {
        "entities": [],
        "relations": [],
        "truncated": False,
    }
    assert caught.value.error_code == "resource.not-found"
    assert caught.value.field == "node"


def test_reading_the_graph_counts_no_access() -> None:
    remember("decision", "chose A", type="decision")
    evidence("c1", "decision")

    graph_get()
    graph_get(layer="work")
    graph_evidence_get(node="decision")

    assert set(Entity.objects.values_list("access_count", flat=True)) == {0}
    assert set(Entity.objects.values_list("last_accessed_at", flat=True)) == {None}


@pytest.mark.django_db(transaction=True)
def test_a_thread_keeps_a_view_until_the_next_commit() -> None:
    """Outside a transaction the read is kept (graph/storage/commit_cache.py) until any write."""
    assert not connection.in_atomic_block
    remember("d", "chose A", type="decision")

    first = graph_view.graph_read(layer="work")
    assert graph_view.graph_read(layer="work") is first
    remember("l", "never again", type="lesson_learned")

    assert sorted(names(graph_get(layer="work"))) == ["d", "l"]
    # Another connection's commit (another thread here) moves it on too.
    kept = graph_view.graph_read(layer="work")

    def other_writer() -> None:
        forget("l")
        connection.close()

    thread = threading.Thread(target=other_writer)
    thread.start()
    thread.join()
    assert graph_view.graph_read(layer="work") is not kept
    assert names(graph_get(layer="work")) == ["d"]
