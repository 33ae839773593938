"""The entity-table reads and writes of Entity.objects on PostgreSQL (graph/storage/
documents.py): the same statements, with times written as ISO text by to_char, the metadata
read as text, a new row's id by RETURNING and GREATEST for SQLite's scalar max()."""

from __future__ import annotations

from typing import Any

from graph.storage.cursor import cursor
from graph.storage.documents import DocumentQueries
from graph.storage.postgres.dialect import iso_utc

# As graph/storage/documents.py's _SQL_ENTITY_FIELDS; metadata as JSON text (jsonb would come
# back parsed, and documents() parses every row's in one go).
_SQL_ENTITY_FIELDS = f"""
SELECT id, name, title, type, namespace, status, confidence,
       {iso_utc("created_at")}, {iso_utc("updated_at")},
       CAST(metadata AS TEXT),
       trust, source, invalidation_tag, invalidation_condition, kind, parent_id, hop_count,
       {iso_utc("last_observed_at")}, {iso_utc("expires_at")}
FROM graph_entity WHERE id IN ({{ids}})
"""
# Params: a metadata key. Result: ids of the entities whose metadata holds that key with the
# JSON value true.
_SQL_IDS_MARKED = (
    "SELECT id FROM graph_entity WHERE metadata -> CAST(? AS TEXT) = CAST('true' AS jsonb)"
)
# As graph/storage/documents.py's _SQL_ADD_IMPACT.
_SQL_ADD_IMPACT = """
UPDATE graph_entity
SET recall_hits = recall_hits + ?, recall_misses = GREATEST(0, recall_misses + ?)
WHERE id = ?
"""


class PostgresDocumentQueries(DocumentQueries):
    _sql_entity_fields = _SQL_ENTITY_FIELDS
    _sql_add_impact = _SQL_ADD_IMPACT

    def ids_marked(self, key: str) -> list[int]:
        with cursor() as cur:
            cur.execute(_SQL_IDS_MARKED, [key])
            return [row[0] for row in cur.fetchall()]

    def _insert_row(self, cur: Any, sql: str, values: list[Any]) -> int:
        cur.execute(sql + " RETURNING id", values)
        return int(cur.fetchone()[0])
