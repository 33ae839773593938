"""Bundles for the import and export tests: entries, an import or export through the
operation, and the check that the keyword index is in step with what was imported."""

from __future__ import annotations

from typing import Any

from django.db import connection

from graph.models import Entity
from graph.ops.bundle import EXPORT, IMPORT
from graph.storage import backend
from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS
from tests.helpers import CTX, remember


def export(**fields: Any) -> dict[str, Any]:
    return EXPORT.run(fields, CTX)


def import_(entities: list[Any], strategy: str = "skip", **fields: Any) -> dict[str, Any]:
    payload = {"data": {"version": "3.0.0", "entities": entities}, "merge_strategy": strategy}
    return IMPORT.run({**payload, **fields}, CTX)


def entry(name: str, *observations: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "note", "observations": list(observations), **fields}


def seed() -> None:
    """Three memories of two projects, one related to another, one without a title."""
    remember("api-design", "REST with versioned routes", type="decision", namespace="team")
    remember(
        "auth-decision",
        "Use OAuth 2.0",
        "Tokens expire after one hour",
        type="decision",
        title="Why we chose OAuth 2.0",
        tags=["project:myapp", "topic:auth"],
        relations=[{"to": "api-design", "type": "related-to"}],
        namespace="team",
    )
    remember("untitled-note", "zanzibarite appears here", tags=["project:other"])


def wipe() -> None:
    """No memory left, and no keyword index row."""
    Entity.objects.all().delete()
    Entity.objects.index_rebuild()  # empties both keyword tables


def index_rows() -> dict[str, list[tuple[int, str, str]]]:
    """Each keyword index's rows (id, head, body), by SQLite's table name: FTS5's tables, or
    on PostgreSQL the stored text of each index's rows (graph_keyword_doc)."""
    out = {}
    with connection.cursor() as cur:
        for table in (LIVE_FTS, ARCHIVED_FTS):
            if backend.on_postgres():
                cur.execute(
                    "SELECT entity_id, head, body FROM graph_keyword_doc WHERE archived = %s "
                    "ORDER BY entity_id",
                    [table == ARCHIVED_FTS],
                )
            else:
                cur.execute(f"SELECT rowid, head, body FROM {table} ORDER BY rowid")
            out[table] = [tuple(row) for row in cur.fetchall()]
    return out


def assert_index_in_step() -> None:
    before = index_rows()
    Entity.objects.index_rebuild()
    assert index_rows() == before
