"""The bundle entries SQLite writes (graph/storage/bundle_reads.py) against the same entries
built in Python from the stored rows (DocumentQueries.documents, as export built them before):
equal entry for entry, with BundleEntity's keys in its order, for every part of an entry
(observations, tags, relations, replaced history, trust, a null title), the entities left
out (archived, expired), the filters and the project scope; and the REST text, the handler's
answer and the CLI's file holding the same bundle."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from graph.models import Entity
from graph.ops.bundle import EXPORT
from graph.ops.bundle import exporter as bundle_export
from graph.ops.bundle.exporter import BundleEntity, BundleTrust, ExportInput, ExportOutput
from graph.ops.bundle.files import bundle_write
from graph.ops.kit.operation import CallContext
from graph.ops.kit.scope import ReadScope
from graph.storage import backend
from graph.storage.documents import EntityDocument
from tests.helpers import forget, remember, restamp

pytestmark = pytest.mark.django_db
REST = CallContext(source_host="http", binds_reads=False)

# Text the database and Python must escape alike: quotes, backslashes, control characters, a
# NUL (on SQLite: PostgreSQL's text type cannot hold one, and refuses it as bad input),
# non-ASCII and a character outside the BMP.
AWKWARD = 'say "hi"\\ \n\ttab \x01\x1f{nul} Zürich 東京 🦀 \u2028 </script>'.format(
    nul="" if backend.on_postgres() else "\x00"
)


def python_entry(doc: EntityDocument) -> dict[str, Any]:
    """A bundle entry built from the stored row in Python: the shape the reference's bundle
    and BundleEntity describe."""
    entry: dict[str, Any] = {
        "name": doc.name,
        "title": doc.title,
        "type": doc.type,
        "namespace": doc.namespace,
        "observations": doc.observations,
        "tags": doc.tags,
        "relations": [{"from": f, "to": t, "type": type_} for f, _, t, type_ in doc.relations],
    }
    if doc.metadata.get("replaced_history"):
        entry["replaced_history"] = doc.metadata["replaced_history"]
    entry["trust"] = {
        "status": doc.trust,
        "source": doc.source,
        "confidence": doc.confidence,
        "invalidation_tag": doc.invalidation_tag or None,
        "invalidation_condition": doc.invalidation_condition or None,
        "kind": doc.kind,
        "hop_count": doc.hop_count,
        "last_observed_at": doc.last_observed_at,
        "expires_at": doc.expires_at,
    }
    return entry


def python_entries(*names: str) -> list[dict[str, Any]]:
    ids = sorted(Entity.objects.filter(name__in=names).values_list("id", flat=True))
    assert len(ids) == len(names), names
    return [python_entry(doc) for doc in Entity.objects.documents(ids)]


def rest_export(**fields: Any) -> dict[str, Any]:
    """The bundle as POST /v1/export sends it: the operation's JSON text."""
    answer: dict[str, Any] = json.loads(EXPORT.run_json(fields, REST))
    return answer


def entry_names(bundle: dict[str, Any]) -> list[str]:
    return [e["name"] for e in bundle["entities"]]


@pytest.fixture
def graph() -> None:
    """Memories holding every part of an entry, plus the ones an export leaves out."""
    remember("target", "the target")
    remember(
        "full",
        AWKWARD,
        "second",
        type="decision",
        title=f"Title {AWKWARD}",
        tags=["project:x", "topic:db", "a-tag"],
        relations=[{"to": "target", "type": "depends-on"}],
        source="docs/adr-7.md",
        invalidation_tag="architectural",
        invalidation_condition="when the schema changes",
        kind="episodic",
        namespace="team",
    )
    remember("full", "gone too", relations=[{"to": "target", "type": "related-to"}])
    remember("rewritten", "first version", tags=["project:y"])
    remember("rewritten", "second version", tags=["project:y"], replace=True)
    remember("bare", "untitled, untagged")  # no title, tags, relations or source
    remember("global-one", "everywhere", namespace="global", tags=["project:y"])
    remember("archived", "forgotten", relations=[{"to": "target", "type": "x"}])
    forget("archived")
    remember("related-to-archived", "points at it", relations=[{"to": "archived", "type": "y"}])
    remember("expired", "scratch", ttl_hours=1)
    restamp("expired", expires_at=timezone.now() - timedelta(minutes=1))
    # Doubles SQLite's own 15 digits would round: they must come back as the same number.
    restamp("full", confidence=0.30000000000000004)
    restamp("bare", confidence=0.8500000000000001, metadata={"replaced_history": []})
    restamp("target", confidence=1 / 3, last_observed_at=datetime(2026, 5, 1, 12, 30, tzinfo=UTC))


EVERY_ACTIVE = ["target", "full", "rewritten", "bare", "global-one", "related-to-archived"]


def test_every_entry_is_the_python_built_entry_with_its_keys_in_order(graph: None) -> None:
    bundle = rest_export()

    assert bundle["entities"] == python_entries(*EVERY_ACTIVE)
    for entry in bundle["entities"]:
        keys = [k for k in BundleEntity.__annotations__ if k in entry]
        assert list(entry) == keys
        assert list(entry["trust"]) == list(BundleTrust.__annotations__)


