"""remember: the append-style upsert, its limits, relations and provenance (API reference)."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import InvalidInput
from graph.models import FACT_CONFIDENCE, HYPOTHESIS_CONFIDENCE, Entity
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
from tests.helpers import forget, names, observations_of, recall, remember, stored

pytestmark = pytest.mark.django_db


def rejected(payload: dict[str, Any]) -> InvalidInput:
    with pytest.raises(InvalidInput) as excinfo:
        OPERATIONS["remember"].run(payload, CallContext(source_host="test"))
    return excinfo.value


def rel(to: str, type: str = "related-to") -> dict[str, str]:
    return {"to": to, "type": type}


def valid(**overrides: Any) -> dict[str, Any]:
    return {"name": "limit-probe", "type": "note", "observations": ["fine"], **overrides}


# --- the upsert -----------------------------------------------------------------------------


def test_it_creates_an_entity_and_reports_what_it_stored() -> None:
    result = remember("auth-decision", "Chose JWT", "Using RS256", type="decision", tags=["a"])

    trust = result.pop("trust")  # the trust model's addition (tests/services/test_trust.py)
    assert (trust["status"], trust["confidence"]) == ("hypothesis", 0.5)
    assert result == {
        "stored": True,
        "entityId": stored("auth-decision").pk,
        "name": "auth-decision",
        "type": "decision",
        "created": True,
        "observations": 2,
        "tags": 1,
        "relations": 0,
    }


def test_it_keeps_the_type_of_the_first_write_when_another_type_is_sent() -> None:
    remember("auth-decision", "Chose JWT", type="decision")

    result = remember("auth-decision", "Rotate keys monthly", type="lesson")

    assert result["type"] == "decision"
    assert result["created"] is False
    assert stored("auth-decision").type == "decision"


def test_it_appends_new_observations_after_the_existing_ones_in_order() -> None:
    remember("auth-decision", "first", "second")

    result = remember("auth-decision", "third", "fourth")

    assert result["observations"] == 2
    assert observations_of("auth-decision") == ["first", "second", "third", "fourth"]


def test_it_does_not_store_an_observation_the_entity_already_has() -> None:
    remember("auth-decision", "Chose JWT")

    result = remember("auth-decision", "Chose JWT")

    assert result["observations"] == 0
    assert observations_of("auth-decision") == ["Chose JWT"]


def test_it_treats_an_observation_differing_only_in_whitespace_as_already_stored() -> None:
    remember("auth-decision", "Chose JWT for auth")

    result = remember("auth-decision", "  Chose   JWT\n\tfor auth ")

    assert result["observations"] == 0
    assert observations_of("auth-decision") == ["Chose JWT for auth"]


def test_it_stores_an_observation_repeated_within_one_call_once() -> None:
    result = remember("auth-decision", "Chose JWT", "Chose  JWT", "Chose JWT", "other")

    assert result["observations"] == 2
    assert observations_of("auth-decision") == ["Chose JWT", "other"]


def test_it_deduplicates_tags_within_a_call_and_against_stored_ones() -> None:
    remember("auth-decision", "x", tags=["topic:auth", "topic:auth", "project:a"])

    result = remember("auth-decision", tags=["project:a", "project:b", "project:b"])

    assert result["tags"] == 1
    tags = stored("auth-decision").tags.values_list("name", flat=True)
    assert list(tags) == ["topic:auth", "project:a", "project:b"]


# --- title ----------------------------------------------------------------------------------


def test_it_rejects_a_title_over_200_characters_instead_of_truncating_it() -> None:
    error = rejected(valid(title="t" * 201))

    assert error.field == "title"
    assert "title" in error.message
    assert not Entity.objects.exists()


def test_it_leaves_an_existing_title_alone_when_a_too_long_one_is_rejected() -> None:
    remember("auth-decision", "x", title="Why JWT")

    rejected(valid(name="auth-decision", title="t" * 201))

    assert stored("auth-decision").title == "Why JWT"


def test_it_accepts_a_title_of_exactly_200_characters() -> None:
    remember("auth-decision", "x", title="t" * 200)

    assert stored("auth-decision").title == "t" * 200


def test_it_gives_a_new_entity_no_title_when_the_title_is_whitespace_only() -> None:
    remember("auth-decision", "x", title="   \n ")

    assert stored("auth-decision").title is None
    assert recall("auth")["entities"][0]["title"] is None


def test_it_keeps_the_existing_title_when_the_title_is_whitespace_only() -> None:
    remember("auth-decision", "x", title="Why JWT")

    remember("auth-decision", "y", title="  ")

    assert stored("auth-decision").title == "Why JWT"


def test_it_replaces_the_title_when_a_new_one_is_supplied() -> None:
    remember("auth-decision", "x", title="Why JWT")

    remember("auth-decision", title="Why we dropped JWT")

    assert stored("auth-decision").title == "Why we dropped JWT"


def test_it_keeps_the_title_when_the_title_is_omitted() -> None:
    remember("auth-decision", "x", title="Why JWT")

    remember("auth-decision", "y")

    assert stored("auth-decision").title == "Why JWT"


# --- namespace and status -------------------------------------------------------------------


def test_it_puts_a_new_entity_in_the_personal_namespace_by_default() -> None:
    remember("auth-decision", "x")

    assert stored("auth-decision").namespace == "personal"


def test_it_does_not_report_a_move_when_it_creates_an_entity_in_another_namespace() -> None:
    result = remember("auth-decision", "x", namespace="team")

    assert stored("auth-decision").namespace == "team"
    assert "movedFromNamespace" not in result


def test_it_moves_an_existing_entity_to_an_explicitly_different_namespace() -> None:
    remember("auth-decision", "x")

    result = remember("auth-decision", namespace="team")

    entity = stored("auth-decision")
    assert result["movedFromNamespace"] == "personal"
    assert entity.namespace == "team"
    assert entity.metadata["previous_namespace"] == "personal"
    assert entity.metadata["provenance"] == {"source_host": "test"}


def test_it_reports_no_move_when_the_namespace_is_the_same_or_omitted() -> None:
    remember("auth-decision", "x", namespace="team")

    same = remember("auth-decision", "y", namespace="team")
    omitted = remember("auth-decision", "z")

    assert "movedFromNamespace" not in same
    assert "movedFromNamespace" not in omitted
    assert stored("auth-decision").namespace == "team"
    assert "previous_namespace" not in stored("auth-decision").metadata


def test_it_reactivates_an_archived_entity_and_recall_finds_it_again() -> None:
    remember("auth-decision", "Chose JWT")
    forget("auth-decision")
    assert names(recall("jwt")) == []

    result = remember("auth-decision", "Chose JWT")

    assert result["reactivated"] is True
    assert stored("auth-decision").status == "active"
    assert names(recall("jwt")) == ["auth-decision"]


# --- relations ------------------------------------------------------------------------------


def test_it_reports_the_relations_it_created() -> None:
    remember("api-design", "x")

    result = remember("error-pattern", "y", relations=[rel("api-design")])

    assert result["relations"] == 1
    assert result["relationsCreated"] == [
        {"from": "error-pattern", "to": "api-design", "type": "related-to"}
    ]
    assert "relationErrors" not in result


def test_it_reports_a_missing_relation_target_and_still_stores_the_entity() -> None:
    remember("api-design", "x")

    result = remember(
        "error-pattern",
        "y",
        relations=[rel("nowhere"), rel("api-design", "uses")],
    )

    assert result["stored"] is True
    assert result["relationErrors"] == ['Target entity "nowhere" not found']
    assert result["relationsCreated"] == [
        {"from": "error-pattern", "to": "api-design", "type": "uses"}
    ]
    assert observations_of("error-pattern") == ["y"]


def test_it_does_not_report_restating_an_existing_relation_as_created() -> None:
    remember("api-design", "x")
    remember("error-pattern", "y", relations=[rel("api-design")])

    result = remember("error-pattern", relations=[rel("api-design")])

    assert result["relations"] == 0
    assert result["relationsCreated"] == []
    assert stored("error-pattern").relations_out.count() == 1


def test_supersedes_archives_its_target_at_once() -> None:
    remember("old-auth", "sessions in cookies")
    assert names(recall("cookies")) == ["old-auth"]

    result = remember("new-auth", "tokens instead", relations=[rel("old-auth", "supersedes")])

    assert result["superseded"] == ["old-auth"]
    assert stored("old-auth").status == "archived"
    assert names(recall("cookies")) == []
    archived = recall("cookies", include_archived=True)["entities"]
    assert [(e["name"], e["status"]) for e in archived] == [("old-auth", "archived")]


def test_contradicts_surfaces_as_a_conflict_when_both_memories_are_recalled() -> None:
    remember("use-jwt", "authenticate with jwt")
    remember("no-jwt", "never jwt, sessions only", relations=[rel("use-jwt", "contradicts")])

    result = recall("jwt")

    assert sorted(names(result)) == ["no-jwt", "use-jwt"]
    assert result["conflicts"] == ['"no-jwt" contradicts "use-jwt"']


def test_contradicts_adds_no_conflicts_key_when_only_one_side_is_recalled() -> None:
    remember("use-jwt", "authenticate with jwt")
    remember("no-jwt", "sessions only", relations=[rel("use-jwt", "contradicts")])

    result = recall("sessions")

    assert names(result) == ["no-jwt"]
    assert "conflicts" not in result


# --- confidence (the trust model: docs/trust.md; tests/services/test_trust.py has the rest) ----


def test_a_new_unsourced_entity_is_a_hypothesis_at_the_hypothesis_confidence() -> None:
    remember("auth-decision", "x", "y")

    assert stored("auth-decision").confidence == HYPOTHESIS_CONFIDENCE
    assert stored("auth-decision").trust == "hypothesis"


def test_a_new_sourced_entity_is_a_fact_at_the_fact_confidence() -> None:
    remember("auth-decision", "x", source="docs/adr/1.md")

    assert stored("auth-decision").confidence == FACT_CONFIDENCE
    assert stored("auth-decision").trust == "fact"


def test_a_new_observation_no_longer_raises_confidence() -> None:
    # Before the trust model each new observation added 0.05: appending is not observing.
    remember("auth-decision", "x")

    for i in range(10):
        remember("auth-decision", f"obs {i}")

    assert stored("auth-decision").confidence == HYPOTHESIS_CONFIDENCE


# --- provenance -----------------------------------------------------------------------------


def test_it_stamps_source_host_from_the_call_context_on_first_insert() -> None:
    OPERATIONS["remember"].run(valid(name="auth-decision"), CallContext(source_host="codex"))

    assert stored("auth-decision").metadata["provenance"] == {"source_host": "codex"}
    assert recall("auth")["entities"][0]["metadata"]["provenance"]["source_host"] == "codex"


def test_a_later_remember_from_another_host_does_not_rewrite_source_host() -> None:
    OPERATIONS["remember"].run(valid(name="auth-decision"), CallContext(source_host="codex"))

    OPERATIONS["remember"].run(
        valid(name="auth-decision", observations=["more"]), CallContext(source_host="cli")
    )

    assert observations_of("auth-decision") == ["fine", "more"]
    assert stored("auth-decision").metadata["provenance"] == {"source_host": "codex"}


def test_it_rejects_source_host_as_an_input_field() -> None:
    error = rejected(valid(source_host="claude-code"))

    assert error.field == "source_host"
    assert not Entity.objects.exists()


def test_it_rejects_an_unknown_key() -> None:
    error = rejected(valid(importance=5))

    assert error.message == "importance: unknown field"


# --- limits and types -----------------------------------------------------------------------


def test_it_accepts_every_field_exactly_at_its_limit() -> None:
    for i in range(50):
        remember(f"target-{i}", "t")

    result = remember(
        "n" * 255,
        *[f"{i} " + "o" * (10_000 - len(f"{i} ")) for i in range(100)],
        type="t" * 100,
        tags=[f"{i:02d}" + "g" * 253 for i in range(50)],
        relations=[{"to": f"target-{i}", "type": "uses"} for i in range(50)],
    )

    assert (result["observations"], result["tags"], result["relations"]) == (100, 50, 50)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        pytest.param({"name": "n" * 256}, "name", id="a-name-over-255-characters"),
        pytest.param({"name": ""}, "name", id="an-empty-name"),
        pytest.param({"type": "t" * 101}, "type", id="a-type-over-100-characters"),
        pytest.param({"type": ""}, "type", id="an-empty-type"),
        pytest.param(
            {"observations": [f"o{i}" for i in range(101)]},
            "observations",
            id="more-than-100-observations",
        ),
        pytest.param(
            {"observations": ["ok", "o" * 10_001]},
            "observations[1]",
            id="an-observation-over-10000-characters",
        ),
        pytest.param(
            {"observations": ["ok", "  \n "]}, "observations[1]", id="a-blank-observation"
        ),
        pytest.param({"tags": [f"t{i}" for i in range(51)]}, "tags", id="more-than-50-tags"),
        pytest.param({"tags": ["g" * 256]}, "tags[0]", id="a-tag-over-255-characters"),
        pytest.param(
            {"relations": [{"to": f"t{i}", "type": "uses"} for i in range(51)]},
            "relations",
            id="more-than-50-relations",
        ),
        pytest.param({"name": 5}, "name", id="a-name-that-is-not-a-string"),
        pytest.param({"observations": [42]}, "observations[0]", id="an-observation-not-a-string"),
        pytest.param({"tags": "project:a"}, "tags", id="tags-given-as-one-string"),
    ],
)
def test_it_rejects_an_input_breaking_a_limit_or_type_and_names_the_field(
    overrides: dict[str, Any], field: str
) -> None:
    error = rejected(valid(**overrides))

    assert error.field == field
    assert error.message.startswith(f"{field}: ")
    assert not Entity.objects.exists()
