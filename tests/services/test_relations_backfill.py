"""kg backfill-relations against the real database: a dry run writes nothing, an applied run
creates the rules' relations in one transaction with their provenance, a second run creates
nothing, and the idempotency cache, project scope and archived entities behave as the
reference says."""

from __future__ import annotations

from typing import Any

import pytest

from graph.maintenance.relations_backfill import (
    IDEMPOTENCY_KEY,
    BackfillInput,
    BackfillOutput,
    relations_backfill,
)
from graph.models import MetaEntry, Relation
from graph.ops.kit.operation import validated
from tests.helpers import forget, remember, remember_commit, remember_in_session, stored

pytestmark = pytest.mark.django_db


def backfill(**fields: Any) -> BackfillOutput:
    return relations_backfill(data=validated(BackfillInput, fields))


def edges() -> set[tuple[str, str, str]]:
    return set(Relation.objects.values_list("from_entity__name", "to_entity__name", "type"))


@pytest.fixture
def project_graph() -> None:
    remember("auth-architecture", "sessions over JWT", type="architecture", project="app")
    remember("jwt-lesson", "expiry matters", type="lesson_learned", tags=["auth", "jwt"],
             project="app")  # fmt: skip
    remember("jwt-decision", "rotate keys", type="decision", tags=["auth", "jwt"], project="app")
    remember("other-project-note", "unrelated", tags=["auth", "jwt"], project="other")


def test_a_dry_run_lists_the_candidates_and_writes_nothing(project_graph: None) -> None:
    result = backfill()

    assert result.dryRun is True and result.edgesWritten == 0
    proposed = {(c.from_, c.to, c.type) for c in result.candidates}
    assert ("jwt-lesson", "auth-architecture", "belongs-to-project") in proposed
    assert ("jwt-lesson", "jwt-decision", "related-to") in proposed
    assert result.byRule["projectClustering"] == 2
    assert edges() == set() and not MetaEntry.objects.filter(key=IDEMPOTENCY_KEY).exists()


def test_apply_creates_the_relations_with_their_provenance_and_a_rerun_creates_nothing(
    project_graph: None,
) -> None:
    remember("loner", "nothing in common with anything")
    first = backfill(apply=True)
    created = edges()
    second = backfill(apply=True)
    third = backfill(apply=True, reset_idempotency=True)

    assert first.edgesWritten == first.candidatesProposed == len(created) > 0
    relation = Relation.objects.get(type="belongs-to-project", from_entity__name="jwt-decision")
    assert relation.metadata == {
        "source": "kg-backfill",
        "rule": "projectClustering",
        "reason": "same-project anchor (architecture)",
    }
    assert second.edgesWritten == 0 and second.candidatesProposed == 0
    assert second.orphansSkippedIdempotent == 1  # the orphan no rule could connect
    assert third.edgesWritten == 0 and third.idempotencyReset is True
    assert edges() == created


def test_the_idempotency_cache_skips_orphans_an_earlier_run_attempted() -> None:
    remember("lonely-lesson", "no anchor yet", type="lesson_learned", project="app")
    backfill(apply=True)
    remember("app-plan", "the plan", type="plan", project="app")

    skipped = backfill()
    reconsidered = backfill(reset_idempotency=True)

    assert skipped.candidatesProposed == 0 and skipped.orphansSkippedIdempotent == 1
    assert [(c.from_, c.to) for c in reconsidered.candidates] == [("lonely-lesson", "app-plan")]
    # The dry run previewed the reset without making it.
    assert backfill().orphansSkippedIdempotent == 1


def test_project_restricts_the_sources(project_graph: None) -> None:
    remember("x-plan", "plan", type="plan", project="x")
    remember("x-lesson", "lesson", type="lesson_learned", project="x")

    result = backfill(project="project:x")

    assert {(c.from_, c.to) for c in result.candidates} == {("x-lesson", "x-plan")}


def test_commits_evidence_the_work_of_their_session_by_metadata_session_id() -> None:
    remember_in_session("retry-decision", "s-1", "retry with backoff", type="decision")
    remember_commit("commit-abc1234", "abc1234" + "0" * 33, session="s-1")
    remember("retry-decision-2", "again", type="decision")
    Relation.objects.create(
        from_entity=stored("commit-abc1234"), to_entity=stored("retry-decision-2"), type="mentions"
    )  # already related to something: still evidence

    result = backfill(apply=True)

    assert ("commit-abc1234", "retry-decision", "evidences") in edges()
    assert result.byRule["evidenceLinks"] == 1
    assert backfill(apply=True).byRule["evidenceLinks"] == 0  # it has its evidences edge now


def test_no_evidence_links_and_the_opt_in_rules_follow_their_flags() -> None:
    remember_in_session("d1", "s", "one", type="decision")
    remember_in_session("d2", "s", "two", type="decision")
    remember_commit("commit-1234567", "1234567", session="s")

    plain = backfill(evidence_links=False)
    with_session = backfill(evidence_links=False, session_cooccurrence=True)

    assert plain.candidates == [] and "evidenceLinks" not in plain.byRule
    assert [(c.from_, c.to, c.type) for c in with_session.candidates] == [
        ("d1", "d2", "co-created")
    ]


def test_archived_entities_take_part_only_when_asked() -> None:
    remember("old-plan", "archived plan", type="plan", project="app")
    remember("new-lesson", "lesson", type="lesson_learned", project="app")
    forget("old-plan")

    assert backfill().candidates == []
    assert [c.to for c in backfill(include_archived=True).candidates] == ["old-plan"]


def test_bad_values_are_refused_before_anything_runs() -> None:
    from core.errors import InvalidInput

    for bad in ({"max_per_source": 0}, {"min_jaccard": 1.5}, {"project": " "}, {"extra": 1}):
        with pytest.raises(InvalidInput):
            backfill(**bad)
