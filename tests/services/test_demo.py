"""The demo tour (dream/demo.py): seed writes the tour through the normal write services,
marked `metadata.demo = true`, with one pending proposal; a second seed duplicates nothing;
reset deletes exactly the demo entities and proposal, indexes included; both are all or
nothing; a memory of the user's is never touched."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from dream import demo
from dream.demo_tour import DEMO_PROJECT, PROPOSAL_FROM, PROPOSAL_TO, TOUR
from graph.indexing import consistency, embedding_pass, generations
from graph.models import Entity, EntityVector, Observation, Relation, SessionOutcome, Tag
from graph.ops.kit import writes
from graph.ops.registry import OPERATIONS
from proposals.decisions import proposal_accept
from proposals.models import Proposal, ProposalReview, ProposalStatus, ReviewChannel
from tests.bundles import index_rows
from tests.helpers import CTX, recall, remember, restamp
from tests.vector_support import use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

TOUR_NAMES = {entry.name for entry in TOUR}


def seed() -> dict[str, int]:
    return demo.demo_seed(source_host="test").model_dump()


def reset() -> dict[str, int]:
    return demo.demo_reset().model_dump()


def user_memories() -> None:
    remember("my-decision", "we use SQLite", type="decision", tags=["project:mine"])
    remember("my-note", "remember the milk", relations=[{"to": "my-decision", "type": "about"}])


def snapshot(names: set[str]) -> dict[str, Any]:
    """Everything stored about these entities: rows, observations, tags, relations."""
    out = {}
    for entity in Entity.objects.filter(name__in=names).order_by("name"):
        out[entity.name] = (
            entity.pk, entity.type, entity.title, entity.status, entity.confidence,
            entity.metadata, entity.created_at, entity.updated_at,
            list(entity.observations.values_list("text", flat=True)),
            list(entity.tags.values_list("name", flat=True)),
            sorted(entity.relations_out.values_list("to_entity__name", "type")),
        )  # fmt: skip
    return out


def fts_rowids() -> set[int]:
    """The ids the keyword indexes hold (live and archived), on either backend."""
    return {entity_id for rows in index_rows().values() for entity_id, _head, _body in rows}


# --- seed ------------------------------------------------------------------------------------


def test_seed_writes_the_tour_marked_as_demo_and_filed_under_the_demo_project() -> None:
    result = seed()

    assert result == {"inserted": len(TOUR), "removed": 0}
    stored = Entity.objects.filter(name__in=TOUR_NAMES)
    assert stored.count() == len(TOUR)
    assert all(e.metadata["demo"] is True for e in stored)
    assert all(e.metadata["provenance"]["source_host"] == "test" for e in stored)
    assert Tag.objects.filter(entity__in=stored, name=f"project:{DEMO_PROJECT}").count() == len(
        TOUR
    )
    # Indexed as every write is: recall finds a tour memory by its words.
    assert "demo-lesson-migration-lock" in [e["name"] for e in recall("CONCURRENTLY")["entities"]]


def test_no_briefing_presents_the_tour_as_the_users_knowledge() -> None:
    seed()

    for level in ("minimal", "full"):
        briefing = OPERATIONS["briefing"].run({"project": DEMO_PROJECT, "level": level}, CTX)
        assert "demo-" not in briefing["text"], level
        assert briefing["entityCount"] == 0, level
    assert all(e.metadata["untrusted"] is True for e in Entity.objects.all())


def test_the_tour_has_decisions_with_reasons_lessons_and_commits_with_evidence() -> None:
    seed()

    decisions = Entity.objects.filter(name__in=TOUR_NAMES, type="decision")
    assert decisions.count() >= 3
    assert all(d.metadata.get("why") for d in decisions)
    assert Entity.objects.filter(name__in=TOUR_NAMES, type="lesson_learned").count() >= 3
    commits = Entity.objects.filter(name__in=TOUR_NAMES, type="commit")
    assert commits.count() >= 3
    assert all(c.metadata.get("hash") and c.metadata.get("session_id") for c in commits)
    evidence = Relation.objects.filter(type="evidences", from_entity__in=commits)
    assert evidence.count() >= commits.count()


def test_the_tour_spans_the_last_weeks_as_its_dates_say() -> None:
    before = timezone.now()
    seed()

    for entry in TOUR:
        entity = Entity.objects.get(name=entry.name)
        expected = before - timedelta(days=entry.days_ago)
        assert abs(entity.created_at - expected) < timedelta(minutes=1), entry.name
        assert entity.updated_at == entity.created_at


def test_seed_stages_one_pending_relation_proposal_between_two_tour_decisions() -> None:
    seed()

    [proposal] = Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY)
    assert proposal.status == ProposalStatus.PENDING
    assert proposal.kind == "relation"
    assert proposal.proposed["from"] == PROPOSAL_FROM
    assert proposal.proposed["to"] == PROPOSAL_TO
    assert sorted(proposal.source_ids) == sorted(
        Entity.objects.filter(name__in=[PROPOSAL_FROM, PROPOSAL_TO]).values_list("pk", flat=True)
    )


def test_a_second_seed_duplicates_nothing() -> None:
    seed()
    before = snapshot(TOUR_NAMES)
    counts = (Observation.objects.count(), Tag.objects.count(), Relation.objects.count())

    assert seed() == {"inserted": 0, "removed": 0}
    assert snapshot(TOUR_NAMES) == before
    assert (Observation.objects.count(), Tag.objects.count(), Relation.objects.count()) == counts
    assert Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY).count() == 1


def test_a_seed_after_a_partial_loss_inserts_only_what_is_missing() -> None:
    seed()
    writes.entities_delete([Entity.objects.get(name="demo-note-welcome").pk])

    assert seed() == {"inserted": 1, "removed": 0}
    assert Entity.objects.filter(name__in=TOUR_NAMES).count() == len(TOUR)


def test_the_proposal_is_not_staged_again_once_reviewed() -> None:
    seed()
    [proposal] = Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY)
    proposal_accept(proposal.pk, channel=ReviewChannel.CLI)

    seed()

    assert Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY).count() == 1


def test_seed_leaves_a_users_memory_with_a_tour_name_alone() -> None:
    user_memories()
    remember("demo-decision-jwt-auth", "my own JWT notes", type="note")
    remember("demo-pattern-idempotency-keys", "my own pattern", type="pattern")
    mine = {"my-decision", "my-note", "demo-decision-jwt-auth", "demo-pattern-idempotency-keys"}
    before = snapshot(mine)

    result = seed()

    assert result["inserted"] == len(TOUR) - 2
    assert snapshot(mine) == before
    # No tour relation points at the user's memory, and the proposal touching it is not staged.
    assert not Relation.objects.filter(to_entity__name="demo-pattern-idempotency-keys").exists()
    assert not Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY).exists()


def test_a_failing_seed_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    annotate = demo.entity_annotate

    def fail_at_the_fifth(**kwargs: Any) -> None:
        calls.append(kwargs)
        if len(calls) == 5:
            raise RuntimeError("disk on fire")
        annotate(**kwargs)

    monkeypatch.setattr(demo, "entity_annotate", fail_at_the_fifth)
    user_memories()

    with pytest.raises(RuntimeError):
        seed()

    assert set(Entity.objects.values_list("name", flat=True)) == {"my-decision", "my-note"}
    assert not Proposal.objects.exists()
    assert fts_rowids() == set(Entity.objects.values_list("pk", flat=True))


# --- reset -----------------------------------------------------------------------------------


def test_reset_removes_exactly_the_demo_entities_and_proposal() -> None:
    user_memories()
    mine = {"my-decision", "my-note"}
    before = snapshot(mine)
    seed()
    [proposal] = Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY)
    # A user's own relation to a tour memory goes with it; the user's memory stays.
    remember("my-note", relations=[{"to": "demo-decision-postgres", "type": "about"}])
    restamp("my-note", updated_at=before["my-note"][7])

    assert reset() == {"inserted": 0, "removed": len(TOUR)}
    assert snapshot(mine) == before
    assert set(Entity.objects.values_list("name", flat=True)) == mine
    assert not Proposal.objects.filter(pk=proposal.pk).exists()
    assert fts_rowids() == set(Entity.objects.values_list("pk", flat=True))
    assert recall("CONCURRENTLY")["entities"] == []
    assert consistency.check().ok


def test_reset_removes_what_the_tour_became_accepted_and_archived_parts_included() -> None:
    seed()
    [proposal] = Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY)
    proposal_accept(proposal.pk, channel=ReviewChannel.CLI)  # archives the JWT decision
    remember("demo-note-welcome", "an observation of the user's")  # still a demo entity
    assert Entity.objects.get(name=PROPOSAL_TO).status == "archived"

    assert reset()["removed"] == len(TOUR)
    assert not Entity.objects.exists()
    assert not Proposal.objects.exists() and not ProposalReview.objects.exists()
    assert not SessionOutcome.objects.exists()


def test_reset_takes_the_demo_entities_out_of_the_vector_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic", dimensions="16")
    user_memories()
    seed()
    report = embedding_pass.embed_pending()
    assert report.error is None, report
    live = generations.live_generation()
    assert live is not None
    assert len(EntityVector.objects.hashes(live.generation)) == len(TOUR) + 2

    reset()

    assert set(EntityVector.objects.hashes(live.generation)) == set(
        Entity.objects.values_list("pk", flat=True)
    )
    assert consistency.check().ok, consistency.check().as_json()


def test_reset_counts_only_json_true_as_the_demo_mark() -> None:
    remember("one", "x")
    remember("text", "x")
    restamp("one", metadata={"demo": 1})
    restamp("text", metadata={"demo": "true"})
    seed()

    assert reset()["removed"] == len(TOUR)
    assert set(Entity.objects.values_list("name", flat=True)) == {"one", "text"}


def test_a_failing_reset_removes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    seed()
    before = snapshot(TOUR_NAMES)

    def broken_index_sync(ids: object) -> None:
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(Entity.objects, "index_sync", broken_index_sync)
    with pytest.raises(RuntimeError):
        reset()

    assert snapshot(TOUR_NAMES) == before
    assert Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY).exists()


def test_reset_with_no_tour_removes_nothing_and_a_seed_after_it_starts_over() -> None:
    user_memories()

    assert reset() == {"inserted": 0, "removed": 0}
    seed()
    reset()
    assert seed() == {"inserted": len(TOUR), "removed": 0}
    assert Proposal.objects.filter(cluster_key=demo.DEMO_CLUSTER_KEY).count() == 1
