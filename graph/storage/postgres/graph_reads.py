"""The graph view's reads (graph/storage/graph_reads.py) on PostgreSQL: the same statements,
each node and relation built as JSON text by json_build_object instead of SQLite's
json_object, and GREATEST for SQLite's scalar max()."""

from __future__ import annotations

from graph.storage.graph_reads import GraphReadQueries, GraphViewStatements
from graph.storage.postgres.dialect import iso_utc

# As graph_reads.py's _NODE_JSON: the same keys in the same order (json, not jsonb, which
# would sort them); `tags` ordered by id by the aggregate itself, `[]` for none.
_NODE_JSON = f"""CAST(json_build_object(
  'id', e.id, 'name', e.name, 'title', e.title, 'type', e.type, 'status', e.status,
  'trust_status', e.trust,
  'created_at', {iso_utc("e.created_at")},
  'updated_at', {iso_utc("e.updated_at")},
  'tags', COALESCE((SELECT json_agg(t.name ORDER BY t.id) FROM graph_tag AS t
                    WHERE t.entity_id = e.id), CAST('[]' AS json)),
  'observation_count', (SELECT COUNT(*) FROM graph_observation AS o WHERE o.entity_id = e.id)
) AS TEXT)"""
_RELATION_JSON = "CAST(json_build_object('from', f.name, 'to', t.name, 'type', r.type) AS TEXT)"
_LAST_USED = "GREATEST(e.updated_at, COALESCE(e.last_accessed_at, e.updated_at))"

POSTGRES_STATEMENTS = GraphViewStatements.of(
    node=_NODE_JSON, relation=_RELATION_JSON, last_used=_LAST_USED
)


class PostgresGraphReadQueries(GraphReadQueries):
    _graph_sql = POSTGRES_STATEMENTS
