"""remember's agent-guide extensions: `note`, `replace`, `why` and `project`.

The API reference's upsert is covered by test_remember.py; these must not break it.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from core.errors import InvalidInput
from graph.models import Entity
from graph.ops.kit.fields import MAX_TITLE
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
from graph.ops.remember.note import parse_note
from graph.ops.remember.schema import RememberInput
from graph.ops.remember.service import entity_remember
from tests.helpers import names, observations_of, recall, remember, stored

pytestmark = pytest.mark.django_db

CTX = CallContext(source_host="test")


def run(payload: dict[str, Any]) -> dict[str, Any]:
    return OPERATIONS["remember"].run(payload, CTX)


def rejected(payload: dict[str, Any]) -> InvalidInput:
    with pytest.raises(InvalidInput) as excinfo:
        run(payload)
    return excinfo.value


def tags_of(name: str) -> set[str]:
    return set(stored(name).tags.values_list("name", flat=True))


def direct(payload: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The service itself, for what the transport passes in (the caller's project)."""
    data = RememberInput.model_validate(payload)
    return entity_remember(data=data, source_host="test", **kwargs).model_dump(
        mode="json", by_alias=True
    )


NOTE = "Use WAL mode for SQLite\n\nConcurrent readers need it.\nIt is set at connect.\n\nKeep it."


# --- note -----------------------------------------------------------------------------------


def test_a_note_becomes_a_titled_memory_with_one_observation_per_paragraph() -> None:
    result = run({"note": NOTE})

    entity = stored(result["name"])
    assert entity.title == "Use WAL mode for SQLite"
    assert entity.type == "note"
    assert observations_of(entity.name) == [
        "Concurrent readers need it.\nIt is set at connect.",
        "Keep it.",
    ]
    assert result["derived"] == {
        "name": entity.name,
        "title": "Use WAL mode for SQLite",
        "observations": ["Concurrent readers need it.\nIt is set at connect.", "Keep it."],
    }
    assert result["created"] is True
    assert result["name"].startswith("note-use-wal-mode-for-sqlite-")


def test_the_same_note_twice_is_one_memory() -> None:
    first = run({"note": NOTE})
    second = run({"note": NOTE.replace("\n\nKeep", "\n\n   \n\nKeep") + "\n"})

    assert second["name"] == first["name"]
    assert second["created"] is False
    assert second["observations"] == 0
    assert Entity.objects.count() == 1


def test_two_notes_sharing_a_first_line_are_two_memories() -> None:
    a = run({"note": "Deploy notes\n\nUse blue-green."})
    b = run({"note": "Deploy notes\n\nUse canaries."})

    assert a["name"] != b["name"]
    assert Entity.objects.count() == 2


def test_a_note_accepts_a_name_a_type_and_tags() -> None:
    result = run({"note": NOTE, "name": "wal", "type": "pattern", "tags": ["topic:db"]})

    assert result["name"] == "wal" == result["derived"]["name"]
    assert stored("wal").type == "pattern"
    assert tags_of("wal") == {"topic:db"}


def test_a_note_is_found_by_recall_through_its_title_and_paragraphs() -> None:
    result = run({"note": NOTE})

    assert names(recall("concurrent readers")) == [result["name"]]
    assert names(recall("WAL")) == [result["name"]]


def test_a_first_line_over_the_title_limit_is_shortened_and_kept_whole() -> None:
    first_line = "word " * 60  # 300 characters
    parsed = parse_note(first_line + "\n\nbody")

    assert len(parsed.title) <= MAX_TITLE
    assert parsed.title.endswith("…")
    assert parsed.observations == [first_line.strip(), "body"]
    result = run({"note": first_line + "\n\nbody"})
    assert stored(result["name"]).title == parsed.title


def test_a_note_with_a_title_is_refused_naming_title() -> None:
    error = rejected({"note": NOTE, "title": "Other"})

    assert error.field == "title"
    assert Entity.objects.count() == 0


def test_without_note_name_and_type_are_still_required() -> None:
    assert rejected({"type": "note", "observations": ["x"]}).field == "name"
    assert rejected({"name": "n", "observations": ["x"]}).field == "type"


def test_a_note_with_an_over_long_paragraph_is_refused_naming_note() -> None:
    error = rejected({"note": "Title\n\n" + "x" * 10_001})

    assert error.field == "note"
    assert Entity.objects.count() == 0


# --- replace --------------------------------------------------------------------------------


