"""export and import: the bundle format, the three merge strategies, the round trip (the
commands: tests/transports/test_bundle_cli.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.errors import InvalidInput
from graph.models import Entity, Relation
from graph.ops.bundle import IMPORT
from graph.ops.bundle.importer import IMPORT_CHUNK
from graph.ops.kit.operation import CallContext
from tests.bundles import assert_index_in_step, entry, export, import_, seed, wipe
from tests.helpers import forget, names, recall, remember

pytestmark = pytest.mark.django_db
CTX = CallContext(source_host="test")


def state(name: str) -> dict[str, Any]:
    """Everything about one entity that an import may or may not change."""
    e = Entity.objects.get(name=name)
    return {
        "title": e.title,
        "type": e.type,
        "namespace": e.namespace,
        "status": e.status,
        "metadata": e.metadata,
        "updated_at": e.updated_at,
        "observations": list(e.observations.values_list("text", flat=True)),
        "tags": list(e.tags.values_list("name", flat=True)),
        "relations": sorted(e.relations_out.values_list("to_entity__name", "type")),
    }


# --- export ---------------------------------------------------------------------------------


def test_export_writes_the_reference_bundle_format() -> None:
    seed()
    bundle = export()
    assert bundle["version"] == "3.0.0"
    assert bundle["exported_at"].endswith("Z") and len(bundle["exported_at"]) == 24
    assert bundle["entity_count"] == 3
    auth = next(e for e in bundle["entities"] if e["name"] == "auth-decision")
    # The reference's fields, plus the trust model's `trust` (tests/services/test_trust.py).
    assert auth.pop("trust")["status"] == "hypothesis"
    assert auth == {
        "name": "auth-decision",
        "title": "Why we chose OAuth 2.0",
        "type": "decision",
        "namespace": "team",
        "observations": ["Use OAuth 2.0", "Tokens expire after one hour"],
        "tags": ["project:myapp", "topic:auth"],
        "relations": [{"from": "auth-decision", "to": "api-design", "type": "related-to"}],
    }
    untitled = next(e for e in bundle["entities"] if e["name"] == "untitled-note")
    assert "title" in untitled and untitled["title"] is None


def test_export_filters_by_namespace_tag_and_limit_and_leaves_out_archived() -> None:
    seed()
    remember("gone", "archived soon")
    forget("gone")
    assert {e["name"] for e in export()["entities"]} == {
        "api-design",
        "auth-decision",
        "untitled-note",
    }
    assert {e["name"] for e in export(namespace="team")["entities"]} == {
        "api-design",
        "auth-decision",
    }
    assert [e["name"] for e in export(tag="project:other")["entities"]] == ["untitled-note"]
    limited = export(limit=2)
    assert limited["entity_count"] == 2 and len(limited["entities"]) == 2


def test_export_refuses_an_unknown_namespace() -> None:
    with pytest.raises(InvalidInput):
        export(namespace="everyone")


# --- round trip -----------------------------------------------------------------------------


def test_a_round_trip_into_an_empty_database_reproduces_everything() -> None:
    seed()
    before = export()
    wipe()
    assert export()["entity_count"] == 0

    result = import_(before["entities"])

    assert result == {"imported": 3, "skipped": 0, "appended": 0, "relations": 1, "errors": []}
    after = export()
    key = lambda e: e["name"]  # noqa: E731
    assert sorted(after["entities"], key=key) == sorted(before["entities"], key=key)
    assert names(recall("zanzibarite")) == ["untitled-note"]
    assert_index_in_step()


def test_a_round_trip_spans_several_chunks_and_relations_point_forward() -> None:
    # The first entry relates to the last one: relations wait until every entity exists.
    n = IMPORT_CHUNK + 20
    entries = [entry(f"e{i}", f"observation {i}") for i in range(n)]
    entries[0]["relations"] = [{"from": "e0", "to": f"e{n - 1}", "type": "depends-on"}]
    result = import_(entries)
    assert result["imported"] == n and result["relations"] == 1 and result["errors"] == []
    assert Relation.objects.get().to_entity.name == f"e{n - 1}"


# --- merge strategies -----------------------------------------------------------------------


def test_skip_creates_new_entities_and_never_changes_an_existing_one() -> None:
    seed()
    remember("other", "other target")
    existing = state("auth-decision")
    result = import_(
        [
            entry(
                "auth-decision",
                "Use SAML instead",
                title="Replaced title",
                tags=["new-tag"],
                relations=[{"to": "other", "type": "related-to"}],
            ),
            entry("brand-new", "a new memory", namespace="global"),
        ],
        "skip",
        namespace="personal",
    )
    assert result["imported"] == 1 and result["skipped"] == 1 and result["relations"] == 0
    assert state("auth-decision") == existing  # not moved to personal either
    assert Entity.objects.get(name="brand-new").namespace == "personal"


def test_overwrite_replaces_observations_and_tags_and_keeps_the_old_ones_in_history() -> None:
    seed()
    result = import_(
        [entry("auth-decision", "Use SAML", title="SAML it is", tags=["topic:sso"])],
        "overwrite",
    )
    assert result["imported"] == 1 and result["errors"] == []
    now = state("auth-decision")
    assert now["observations"] == ["Use SAML"]
    assert now["tags"] == ["topic:sso"]
    assert now["title"] == "SAML it is"
    assert now["namespace"] == "team" and now["type"] == "decision"
    (past,) = now["metadata"]["replaced_history"]
    assert past["action"] == "import-overwrite"
    assert past["observations"] == ["Use OAuth 2.0", "Tokens expire after one hour"]
    assert past["tags"] == ["project:myapp", "topic:auth"]
    # The keyword index follows: the replaced words no longer find it.
    assert names(recall("OAuth")) == []
    assert names(recall("SAML")) == ["auth-decision"]
    assert_index_in_step()


def test_overwrite_and_append_move_existing_entities_into_the_requested_namespace() -> None:
    seed()
    for strategy in ("overwrite", "append"):
        remember(f"{strategy}-me", "somewhere", namespace="global")
        import_([entry(f"{strategy}-me", "somewhere")], strategy, namespace="personal")
        moved = Entity.objects.get(name=f"{strategy}-me")
        assert moved.namespace == "personal"
        assert moved.metadata["previous_namespace"] == "global"


def test_append_adds_new_observations_dedupes_tags_and_creates_relations() -> None:
    seed()
    remember("other", "other target")
    result = import_(
        [
            entry(
                "auth-decision",
                "Use   OAuth 2.0",  # the same observation, spaced differently
                "Refresh tokens rotate",
                tags=["topic:auth", "topic:tokens"],
                relations=[{"to": "other", "type": "related-to"}],
            )
        ],
        "append",
    )
    assert result == {"imported": 0, "skipped": 0, "appended": 1, "relations": 1, "errors": []}
    now = state("auth-decision")
    assert now["observations"] == [
        "Use OAuth 2.0",
        "Tokens expire after one hour",
        "Refresh tokens rotate",
    ]
    assert now["tags"] == ["project:myapp", "topic:auth", "topic:tokens"]
    assert now["relations"] == [("api-design", "related-to"), ("other", "related-to")]
    assert now["title"] == "Why we chose OAuth 2.0"  # no title in the entry: left alone
    assert names(recall("rotate")) == ["auth-decision"]
    assert_index_in_step()


def test_every_strategy_creates_entities_that_do_not_exist_yet() -> None:
    for strategy in ("skip", "overwrite", "append"):
        result = import_([entry(f"new-{strategy}", "fresh")], strategy, namespace="team")
        assert result["imported"] == 1
        assert Entity.objects.get(name=f"new-{strategy}").namespace == "team"


def test_a_blank_or_absent_title_leaves_the_existing_title_and_a_long_one_is_truncated() -> None:
    seed()
    import_([entry("auth-decision", "x", title="   ")], "append")
    import_([entry("auth-decision", "y", title=None)], "overwrite")
    assert Entity.objects.get(name="auth-decision").title == "Why we chose OAuth 2.0"
    import_([entry("long-title", "z", title="t" * 500)])
    assert Entity.objects.get(name="long-title").title == "t" * 200


def test_imported_entities_are_untrusted_with_import_provenance() -> None:
    seed()
    import_([entry("imported-one", "from a teammate")], "skip")
    import_([entry("auth-decision", "more")], "append")
    created = Entity.objects.get(name="imported-one").metadata
    assert created["provenance"] == {"source_host": "test", "imported": True}
    assert created["untrusted"] is True
    assert created["import"]["strategy"] == "skip"
    changed = Entity.objects.get(name="auth-decision").metadata
    assert changed["untrusted"] is True and changed["import"]["strategy"] == "append"
    assert changed["provenance"] == {"source_host": "test"}  # first insert's stamp stays


# --- refusals and partial imports -----------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [{"merge_strategy": "merge"}, {"merge_strategy": "skip", "namespace": "everyone"}],
)
def test_an_unknown_strategy_or_namespace_is_refused_before_anything_is_written(
    fields: dict[str, Any],
) -> None:
    with pytest.raises(InvalidInput):
        IMPORT.run({"data": {"entities": [entry("never", "written")]}, **fields}, CTX)
    assert not Entity.objects.exists()


def test_a_bundle_without_an_entities_array_is_refused() -> None:
    with pytest.raises(InvalidInput, match="entities"):
        IMPORT.run({"data": {"entities": "nope"}, "merge_strategy": "skip"}, CTX)


def test_bad_entries_are_reported_while_the_rest_imports() -> None:
    result = import_(
        [
            entry("good-one", "fine"),
            "not an object",
            {"name": "no-type", "observations": ["x"]},
            entry("bad-namespace", "x", namespace="everyone"),
            entry("good-two", "fine", relations=[{"to": "missing", "type": "related-to"}]),
        ]
    )
    assert result["imported"] == 2
    errors = result["errors"]
    assert len(errors) == 4
    assert errors[0].startswith("entities[1]")
    assert errors[1].startswith('entities[2] "no-type"') and "type" in errors[1]
    assert errors[2].startswith('entities[3] "bad-namespace"')
    assert 'relation target "missing" not found' in errors[3]
    assert set(Entity.objects.values_list("name", flat=True)) == {"good-one", "good-two"}


def test_a_lone_surrogate_in_the_second_chunk_is_reported_while_both_chunks_import() -> None:
    entries = [entry(f"e{i}", f"fact {i}") for i in range(IMPORT_CHUNK + 2)]
    entries[IMPORT_CHUNK + 1]["title"] = "bad \ud800 title"

    result = import_(entries)

    assert result["imported"] == IMPORT_CHUNK + 1
    [error] = result["errors"]
    assert (
        error.startswith(f'entities[{IMPORT_CHUNK + 1}] "e{IMPORT_CHUNK + 1}"') and "title" in error
    )
    assert Entity.objects.count() == IMPORT_CHUNK + 1
    assert not Entity.objects.filter(name=f"e{IMPORT_CHUNK + 1}").exists()
    assert_index_in_step()


def test_an_entry_named_with_a_lone_surrogate_is_reported_with_its_name_escaped() -> None:
    result = import_([entry("bad\ud800name", "x"), entry("good", "y")])

    [error] = result["errors"]
    assert error.startswith('entities[0] "bad\\ud800name": name: ')
    json.dumps(result).encode("utf-8")  # what every transport sends: valid Unicode
    assert result["imported"] == 1
    assert list(Entity.objects.values_list("name", flat=True)) == ["good"]


@pytest.mark.parametrize(
    "version",
    [{"observations": ["\udfff"]}, {"\ud800": "key"}, {"nested": [{"deep": "x\ud800"}]}],
)
def test_kept_versions_that_are_not_valid_unicode_are_reported_not_stored(version) -> None:
    result = import_([entry("kept", "x", replaced_history=[version]), entry("good", "y")])

    [error] = result["errors"]
    assert error.startswith('entities[0] "kept": replaced_history: must be valid Unicode')
    assert list(Entity.objects.values_list("name", flat=True)) == ["good"]
    json.dumps(export()).encode("utf-8")  # the graph still exports


def test_kept_versions_with_a_number_past_any_float_are_reported_not_stored() -> None:
    result = import_([entry("kept", "x", replaced_history=[{"n": float("inf")}])])

    [error] = result["errors"]
    assert "replaced_history: must hold finite numbers only" in error
    assert not Entity.objects.exists()


def test_a_name_repeated_in_the_bundle_is_merged_by_the_strategy() -> None:
    result = import_([entry("twice", "first"), entry("twice", "second")], "append")
    assert result["imported"] == 1 and result["appended"] == 1
    assert state("twice")["observations"] == ["first", "second"]


def test_replaced_versions_travel_in_the_bundle_and_survive_the_round_trip() -> None:
    remember("style", "Tabs", type="convention")
    remember("style", "Spaces, four", type="convention", replace=True)
    bundle = export()
    (exported,) = [e for e in bundle["entities"] if e["name"] == "style"]
    assert exported["observations"] == ["Spaces, four"]
    assert [v["observations"] for v in exported["replaced_history"]] == [["Tabs"]]
    gone = Entity.objects.get(name="style").pk
    Entity.objects.filter(pk=gone).delete()  # as in an empty database
    Entity.objects.index_sync([gone])

    import_(bundle["entities"], "skip")

    (version,) = Entity.objects.get(name="style").metadata["replaced_history"]
    assert version["observations"] == ["Tabs"]
    assert recall("spaces")["entities"][0]["replaced_history_count"] == 1