def test_each_part_of_an_entry_is_exported_as_stored(graph: None) -> None:
    by_name = {e["name"]: e for e in rest_export()["entities"]}

    full = by_name["full"]
    assert full["title"] == f"Title {AWKWARD}"
    assert full["observations"] == [AWKWARD, "second", "gone too"]
    assert full["tags"] == ["project:x", "topic:db", "a-tag"]  # in the order added
    assert full["relations"] == [
        {"from": "full", "to": "target", "type": "depends-on"},
        {"from": "full", "to": "target", "type": "related-to"},
    ]
    assert full["trust"]["status"] == "fact" and full["trust"]["source"] == "docs/adr-7.md"
    assert full["trust"]["invalidation_tag"] == "architectural"
    assert full["trust"]["invalidation_condition"] == "when the schema changes"
    assert full["trust"]["kind"] == "episodic"
    assert full["trust"]["confidence"] == 0.30000000000000004
    assert "replaced_history" not in full

    [version] = by_name["rewritten"]["replaced_history"]
    assert version["observations"] == ["first version"]
    assert by_name["rewritten"]["observations"] == ["second version"]

    bare = by_name["bare"]
    assert bare["title"] is None and bare["tags"] == [] and bare["relations"] == []
    assert "replaced_history" not in bare  # an empty history is no history
    assert bare["trust"]["source"] is None and bare["trust"]["invalidation_tag"] is None
    assert bare["trust"]["confidence"] == 0.8500000000000001
    assert bare["trust"]["expires_at"] is None and bare["trust"]["last_observed_at"] is None

    assert by_name["target"]["trust"]["confidence"] == 1 / 3
    assert by_name["target"]["trust"]["last_observed_at"] == "2026-05-01T12:30:00Z"
    # A relation to an archived memory travels with the active one.
    assert by_name["related-to-archived"]["relations"] == [
        {"from": "related-to-archived", "to": "archived", "type": "y"}
    ]


def test_archived_and_expired_memories_are_left_out_unless_expired_ones_are_asked_for(
    graph: None,
) -> None:
    assert entry_names(rest_export()) == EVERY_ACTIVE

    with_expired = rest_export(include_expired=True)

    assert entry_names(with_expired) == [*EVERY_ACTIVE, "expired"]
    assert with_expired["entities"] == python_entries(*EVERY_ACTIVE, "expired")
    assert with_expired["entity_count"] == len(EVERY_ACTIVE) + 1
    [expired] = [e for e in with_expired["entities"] if e["name"] == "expired"]
    assert expired["trust"]["expires_at"].endswith("Z")


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"namespace": "team"}, ["full"]),
        ({"namespace": "global"}, ["global-one"]),
        ({"tag": "project:y"}, ["rewritten", "global-one"]),
        ({"tag": "topic:db"}, ["full"]),
        # Bound to x: x's memories, those of no project and global ones.
        ({"project": "x"}, ["target", "full", "bare", "global-one", "related-to-archived"]),
        ({"project": "y"}, ["target", "rewritten", "bare", "global-one", "related-to-archived"]),
        ({"project": "x", "cross_project": True}, EVERY_ACTIVE),
        ({"limit": 2}, ["target", "full"]),
    ],
)
def test_the_filters_and_the_scope_keep_the_same_entries(
    graph: None, fields: dict[str, Any], expected: list[str]
) -> None:
    bundle = rest_export(**fields)

    assert bundle["entities"] == python_entries(*expected)
    assert bundle["entity_count"] == len(expected)


def test_entries_read_in_several_chunks_are_the_entries_read_in_one(
    graph: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = rest_export()
    monkeypatch.setattr(bundle_export, "EXPORT_CHUNK", 2)

    chunked = rest_export()

    assert chunked["entities"] == whole["entities"]
    assert chunked["entity_count"] == whole["entity_count"]
    assert entry_names(rest_export(limit=5)) == EVERY_ACTIVE[:5]


@pytest.mark.parametrize("fields", [{}, {"project": "x"}, {"tag": "project:y"}, {"limit": 1}])
def test_the_rest_text_is_the_handlers_answer_encoded(graph: None, fields: dict[str, Any]) -> None:
    now = timezone.now()
    data = ExportInput.model_validate(fields)
    scope = ReadScope("x", all_projects=False) if "project" in fields else ReadScope(None, True)

    text = bundle_export.bundle_export_json(data=data, scope=scope, now=now)
    answered = bundle_export.bundle_export(data=data, scope=scope, now=now)

    assert json.loads(text) == answered.model_dump(mode="json", by_alias=True)
    assert list(json.loads(text)) == [
        f.alias or name for name, f in ExportOutput.model_fields.items()
    ]
    # Through the operation: REST's text (json_handler) and MCP's and the CLI's answer (run).
    via_rest = json.loads(EXPORT.run_json(fields, REST))
    assert EXPORT.run(fields, REST)["entities"] == via_rest["entities"]


def test_the_cli_file_holds_the_same_entries(graph: None) -> None:
    out = io.StringIO()

    written = bundle_write(out, include_expired=True)

    bundle = json.loads(out.getvalue())
    assert written == bundle["entity_count"] == len(EVERY_ACTIVE) + 1
    assert bundle["entities"] == python_entries(*EVERY_ACTIVE, "expired")
    # One entity per line, as before: a file of any size stays greppable.
    assert out.getvalue().count("\n") == written + 2


def test_an_empty_graph_exports_an_empty_bundle() -> None:
    bundle = rest_export()

    assert bundle["entities"] == [] and bundle["entity_count"] == 0
    assert EXPORT.run({}, REST)["entities"] == []
