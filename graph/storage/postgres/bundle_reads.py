"""The export's reads (graph/storage/bundle_reads.py) on PostgreSQL: each bundle entry built
as JSON text by json_build_object, with the same keys in the same order as SQLite's
json_object gives them (json, not jsonb, which would sort them)."""

from __future__ import annotations

from graph.storage.bundle_reads import BundleReadQueries
from graph.storage.postgres.dialect import iso_utc, json_float

_EMPTY = "CAST('[]' AS json)"

# As bundle_reads.py's _ENTRY_HEAD: the lists ordered by id by their aggregates.
_ENTRY_HEAD = f"""'name', e.name, 'title', e.title, 'type', e.type, 'namespace', e.namespace,
  'observations', COALESCE((SELECT json_agg(o.text ORDER BY o.id) FROM graph_observation AS o
                            WHERE o.entity_id = e.id), {_EMPTY}),
  'tags', COALESCE((SELECT json_agg(t.name ORDER BY t.id) FROM graph_tag AS t
                    WHERE t.entity_id = e.id), {_EMPTY}),
  'relations', COALESCE((SELECT json_agg(json_build_object('from', e.name, 'to', rt.name,
                                                           'type', r.type) ORDER BY r.id)
                         FROM graph_relation AS r JOIN graph_entity AS rt
                           ON rt.id = r.to_entity_id
                         WHERE r.from_entity_id = e.id), {_EMPTY})"""

# As bundle_reads.py's _TRUST_JSON.
_TRUST_JSON = f"""'trust', json_build_object(
  'status', e.trust, 'source', e.source,
  'confidence', CAST({json_float("e.confidence")} AS json),
  'invalidation_tag', NULLIF(e.invalidation_tag, ''),
  'invalidation_condition', NULLIF(e.invalidation_condition, ''),
  'kind', e.kind, 'hop_count', e.hop_count,
  'last_observed_at', {iso_utc("e.last_observed_at")},
  'expires_at', {iso_utc("e.expires_at")})"""

# As bundle_reads.py's _ENTRY_JSON: a non-empty array under the key (neither test can fail
# on a missing key or another type, where jsonb_array_length would).
_HISTORY = "e.metadata -> 'replaced_history'"
_HAS_HISTORY = f"jsonb_typeof({_HISTORY}) = 'array' AND {_HISTORY} <> CAST('[]' AS jsonb)"
_ENTRY_JSON = f"""CAST(CASE WHEN {_HAS_HISTORY}
  THEN json_build_object({_ENTRY_HEAD}, 'replaced_history', {_HISTORY}, {_TRUST_JSON})
  ELSE json_build_object({_ENTRY_HEAD}, {_TRUST_JSON}) END AS TEXT)"""

# As bundle_reads.py's _SQL_ENTRIES, without SQLite's planner hint.
_SQL_ENTRIES = f"""
SELECT e.id, {_ENTRY_JSON}
FROM graph_entity AS e
WHERE e.status = 'active' AND e.id > ?{{filters}}
ORDER BY e.id
LIMIT ?
"""


class PostgresBundleReadQueries(BundleReadQueries):
    _sql_entries = _SQL_ENTRIES
