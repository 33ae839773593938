"""The trust model (docs/trust.md; graph/ops/kit/trust/): provenance on every memory, observe,
supersede, forget's reason, memory_list, recall's trust block and filter, import and dream
accept without confidence laundering, ping."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from core.errors import InvalidInput, NotFound, OperationFailed
from graph.errors import ObserveRequired, SourceRequired
from graph.models import Entity, Relation
from graph.ops.kit.operation import CallContext
from graph.ops.memory_list import MemoryListInput, memory_list
from graph.ops.observe import ObserveInput, memory_observe
from graph.ops.registry import OPERATIONS
from proposals.decisions import proposal_accept
from proposals.models import ProposalKind
from proposals.staging import proposal_stage
from tests.helpers import CTX, forget, names, recall, remember, stored

pytestmark = pytest.mark.django_db


def run(op: str, **payload: Any) -> dict[str, Any]:
    return OPERATIONS[op].run(payload, CTX)


def observe(name: str, **fields: Any) -> dict[str, Any]:
    return run("observe", name=name, **fields)


def trust_of(name: str) -> dict[str, Any]:
    """The trust block recall shows for `name` (archived ones included)."""
    entity = stored(name)
    listed = recall(include_archived=True, limit=100)["entities"]
    return next(e["trust"] for e in listed if e["id"] == entity.pk)


# --- remember: sourced => fact, unsourced => hypothesis ----------------------------------------


def test_a_sourced_memory_is_a_fact_observed_now_at_confidence_one() -> None:
    result = remember("deploy", "The deploy script restarts php-fpm", source="runbook")

    trust = result["trust"]
    assert (trust["status"], trust["confidence"], trust["source"]) == ("fact", 1.0, "runbook")
    assert trust["last_observed_at"] is not None and trust["observed_age_days"] == 0.0
    assert (trust["hop_count"], trust["unattributable"], trust["stale"]) == (0, False, False)
    assert trust["source_origin"] == "local" and trust["unconfirmed_since"] is None


def test_an_unsourced_memory_is_a_hypothesis_never_observed_at_one_half() -> None:
    result = remember("guess", "The cache is probably warm at night")

    trust = result["trust"]
    assert (trust["status"], trust["confidence"], trust["source"]) == ("hypothesis", 0.5, None)
    assert trust["last_observed_at"] is None and trust["observed_age_days"] is None
    assert trust["unconfirmed_since"] == trust_of("guess")["unconfirmed_since"] is not None


def test_confidence_and_the_invalidation_fields_are_inputs() -> None:
    remember(
        "deploy",
        "restarts php-fpm",
        source="runbook",
        confidence=0.9,
        invalidation_tag="architectural",
        invalidation_condition="delete if deploys move to a  zero-downtime\nreload",
        kind="episodic",
    )

    trust = trust_of("deploy")
    assert trust["confidence"] == 0.9 and trust["kind"] == "episodic"
    assert trust["invalidation_tag"] == "architectural"
    # One line: a union of conditions holds one per line.
    assert trust["invalidation_condition"] == "delete if deploys move to a zero-downtime reload"


def test_a_decisions_why_is_its_invalidation_condition_when_none_is_given() -> None:
    remember("jwt", "Chose JWT", type="decision", why="stateless; revisit if we add sessions")

    assert trust_of("jwt")["invalidation_condition"] == "stateless; revisit if we add sessions"


def test_activity_types_are_episodic_and_the_rest_semantic_by_default() -> None:
    remember("c1", "commit abc", type="commit")
    remember("n1", "a fact")

    assert (trust_of("c1")["kind"], trust_of("n1")["kind"]) == ("episodic", "semantic")


def test_an_unsourced_derivation_is_one_hop_further_and_no_more_confident_than_its_parent() -> None:
    parent = remember("p", "parent fact", source="doc", confidence=0.7, invalidation_tag="temporal")
    remember(
        "child",
        "derived claim",
        parent_id=parent["entityId"],
        confidence=0.9,
        invalidation_condition="if p is retired",
    )

    trust = trust_of("child")
    assert (trust["status"], trust["confidence"], trust["hop_count"]) == ("hypothesis", 0.7, 1)
    assert trust["parent_id"] == parent["entityId"] and trust["unattributable"] is True
    assert trust["invalidation_tag"] == "temporal"
    assert trust["invalidation_condition"] == "if p is retired"

    grandchild = remember("gc", "derived again", parent_id=stored("child").pk)
    assert grandchild["trust"]["hop_count"] == 2


def test_a_sourced_memory_with_a_parent_is_attributable_at_hop_zero() -> None:
    parent = remember("p", "parent", confidence=0.3)
    result = remember("child", "checked it myself", parent_id=parent["entityId"], source="test run")

    assert (result["trust"]["status"], result["trust"]["hop_count"]) == ("fact", 0)
    assert result["trust"]["confidence"] == 1.0


def test_an_unknown_parent_is_refused_naming_parent_id() -> None:
    with pytest.raises(InvalidInput) as info:
        remember("child", "x", parent_id=999)
    assert info.value.field == "parent_id"
    assert not Entity.objects.filter(name="child").exists()


@pytest.mark.parametrize(
    "fields",
    [{"confidence": 1.5}, {"confidence": -0.1}, {"invalidation_tag": "weekly"}, {"ttl_hours": 0}],
)
def test_out_of_range_provenance_is_a_bad_body(fields: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        remember("m", "x", **fields)


# --- remember on an existing memory: doubt may be added, trust never raised -------------------


def test_a_remember_cannot_promote_an_existing_hypothesis_with_a_source() -> None:
    remember("guess", "maybe")

    with pytest.raises(ObserveRequired) as info:
        remember("guess", "more", source="now I know")

    assert (info.value.error_code, info.value.http_status, info.value.field) == (
        "trust.observe-required",
        409,
        "source",
    )
    assert stored("guess").trust == "hypothesis"
    assert [o.text for o in stored("guess").observations.all()] == ["maybe"]  # rolled back


def test_a_remember_cannot_raise_an_existing_memorys_confidence() -> None:
    remember("guess", "maybe", confidence=0.4)

    with pytest.raises(ObserveRequired):
        remember("guess", "maybe", confidence=0.45)
    assert stored("guess").confidence == 0.4


def test_a_remember_may_lower_confidence_and_add_doubt() -> None:
    remember("fact", "x", source="doc", invalidation_condition="if A")

    remember(
        "fact",
        "y",
        source="doc",  # the stored source again: not a change
        confidence=0.6,
        invalidation_condition="if B",
        invalidation_tag="paradigm",
    )

    trust = trust_of("fact")
    assert (trust["status"], trust["confidence"]) == ("fact", 0.6)
    assert trust["invalidation_condition"] == "if A\nif B"
    assert trust["invalidation_tag"] == "paradigm"


def test_appending_observations_never_raises_confidence() -> None:
    remember("guess", "one")
    for i in range(5):
        remember("guess", f"more {i}")

    assert stored("guess").confidence == 0.5


# --- observe: the only path from hypothesis to fact ---------------------------------------------


def test_observe_with_a_source_promotes_a_hypothesis_to_a_fact() -> None:
    remember("guess", "the cache is warm at night")

    result = observe("guess", source="grafana dashboard")

    assert result["promoted"] is True
    assert (result["previous_status"], result["previous_confidence"]) == ("hypothesis", 0.5)
    trust = result["trust"]
    assert (trust["status"], trust["source"], trust["confidence"]) == (
        "fact",
        "grafana dashboard",
        0.6,
    )
    assert trust["last_observed_at"] is not None and trust["hop_count"] == 0
    assert trust_of("guess")["status"] == "fact"


def test_observe_without_a_source_refuses_to_promote_a_hypothesis() -> None:
    remember("guess", "maybe")

    with pytest.raises(SourceRequired) as info:
        observe("guess")

    assert (info.value.error_code, info.value.http_status) == ("trust.source-required", 400)
    assert stored("guess").trust == "hypothesis"


def test_observe_re_stamps_a_fact_and_raises_its_confidence_up_to_one() -> None:
    remember("fact", "x", source="doc", confidence=0.85)
    Entity.objects.filter(name="fact").update(last_observed_at=timezone.now() - timedelta(days=40))
    assert trust_of("fact")["stale"] is True

    first = observe("fact")
    second = observe("fact")

    assert first["trust"]["confidence"] == 0.95 and second["trust"]["confidence"] == 1.0
    assert first["promoted"] is False and first["trust"]["source"] == "doc"
    assert trust_of("fact")["stale"] is False


def test_observe_takes_an_explicit_confidence_and_a_memory_id() -> None:
    stored_id = remember("guess", "maybe")["entityId"]

    result = observe_by_id(stored_id, source="log line", confidence=0.8)

    assert result["name"] == "guess" and result["trust"]["confidence"] == 0.8


def observe_by_id(entity_id: int, **fields: Any) -> dict[str, Any]:
    return run("observe", id=entity_id, **fields)


def test_observe_names_exactly_one_memory_and_refuses_unknown_and_archived_ones() -> None:
    remember("gone", "x", source="doc")
    forget("gone")

    with pytest.raises(InvalidInput):
        run("observe", source="s")
    with pytest.raises(InvalidInput):
        run("observe", name="gone", id=1, source="s")
    with pytest.raises(NotFound):
        observe("never", source="s")
    with pytest.raises(NotFound):
        observe_by_id(12345, source="s")
    with pytest.raises(OperationFailed):
        observe("gone", source="s")


def test_observe_records_its_event_in_the_history() -> None:
    remember("guess", "maybe")
    observe("guess", source="doc")

    history = memory_list(data=MemoryListInput()).memories[0].history
    assert [e["action"] for e in history] == ["remember", "observe"]
    assert history[1]["source"] == "doc" and history[1]["promoted"] is True


# --- supersede: new replaces old, old kept and linked -------------------------------------------


def test_supersede_archives_the_old_memory_and_links_the_new_one() -> None:
    old = remember("admin", "The admin dashboard is at /admin", tags=["project:app"])

    result = run(
        "supersede",
        name="admin",
        observations=["The admin dashboard moved to /manage"],
        source="routes",
    )

    new = result["new"]
    assert result["superseded"] == {
        "id": old["entityId"],
        "name": "admin",
        "status": "archived",
        "superseded_by": new["entityId"],
    }
    assert new["name"] == "admin-v2" and new["trust"]["status"] == "fact"
    assert new["trust"]["parent_id"] == old["entityId"]
    assert stored("admin").status == "archived"
    assert stored("admin").metadata["superseded_by"] == {"id": new["entityId"], "name": "admin-v2"}
    assert Relation.objects.filter(
        from_entity__name="admin-v2", to_entity__name="admin", type="supersedes"
    ).exists()
    assert list(stored("admin-v2").tags.values_list("name", flat=True)) == ["project:app"]
    assert names(recall("admin dashboard")) == ["admin-v2"]


def test_an_unsourced_supersede_is_a_hypothesis_derived_from_the_old_memory() -> None:
    remember("admin", "at /admin", source="routes", confidence=0.8)

    new = run("supersede", name="admin", new_name="admin-now", observations=["at /manage"])["new"]

    assert new["name"] == "admin-now"
    trust = new["trust"]
    assert (trust["status"], trust["confidence"], trust["hop_count"]) == ("hypothesis", 0.5, 1)


def test_supersede_refuses_an_archived_memory_and_an_existing_new_name() -> None:
    remember("a", "x")
    remember("b", "y")
    with pytest.raises(OperationFailed):
        run("supersede", name="a", new_name="b", observations=["z"])
    forget("a")
    with pytest.raises(OperationFailed):
        run("supersede", name="a", observations=["z"])
    assert stored("b").status == "active"


def test_supersede_of_a_decision_over_the_agent_transports_needs_why() -> None:
    remember("jwt", "Chose JWT", type="decision", why="stateless")
    agent = CallContext(source_host="agent", guide_rules=True)

    with pytest.raises(InvalidInput) as info:
        OPERATIONS["supersede"].run({"name": "jwt", "observations": ["Sessions"]}, agent)

    assert info.value.field == "why"
    assert stored("jwt").status == "active"


# --- forget with a reason ---------------------------------------------------------------------


def test_forget_keeps_its_reason_with_the_memory_and_in_its_history() -> None:
    remember("staging", "staging runs on host-7")

    result = forget("staging", reason="staging decommissioned")

    assert result == {"name": "staging", "archived": True, "reason": "staging decommissioned"}
    forgotten = stored("staging").metadata["forgotten"]
    assert forgotten["reason"] == "staging decommissioned" and forgotten["at"].endswith("Z")
    row = memory_list(data=MemoryListInput(status="archived")).memories[0]
    assert row.history[-1]["action"] == "forget"
    assert row.history[-1]["reason"] == "staging decommissioned"


def test_removing_one_observation_records_the_reason_too() -> None:
    remember("m", "keep", "drop")

    result = forget("m", observation="drop", reason="was wrong")

    assert result["removed"] is True and result["reason"] == "was wrong"
    event = stored("m").metadata["trust_history"][-1]
    assert (event["observation"], event["reason"]) == ("drop", "was wrong")


# --- memory_list: browse and audit -------------------------------------------------------------


def test_memory_list_filters_by_trust_status_kind_and_staleness() -> None:
    remember("f", "a fact", source="doc")
    remember("h", "a guess")
    remember("c", "commit 1", type="commit")
    remember("old", "an old fact", source="doc")
    Entity.objects.filter(name="old").update(last_observed_at=timezone.now() - timedelta(days=31))
    remember("gone", "x")
    forget("gone", reason="wrong")

    def listed(**fields: Any) -> list[str]:
        return [m.name for m in memory_list(data=MemoryListInput(**fields)).memories]

    assert set(listed()) == {"f", "h", "c", "old"}
    assert set(listed(status="fact")) == {"f", "old"}
    assert set(listed(status="hypothesis")) == {"h", "c"}
    assert listed(status="archived") == ["gone"]
    assert listed(kind="episodic") == ["c"]
    assert listed(stale=True) == ["old"]


def test_memory_list_pages_newest_first_and_counts_every_match() -> None:
    for i in range(5):
        remember(f"m{i}", f"memory {i}")

    page = memory_list(data=MemoryListInput(limit=2, offset=1))

    assert [m.name for m in page.memories] == ["m3", "m2"]
    assert (page.total, page.truncated) == (5, True)


def test_memory_list_counts_no_access() -> None:
    remember("m", "x")
    memory_list(data=MemoryListInput())

    assert stored("m").access_count == 0


# --- recall shows trust --------------------------------------------------------------------------


def test_every_recall_result_carries_its_trust_block_and_hides_the_history() -> None:
    remember("deploy", "deploy restarts php-fpm", source="runbook")

    [entity] = recall("php-fpm")["entities"]

    assert entity["trust"]["status"] == "fact"
    assert "trust_history" not in entity["metadata"]


def test_recall_filters_by_trust_status_on_both_paths() -> None:
    remember("f", "deploy fact", source="doc")
    remember("h", "deploy guess")

    assert names(recall("deploy", status="fact")) == ["f"]
    assert names(recall("deploy", status="hypothesis")) == ["h"]
    assert names(recall(status="fact")) == ["f"]


def test_the_confidence_factor_uses_the_real_confidence() -> None:
    # Same words, same age: the more confident memory ranks first.
    remember("low", "the deploy uses blue green", confidence=0.1)
    remember("high", "the deploy uses blue green", source="runbook", confidence=1.0)
    Entity.objects.update(updated_at=timezone.now())

    assert names(recall("deploy blue green"))[:2] == ["high", "low"]


# --- import: hypotheses unless sourced; never raises an existing memory's trust ------------------


def import_bundle(entities: list[dict[str, Any]], strategy: str = "append") -> dict[str, Any]:
    return run("import", data={"entities": entities}, merge_strategy=strategy)


def test_an_imported_memory_is_a_hypothesis_unless_its_entry_carries_a_source() -> None:
    import_bundle(
        [
            {"name": "plain", "type": "note", "observations": ["x"]},
            {
                "name": "claimed",
                "type": "note",
                "observations": ["y"],
                "trust": {"status": "fact", "confidence": 0.9},  # a status alone is not read
            },
            {
                "name": "sourced",
                "type": "note",
                "observations": ["z"],
                "trust": {"source": "their runbook", "confidence": 0.9, "hop_count": 0},
            },
        ]
    )

    assert trust_of("plain")["status"] == "hypothesis"
    assert trust_of("claimed")["status"] == "hypothesis"
    sourced = trust_of("sourced")
    assert (sourced["status"], sourced["source_origin"]) == ("fact", "imported")


def test_an_import_never_raises_the_trust_of_an_existing_memory() -> None:
    remember("guess", "maybe", confidence=0.3)

    for strategy in ("append", "overwrite"):
        import_bundle(
            [
                {
                    "name": "guess",
                    "type": "note",
                    "observations": [f"more via {strategy}"],
                    "trust": {"source": "someone", "confidence": 1.0},
                }
            ],
            strategy,
        )

    entity = stored("guess")
    assert (entity.trust, entity.confidence, entity.source) == ("hypothesis", 0.3, None)
    assert trust_of("guess")["source_origin"] == "imported"


def test_export_then_import_keeps_facts_facts_and_hypotheses_hypotheses() -> None:
    remember("f", "a fact", source="doc", confidence=0.9, invalidation_tag="temporal")
    remember("h", "a guess", confidence=0.2)
    bundle = run("export")
    Entity.objects.all().delete()

    import_bundle(bundle["entities"])

    f, h = trust_of("f"), trust_of("h")
    assert (f["status"], f["source"], f["confidence"], f["invalidation_tag"]) == (
        "fact",
        "doc",
        0.9,
        "temporal",
    )
    assert (h["status"], h["confidence"]) == ("hypothesis", 0.2)


def test_a_bad_trust_block_in_an_entry_is_reported_not_stored() -> None:
    result = import_bundle(
        [{"name": "bad", "type": "note", "observations": ["x"], "trust": {"confidence": 7}}]
    )

    assert len(result["errors"]) == 1 and "confidence" in result["errors"][0]
    assert not Entity.objects.filter(name="bad").exists()


# --- dream accept: no confidence laundering ------------------------------------------------


def _stage(kind: str, source_names: list[str]) -> int:
    proposal, _ = proposal_stage(
        kind=kind,
        project="alpha",
        cluster_key="k",
        source_ids=[stored(n).pk for n in source_names],
        proposed={"name": "summary", "observations": ["what they share"]},
    )
    return proposal.pk


def test_an_accepted_digest_is_a_hypothesis_at_its_sources_minimum_confidence() -> None:
    remember("s1", "one", source="doc", confidence=0.9, invalidation_tag="temporal")
    remember(
        "s2",
        "two",
        confidence=0.4,
        invalidation_tag="architectural",
        invalidation_condition="if the parser is rewritten",
    )
    remember("s3", "three", source="log", parent_id=stored("s1").pk)

    proposal_accept(_stage(ProposalKind.DIGEST, ["s1", "s2", "s3"]), channel="cli")

    digest = stored("summary")
    assert (digest.trust, digest.confidence, digest.hop_count) == ("hypothesis", 0.4, 1)
    assert digest.invalidation_tag == "temporal, architectural"
    assert digest.invalidation_condition == "if the parser is rewritten"
    assert digest.parent_id == stored("s1").pk and digest.last_observed_at is None
    assert stored("s1").metadata["forgotten"]["reason"].startswith('summarised by digest "summary"')


def test_an_accepted_pattern_is_a_hypothesis_too_and_accepting_promotes_nothing() -> None:
    remember("e1", "evidence one", source="doc")
    remember("e2", "evidence two", source="doc", confidence=0.7)

    proposal_accept(_stage(ProposalKind.PATTERN_EMERGENT, ["e1", "e2"]), channel="cli")

    pattern = stored("summary")
    assert (pattern.trust, pattern.confidence) == ("hypothesis", 0.7)
    assert (stored("e1").trust, stored("e1").confidence) == ("fact", 1.0)
    observe("summary", source="reviewed the two commits")
    assert stored("summary").trust == "fact"


def test_a_derived_memory_one_hop_further_than_its_furthest_source() -> None:
    parent = remember("p", "root", source="doc")
    remember("d1", "derived", parent_id=parent["entityId"])  # hop 1
    remember("d0", "direct")  # hop 0

    proposal_accept(_stage(ProposalKind.DIGEST, ["d1", "d0"]), channel="cli")

    assert stored("summary").hop_count == 2


# --- ping -----------------------------------------------------------------------------------------


def test_ping_echoes_and_reports_the_agent_the_embedder_and_the_backend() -> None:
    remember("m", "x")

    result = OPERATIONS["ping"].run(
        {"message": "hello"}, CallContext(source_host="claude-code", project="acme")
    )

    assert result["message"] == "hello"
    assert result["agent"] == {"source_host": "claude-code", "project": "acme"}
    # `sqlite`, or `postgresql` when the suite runs on a team server's database.
    assert result["backend"]["engine"] == connection.vendor
    assert result["backend"]["memories"] == 1
    if connection.vendor == "postgresql":
        assert result["backend"]["version"].startswith("16.") and result["backend"]["vectors"]
    assert result["embedder"]["probed"] is False and result["embedder"]["reachable"] is None
    assert run("ping")["message"] == "pong"


def test_ping_probes_the_embedder_only_when_asked(settings: Any) -> None:
    probed = run("ping", probe=True)["embedder"]

    if probed["provider"] == "none":
        assert probed["reachable"] is None
    else:
        assert probed["probed"] is True and probed["reachable"] in (True, False)


def test_observe_service_takes_the_clock_it_stamps_with() -> None:
    remember("guess", "maybe")
    then = timezone.now() + timedelta(days=3)

    out = memory_observe(data=ObserveInput(name="guess", source="doc"), now=then)

    assert out.trust.last_observed_at is not None
    assert stored("guess").last_observed_at == then
