"""Migration 0005's data step: the memories stored before the trust model are classified
honestly (graph/migrations/0005_trust.py has the rules, docs/trust.md explains them).

Rows are shaped as the old code left them (0.8 + 0.05 steps, no trust columns set), then the
migration's function runs over them with the current app registry, as
tests/services/test_proposal_migrations.py does for proposals' data step."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from graph.models import Entity, Relation
from tests.helpers import remember, stored

pytestmark = pytest.mark.django_db

migration = importlib.import_module("graph.migrations.0005_trust")


def legacy(name: str, *, confidence: float = 0.8, **metadata: Any) -> None:
    """`name` as it was before 0005: no trust columns set, metadata as the old code wrote it."""
    Entity.objects.filter(name=name).update(
        confidence=confidence,
        trust="hypothesis",
        source=None,
        invalidation_condition="",
        last_observed_at=None,
        hop_count=0,
        kind="semantic",
        metadata={"provenance": {"source_host": "cli"}, **metadata},
    )


def test_an_explicit_remember_is_a_fact_sourced_by_its_author_keeping_its_confidence() -> None:
    remember("jwt", "Chose JWT", type="decision")
    legacy("jwt", confidence=0.85, why="stateless; revisit if we add sessions")

    migration.classify_all(apps, None)

    jwt = stored("jwt")
    assert (jwt.trust, jwt.source, jwt.confidence) == ("fact", "legacy:cli", 0.85)
    assert jwt.last_observed_at == jwt.updated_at
    assert jwt.invalidation_condition == "stateless; revisit if we add sessions"
    assert jwt.metadata["trust_history"][-1]["rule"] == "explicit"
    assert "from_confidence" not in jwt.metadata["trust_history"][-1]


def test_an_imported_memory_is_a_hypothesis_at_most_one_half() -> None:
    remember("theirs", "their claim")
    legacy("theirs", untrusted=True, **{"import": {"at": "x", "strategy": "skip"}})

    migration.classify_all(apps, None)

    theirs = stored("theirs")
    assert (theirs.trust, theirs.source, theirs.confidence) == ("hypothesis", None, 0.5)
    event = theirs.metadata["trust_history"][-1]
    assert (event["rule"], event["from_confidence"]) == ("imported", 0.8)


@pytest.mark.parametrize(
    ("type_", "extra", "tags"),
    [
        ("session_summary", {}, []),
        ("note", {"title_source": "heuristic"}, []),
        ("note", {}, ["source:auto-capture"]),
        ("note", {"provenance": {"source_host": "hook:stop"}}, []),
    ],
)
def test_a_hook_capture_is_a_hypothesis(type_: str, extra: dict[str, Any], tags: list[str]) -> None:
    remember("captured", "session went fine", type=type_, tags=tags)
    legacy("captured", **extra)

    migration.classify_all(apps, None)

    captured = stored("captured")
    assert (captured.trust, captured.confidence) == ("hypothesis", 0.5)
    assert captured.metadata["trust_history"][-1]["rule"] == "hook"


def test_a_captured_commit_carrying_its_hash_is_a_fact_sourced_by_it() -> None:
    remember("commit-abc", "fix the parser", type="commit")
    legacy("commit-abc", hash="abc1234")

    migration.classify_all(apps, None)

    commit = stored("commit-abc")
    assert (commit.trust, commit.source, commit.kind) == ("fact", "git:abc1234", "episodic")
    assert commit.last_observed_at == commit.created_at


def test_a_dream_digest_is_a_hypothesis_no_more_confident_than_its_sources() -> None:
    remember("s1", "one")
    remember("s2", "two")
    remember("digest", "both", type="digest")
    legacy("s1", confidence=0.9, why="if the parser changes")
    legacy("s2", confidence=0.6)
    legacy("digest", confidence=0.8)
    Entity.objects.filter(name="digest").update(metadata={"provenance": {"source_host": "dream"}})
    for source in ("s1", "s2"):
        Relation.objects.create(
            from_entity=stored("digest"), to_entity=stored(source), type="summarizes"
        )

    migration.classify_all(apps, None)

    digest = stored("digest")
    assert (digest.trust, digest.confidence, digest.hop_count) == ("hypothesis", 0.6, 1)
    assert digest.parent_id == stored("s1").pk
    assert digest.invalidation_condition == "if the parser changes"


def test_undoing_the_data_step_gives_back_the_lowered_confidence() -> None:
    remember("theirs", "their claim")
    legacy("theirs", confidence=0.9, untrusted=True)
    migration.classify_all(apps, None)
    assert stored("theirs").confidence == 0.5

    migration.unclassify_all(apps, None)

    theirs = stored("theirs")
    assert theirs.confidence == 0.9 and "trust_history" not in theirs.metadata


def test_nothing_is_ever_raised_by_the_classification() -> None:
    remember("low", "x")
    legacy("low", confidence=0.3)
    remember("old", "y")
    legacy("old", confidence=0.95)
    Entity.objects.filter(name="old").update(updated_at=timezone.now() - timedelta(days=90))

    migration.classify_all(apps, None)

    assert stored("low").confidence == 0.3 and stored("old").confidence == 0.95


@pytest.mark.django_db(transaction=True)
def test_the_schema_step_adds_and_drops_the_columns() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("graph", "0004_session_outcomes")])
    with connection.cursor() as cur:
        columns = {
            c.name for c in connection.introspection.get_table_description(cur, "graph_entity")
        }
    assert "trust" not in columns and "expires_at" not in columns

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    with connection.cursor() as cur:
        columns = {
            c.name for c in connection.introspection.get_table_description(cur, "graph_entity")
        }
    assert set(migration.NEW_COLUMNS) <= columns