def test_replace_rewrites_the_observations_and_keeps_the_old_ones_in_history() -> None:
    remember("db-choice", "We use MySQL", "Port 3306", tags=["topic:db"])

    result = run(
        {"name": "db-choice", "replace": True, "observations": ["We use Postgres", "Port 5432"]}
    )

    assert observations_of("db-choice") == ["We use Postgres", "Port 5432"]
    history = stored("db-choice").metadata["replaced_history"]
    assert [h["observations"] for h in history] == [["We use MySQL", "Port 3306"]]
    assert history[0]["at"]
    assert result["replacedHistoryCount"] == 1
    assert result["observations"] == 2
    assert result["type"] == "note"  # no type needed, the stored one kept
    assert tags_of("db-choice") == {"topic:db"}  # tags not passed: untouched


def test_a_replaced_line_stops_showing_up_in_recall_which_shows_only_the_count() -> None:
    remember("db-choice", "We use mysqlzz")
    run({"name": "db-choice", "replace": True, "observations": ["We use Postgres"]})
    run({"name": "db-choice", "replace": True, "observations": ["We use Postgres 16"]})

    assert names(recall("mysqlzz")) == []
    [entity] = recall("postgres")["entities"]
    assert entity["replaced_history_count"] == 2
    assert "replaced_history" not in entity["metadata"]
    assert entity["metadata"]["provenance"] == {"source_host": "test"}


def test_recall_omits_the_count_for_a_memory_never_replaced() -> None:
    remember("plain", "never replaced")

    [entity] = recall("replaced")["entities"]
    assert "replaced_history_count" not in entity


def test_replace_with_tags_rewrites_them_but_keeps_the_project_filing() -> None:
    remember("t", "x", tags=["topic:a", "project:app"])

    run({"name": "t", "replace": True, "observations": ["y"], "tags": ["topic:b"]})

    assert tags_of("t") == {"topic:b", "project:app"}
    assert stored("t").metadata["replaced_history"][0]["tags"] == ["topic:a", "project:app"]


def test_replace_with_a_different_type_reclassifies() -> None:
    remember("t", "x", type="note")

    result = run({"name": "t", "type": "pattern", "replace": True, "observations": ["y"]})

    assert result["type"] == "pattern"
    assert stored("t").metadata["replaced_history"][0]["type"] == "note"


def test_replace_by_note_rewrites_observations_and_title() -> None:
    remember("t", "old", title="Old title")

    run({"name": "t", "replace": True, "note": "New title\n\nnew fact"})

    assert stored("t").title == "New title"
    assert observations_of("t") == ["new fact"]
    assert stored("t").metadata["replaced_history"][0]["title"] == "Old title"


def test_a_replace_that_changes_nothing_records_no_version() -> None:
    remember("t", "same")

    result = run({"name": "t", "replace": True, "observations": ["same"]})

    assert "replacedHistoryCount" not in result
    assert "replaced_history" not in stored("t").metadata


def test_a_replace_with_neither_observations_nor_note_is_refused() -> None:
    remember("t", "keep me")

    assert rejected({"name": "t", "replace": True}).field == "replace"
    assert rejected({"name": "t", "replace": True, "note": "only a title"}).field == "replace"
    assert observations_of("t") == ["keep me"]


def test_a_replace_of_a_missing_name_creates_it_and_needs_a_type() -> None:
    error = rejected({"name": "new", "replace": True, "observations": ["x"]})
    assert error.field == "type"
    assert Entity.objects.count() == 0

    result = run({"name": "new", "type": "note", "replace": True, "observations": ["x"]})
    assert result["created"] is True
    assert "replaced_history" not in stored("new").metadata


def test_a_replace_that_fails_half_way_leaves_the_old_version_in_place() -> None:
    remember("target", "exists")
    remember("t", "original zebra")
    if connection.vendor == "postgresql":  # a trigger runs a function there
        create = [
            "CREATE FUNCTION test_abort_rel() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN RAISE EXCEPTION 'refused by test'; END $$",
            "CREATE TRIGGER test_abort_rel BEFORE INSERT ON graph_relation"
            " FOR EACH ROW EXECUTE FUNCTION test_abort_rel()",
        ]
        drop = "DROP FUNCTION test_abort_rel() CASCADE"
    else:
        create = [
            "CREATE TRIGGER test_abort_rel BEFORE INSERT ON graph_relation "
            "BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
        ]
        drop = "DROP TRIGGER test_abort_rel"
    with connection.cursor() as cur:
        for statement in create:
            cur.execute(statement)
    try:
        with pytest.raises(Exception, match="refused by test"):
            run(
                {
                    "name": "t",
                    "replace": True,
                    "observations": ["new giraffe"],
                    "relations": [{"to": "target", "type": "related-to"}],
                }
            )
    finally:
        with connection.cursor() as cur:
            cur.execute(drop)

    assert observations_of("t") == ["original zebra"]
    assert "replaced_history" not in stored("t").metadata
    assert names(recall("zebra")) == ["t"]
    assert names(recall("giraffe")) == []


