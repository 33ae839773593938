"""Accept and reject services: what each kind of proposal does to the graph when accepted,
what a refused or impossible accept leaves behind, and the audit trail of every review."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import InvalidInput, NotFound, OperationFailed
from graph.models import Entity, Relation, Status
from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS
from proposals.decisions import proposal_accept, proposal_reject
from proposals.models import Proposal, ProposalKind, ProposalReview, ProposalStatus
from proposals.selectors import proposal_detail, proposal_list, proposal_sources
from proposals.staging import proposal_stage
from tests.helpers import forget, names, recall, remember
from tests.rest import fts_count

pytestmark = pytest.mark.django_db


def commits(n: int, project: str = "alpha") -> list[int]:
    ids = []
    for i in range(n):
        out = remember(
            f"commit-{project}-{i}",
            f"fixed flakyword{i} in the parser",
            type="commit",
            tags=[f"project:{project}"],
        )
        ids.append(out["entityId"])
    return ids


def digest(source_ids: list[int], name: str = "digest-alpha-week") -> Proposal:
    proposal, created = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=source_ids,
        proposed={
            "name": name,
            "type": "digest",
            "observations": ["The parser's flaky tests were fixed one by one"],
            "tags": ["project:alpha"],
        },
        llm_model="fake-model",
        prompt_version="dreamer-v1",
    )
    assert created
    return proposal


def relation(a: str, b: str, rel: str, verdict: str) -> Proposal:
    ids = list(Entity.objects.filter(name__in=[a, b]).values_list("id", flat=True))
    proposal, _ = proposal_stage(
        kind=ProposalKind.RELATION,
        project="",
        cluster_key=f"pair:{min(ids)}-{max(ids)}",
        source_ids=ids,
        proposed={"from": a, "to": b, "relation": rel, "verdict": verdict, "rationale": "r"},
    )
    return proposal


def reviews(proposal: Proposal) -> list[tuple[str, str, str]]:
    return list(proposal.reviews.values_list("action", "outcome", "channel"))


def test_accepting_a_digest_creates_it_links_and_archives_its_sources():
    ids = commits(6)
    proposal = digest(ids)

    result = proposal_accept(proposal.pk, channel="cli", reviewer="ana", origin="laptop")

    assert result == {
        "proposalId": proposal.pk,
        "digestEntityName": "digest-alpha-week",
        "sourcesArchived": 6,
        "sourcesLinked": 6,
        "kind": "digest",
    }
    digest_entity = Entity.objects.get(name="digest-alpha-week")
    assert digest_entity.type == "digest"
    assert digest_entity.metadata["provenance"]["source_host"] == "dream"
    assert set(
        Relation.objects.filter(from_entity=digest_entity, type="summarizes").values_list(
            "to_entity_id", flat=True
        )
    ) == set(ids)
    assert set(Entity.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"archived"}
    # The archive went through the forget path: the keyword index moved with it.
    assert fts_count(LIVE_FTS, "flakyword0") == 0
    assert fts_count(ARCHIVED_FTS, "flakyword0") == 1
    assert "digest-alpha-week" in [e["name"] for e in recall("flaky")["entities"]]
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED
    assert proposal.reviewed_at is not None
    assert proposal.source_ids == ids  # provenance kept
    [review] = proposal.reviews.all()
    assert (review.action, review.outcome, review.channel) == ("accept", "applied", "cli")
    assert (review.reviewer, review.origin) == ("ana", "laptop")


def test_a_second_accept_fails_cleanly_and_changes_nothing():
    proposal = digest(commits(5))
    proposal_accept(proposal.pk, channel="api")
    entities_before = Entity.objects.count()

    with pytest.raises(OperationFailed, match="not pending"):
        proposal_accept(proposal.pk, channel="htmx", reviewer="bo")

    assert Entity.objects.count() == entities_before
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED
    assert reviews(proposal) == [("accept", "applied", "api"), ("accept", "refused", "htmx")]


def test_a_digest_name_already_taken_gets_a_free_one_instead_of_appending():
    remember("digest-alpha-week", "an unrelated memory")
    proposal = digest(commits(5))

    result = proposal_accept(proposal.pk, channel="api")

    assert result["digestEntityName"] == "digest-alpha-week-2"
    assert [
        o["text"] for o in Entity.objects.get(name="digest-alpha-week").observations.values("text")
    ] == ["an unrelated memory"]


def test_a_digest_claims_only_sources_still_active_and_unsummarised():
    ids = commits(6)
    first = digest(ids[:3], name="digest-first")
    proposal_accept(first.pk, channel="api")
    forget("commit-alpha-3")
    second = digest(ids, name="digest-second")

    result = proposal_accept(second.pk, channel="api")

    assert result["sourcesArchived"] == 2
    linked = Relation.objects.filter(from_entity__name="digest-second", type="summarizes")
    assert set(linked.values_list("to_entity_id", flat=True)) == set(ids[4:])


def test_a_proposal_that_can_no_longer_claim_any_source_is_refused_and_rejected():
    ids = commits(5)
    for i in range(5):
        forget(f"commit-alpha-{i}")
    proposal = digest(ids)

    with pytest.raises(OperationFailed, match="marked rejected"):
        proposal_accept(proposal.pk, channel="admin", reviewer="ana")

    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED
    assert "summarised" in proposal.reason
    assert not Entity.objects.filter(name="digest-alpha-week").exists()
    # The audit row records the accept as refused, and why, as docs/review.md says.
    [review] = proposal.reviews.all()
    assert (review.action, review.outcome, review.channel, review.reviewer) == (
        "accept",
        "refused",
        "admin",
        "ana",
    )
    assert review.reason == f"{proposal.reason}; the proposal was marked rejected"
    assert proposal_list() == []


def test_accepting_a_pattern_links_its_evidence_and_archives_nothing():
    ids = commits(3)
    proposal, _ = proposal_stage(
        kind=ProposalKind.PATTERN_EMERGENT,
        project="alpha",
        cluster_key="patterns",
        source_ids=ids,
        proposed={
            "name": "pattern-flaky-parser",
            "type": "pattern_emergent",
            "observations": ["The parser keeps growing flaky tests"],
            "tags": ["project:alpha"],
        },
    )

    result = proposal_accept(proposal.pk, channel="api")

    assert result == {
        "proposalId": proposal.pk,
        "digestEntityName": "pattern-flaky-parser",
        "sourcesArchived": 0,
        "sourcesLinked": 3,
        "kind": "pattern_emergent",
    }
    pattern = Entity.objects.get(name="pattern-flaky-parser")
    assert set(
        Relation.objects.filter(to_entity=pattern, type="evidence_for").values_list(
            "from_entity_id", flat=True
        )
    ) == set(ids)
    assert set(Entity.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"active"}


def test_accepting_a_supersedes_verdict_archives_the_superseded_memory_like_remember():
    remember("cache-v1", "We cache sessions in memcached", type="decision")
    remember("cache-v2", "We moved session caching from memcached to redis", type="decision")
    proposal = relation("cache-v2", "cache-v1", "supersedes", "SUPERSEDES")

    result = proposal_accept(proposal.pk, channel="api")

    assert result == {
        "proposalId": proposal.pk,
        "digestEntityName": None,
        "sourcesArchived": 1,
        "sourcesLinked": 2,
        "kind": "relation",
    }
    assert Entity.objects.get(name="cache-v1").status == Status.ARCHIVED
    assert Entity.objects.get(name="cache-v2").status == Status.ACTIVE
    assert Relation.objects.filter(
        from_entity__name="cache-v2", to_entity__name="cache-v1", type="supersedes"
    ).exists()
    assert names(recall("memcached")) == ["cache-v2"]  # the archive left the keyword index


def test_accepting_a_contradicts_verdict_relates_and_archives_nothing():
    remember("tabs", "We indent with tabs", type="decision")
    remember("spaces", "We indent with four spaces", type="decision")
    proposal = relation("tabs", "spaces", "contradicts", "CONTRADICTS")

    result = proposal_accept(proposal.pk, channel="api")

    assert result["sourcesArchived"] == 0
    assert Relation.objects.filter(type="contradicts").count() == 1
    conflicts = recall("indent").get("conflicts")
    assert conflicts, "a contradicts edge makes both memories surface as a conflict"


def test_a_relation_whose_endpoint_is_archived_is_refused_loudly_and_rejected():
    remember("a-rule", "Always squash merges", type="decision")
    remember("b-rule", "Never squash merges", type="decision")
    proposal = relation("a-rule", "b-rule", "contradicts", "CONTRADICTS")
    forget("b-rule")

    with pytest.raises(OperationFailed, match="active"):
        proposal_accept(proposal.pk, channel="api")

    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.REJECTED
    assert not Relation.objects.filter(type="contradicts").exists()
    assert reviews(proposal) == [("accept", "refused", "api")]


def test_reject_leaves_the_sources_untouched_and_records_the_reason():
    ids = commits(5)
    proposal = digest(ids)

    result = proposal_reject(proposal.pk, reason="too vague", channel="htmx", reviewer="ana")

    assert result == {"id": proposal.pk, "status": "rejected"}
    assert set(Entity.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"active"}
    assert not Entity.objects.filter(name="digest-alpha-week").exists()
    proposal.refresh_from_db()
    assert (proposal.status, proposal.reason) == ("rejected", "too vague")
    [review] = proposal.reviews.all()
    assert (review.action, review.outcome, review.reason) == ("reject", "rejected", "too vague")
    with pytest.raises(OperationFailed):
        proposal_accept(proposal.pk, channel="api")
    with pytest.raises(OperationFailed):
        proposal_reject(proposal.pk, channel="api")
    assert ProposalReview.objects.filter(outcome="refused").count() == 2


def test_sources_a_person_rejected_are_not_staged_again_while_unchanged():
    ids = commits(5)
    rejected = digest(ids)
    proposal_reject(rejected.pk, channel="api")

    # Other words over the same memories: the rejection stands.
    proposal, created = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=ids,
        proposed={"name": "digest-reworded", "observations": ["Flaky parser tests, fixed"]},
    )
    assert (proposal.pk, created) == (rejected.pk, False)
    # Another kind of proposal over them is another question.
    _, created = proposal_stage(
        kind=ProposalKind.PATTERN_EMERGENT,
        project="alpha",
        cluster_key="patterns",
        source_ids=ids,
        proposed={"name": "pattern-flaky", "observations": ["Flaky tests recur"]},
    )
    assert created
    # A source edited since: proposed afresh.
    remember("commit-alpha-2", "the fix was a missing lock", type="commit")
    assert digest(ids, name="digest-after-the-edit").status == ProposalStatus.PENDING


def test_an_accept_refused_for_gone_sources_is_not_a_rejection_to_remember():
    ids = commits(5)
    for i in range(5):
        forget(f"commit-alpha-{i}")
    proposal = digest(ids)
    with pytest.raises(OperationFailed):
        proposal_accept(proposal.pk, channel="api")

    again = digest(ids, name="digest-alpha-again")

    assert again.pk != proposal.pk


def test_reject_refuses_a_reason_over_500_characters():
    proposal = digest(commits(5))

    with pytest.raises(InvalidInput, match="500"):
        proposal_reject(proposal.pk, reason="x" * 501, channel="api")

    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


def test_missing_proposals_are_not_found():
    with pytest.raises(NotFound):
        proposal_accept(999, channel="api")
    with pytest.raises(NotFound):
        proposal_reject(999, channel="api")
    with pytest.raises(NotFound):
        proposal_detail(999)


def test_a_failure_mid_accept_leaves_the_graph_and_the_proposal_as_they_were(monkeypatch):
    ids = commits(5)
    proposal = digest(ids)
    from proposals import appliers

    real = appliers.entity_forget
    calls: list[Any] = []

    def failing(**kwargs: Any) -> Any:
        calls.append(kwargs)
        if len(calls) == 3:
            raise RuntimeError("disk full")
        return real(**kwargs)

    monkeypatch.setattr(appliers, "entity_forget", failing)
    with pytest.raises(RuntimeError):
        proposal_accept(proposal.pk, channel="api")

    assert set(Entity.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"active"}
    assert not Entity.objects.filter(name="digest-alpha-week").exists()
    assert not Relation.objects.exists()
    assert fts_count(LIVE_FTS, "flakyword0") == 1
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


def test_an_identical_pending_proposal_is_never_staged_twice():
    ids = commits(5)
    first = digest(ids)

    again, created = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=list(reversed(ids)),
        proposed=first.proposed,
    )

    assert not created
    assert again.pk == first.pk


def test_list_detail_and_sources_have_the_reference_shapes():
    ids = commits(5)
    proposal = digest(ids)

    [item] = proposal_list()
    assert item == {
        "id": proposal.pk,
        "project": "alpha",
        "cluster_key": "2026-W48",
        "source_count": 5,
        "digest_name": "digest-alpha-week",
        "digest_observations_preview": ["The parser's flaky tests were fixed one by one"],
        "status": "pending",
        "created_at": proposal.created_at.isoformat(),
        "kind": "digest",
    }
    detail = proposal_detail(proposal.pk)
    assert set(detail) == {
        "id",
        "kind",
        "project",
        "cluster_key",
        "source_ids",
        "proposed_digest",
        "llm_model",
        "prompt_version",
        "status",
        "reason",
        "created_at",
        "reviewed_at",
    }
    assert detail["proposed_digest"]["name"] == "digest-alpha-week"
    assert (detail["llm_model"], detail["prompt_version"]) == ("fake-model", "dreamer-v1")
    assert detail["reviewed_at"] is None
    sources = proposal_sources(proposal)
    assert [s["name"] for s in sources] == [f"commit-alpha-{i}" for i in range(5)]
    assert sources[0]["observations"] == ["fixed flakyword0 in the parser"]
    assert sources[0]["tags"] == ["project:alpha"]
    assert sources[0]["status"] == "active"
    assert proposal_list("applied") == []
    assert len(proposal_list("all")) == 1