# --- why ------------------------------------------------------------------------------------


def test_why_is_stored_in_metadata_and_as_an_observation() -> None:
    run(
        {
            "name": "no-k8s",
            "type": "decision",
            "observations": ["Deploy with systemd"],
            "why": "too heavy for one user; revisit if we add a hosted tier",
        }
    )

    entity = stored("no-k8s")
    assert entity.metadata["why"] == "too heavy for one user; revisit if we add a hosted tier"
    assert observations_of("no-k8s") == [
        "Deploy with systemd",
        "Why: too heavy for one user; revisit if we add a hosted tier",
    ]


def test_an_agent_transport_refuses_a_new_decision_without_why() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        direct({"name": "d", "type": "decision", "observations": ["x"]}, require_why=True)

    assert excinfo.value.field == "why"
    assert excinfo.value.error_code == "validation.bad-body"
    assert Entity.objects.count() == 0


def test_the_reference_contract_still_creates_a_decision_without_why() -> None:
    result = run({"name": "d", "type": "decision", "observations": ["Chose JWT"]})

    assert result["created"] is True


def test_appending_to_an_existing_decision_needs_no_why() -> None:
    direct({"name": "d", "type": "decision", "observations": ["x"], "why": "w"}, require_why=True)

    result = direct({"name": "d", "type": "decision", "observations": ["y"]}, require_why=True)

    assert result["observations"] == 1


def test_replacing_a_decision_needs_why_again() -> None:
    run({"name": "d", "type": "decision", "observations": ["x"], "why": "first reason"})

    error = rejected({"name": "d", "replace": True, "observations": ["y"]})
    assert error.field == "why"
    assert observations_of("d") == ["x", "Why: first reason"]

    run({"name": "d", "replace": True, "observations": ["y"], "why": "second reason"})
    assert observations_of("d") == ["y", "Why: second reason"]
    assert stored("d").metadata["why"] == "second reason"


def test_reclassifying_into_a_decision_by_replace_needs_why() -> None:
    remember("t", "x")

    assert (
        rejected({"name": "t", "type": "decision", "replace": True, "observations": ["y"]}).field
        == "why"
    )
    assert stored("t").type == "note"


# --- project --------------------------------------------------------------------------------


def test_project_adds_its_tag_and_reports_it() -> None:
    result = run({"name": "t", "type": "note", "observations": ["x"], "project": "acme/app"})

    assert tags_of("t") == {"project:acme/app"}
    assert result["project"] == "acme/app"


def test_a_project_given_as_a_tag_is_not_prefixed_twice() -> None:
    run({"name": "t", "type": "note", "observations": ["x"], "project": "project:acme/app"})

    assert tags_of("t") == {"project:acme/app"}


def test_a_new_memory_goes_to_the_callers_project_unless_project_is_false() -> None:
    direct({"name": "filed", "type": "note", "observations": ["x"]}, project="acme/app")
    direct(
        {"name": "general", "type": "note", "observations": ["x"], "project": False},
        project="acme/app",
    )

    assert tags_of("filed") == {"project:acme/app"}
    assert tags_of("general") == set()


def test_appending_does_not_refile_a_memory_under_the_callers_project() -> None:
    direct({"name": "t", "type": "note", "observations": ["x"], "project": False})

    direct({"name": "t", "type": "note", "observations": ["y"]}, project="other/app")

    assert tags_of("t") == set()


def test_project_true_and_false_with_a_project_tag_are_refused() -> None:
    assert rejected({"name": "t", "type": "note", "project": True}).field == "project"
    assert rejected({"name": "t", "type": "note", "project": "  "}).field == "project"
    error = rejected({"name": "t", "type": "note", "project": False, "tags": ["project:x"]})
    assert error.field == "project"
    assert Entity.objects.count() == 0


def test_a_new_memory_filed_by_its_own_project_tag_is_not_refiled_under_the_session() -> None:
    ctx = CallContext(source_host="mcp-client", project="session-project", guide_rules=True)
    OPERATIONS["remember"].run(
        {"name": "tagged", "type": "note", "observations": ["x"], "tags": ["project:other"]}, ctx
    )
    OPERATIONS["remember"].run({"name": "untagged", "type": "note", "observations": ["y"]}, ctx)

    tagged = Entity.objects.get(name="tagged").tags.values_list("name", flat=True)
    untagged = Entity.objects.get(name="untagged").tags.values_list("name", flat=True)
    assert list(tagged) == ["project:other"]
    assert list(untagged) == ["project:session-project"]
