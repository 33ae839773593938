"""The export's reads (graph/ops/bundle/exporter.py): how many active entities a bundle holds,
and each one's bundle entry as JSON text written by SQLite, EXPORT_CHUNK at a time.

A full export answers with 10,000 entries, and building a dict per entry (plus its trust
block and relation dicts) and encoding them again cost most of its time (in process at 10k:
~100 ms to build, ~60 ms to encode, ~35 ms to parse every metadata JSON for one key). So each
entry comes out of SQLite as one `json_object` (one row each), as the graph view's nodes do
(graph/storage/graph_reads.py): the answer is those rows joined. `_ENTRY_JSON` is therefore
the one serializer of the bundle entry; graph/ops/bundle/exporter.py's BundleEntity describes
it (for OpenAPI, the MCP tools and the Python readers, which parse it), and
tests/services/test_bundle_json.py holds the two equal.

The lists are aggregated with jsonb_group_array (SQLite >= 3.45, https://sqlite.org/json1.html
#jsonb): json_object takes a JSONB value as JSON, where a text aggregate out of a subquery has
lost its JSON subtype and would need json() to parse all of it again (a fifth of the read at
10k). Each list is ordered in a subquery that its entity_id index already walks in id order
(an aggregate's own ORDER BY sorts a temporary b-tree per entry).
"""

from __future__ import annotations

from typing import cast

from graph.storage.cursor import cursor
from graph.storage.entity_filters import EntityFilters

# The confidence as JSON number text that parses back to the stored double: SQLite renders a
# REAL with 15 significant digits (json_object, CAST), which loses the last digits of values
# such as 0.8500000000000001 (the pre-trust-model increments, graph/models.py). The first of
# 15, 16 or 17 digits that reads back equal is kept: 17 always does (IEEE 754 doubles), and
# the shorter forms keep `0.85` as it was. `%!` keeps the decimal point of `1.0` and lifts
# printf's 16-digit cap (https://sqlite.org/printf.html).
_CONFIDENCE_JSON = """json(CASE
  WHEN CAST(printf('%!.15g', e.confidence) AS REAL) = e.confidence
    THEN printf('%!.15g', e.confidence)
  WHEN CAST(printf('%!.16g', e.confidence) AS REAL) = e.confidence
    THEN printf('%!.16g', e.confidence)
  ELSE printf('%!.17g', e.confidence) END)"""

# The entry of the entity row `e` up to its relations: `title` null when absent; observations,
# tags and relations (outgoing, `{from, to, type}`) in the order they were added, `[]` for
# none.
_ENTRY_HEAD = """'name', e.name, 'title', e.title, 'type', e.type, 'namespace', e.namespace,
  'observations', (SELECT jsonb_group_array(text) FROM (
      SELECT o.text FROM graph_observation AS o WHERE o.entity_id = e.id ORDER BY o.id)),
  'tags', (SELECT jsonb_group_array(name) FROM (
      SELECT t.name FROM graph_tag AS t WHERE t.entity_id = e.id ORDER BY t.id)),
  'relations', (SELECT jsonb_group_array(json_object('from', e.name, 'to', rt.name,
                                                     'type', rt.type)) FROM (
      SELECT t.name, r.type FROM graph_relation AS r
      JOIN graph_entity AS t ON t.id = r.to_entity_id
      WHERE r.from_entity_id = e.id ORDER BY r.id) AS rt)"""

# The entry's trust block: an empty invalidation tag or condition is null; times as ISO 8601
# text (UTC, as DocumentQueries.documents gives them), null when unset.
_TRUST_JSON = f"""'trust', json_object(
  'status', e.trust, 'source', e.source, 'confidence', {_CONFIDENCE_JSON},
  'invalidation_tag', NULLIF(e.invalidation_tag, ''),
  'invalidation_condition', NULLIF(e.invalidation_condition, ''),
  'kind', e.kind, 'hop_count', e.hop_count,
  'last_observed_at', replace(CAST(e.last_observed_at AS TEXT), ' ', 'T') || 'Z',
  'expires_at', replace(CAST(e.expires_at AS TEXT), ' ', 'T') || 'Z')"""

# The whole entry: `replaced_history` (the earlier versions a `replace` or an import
# overwrite kept in the metadata, graph/ops/remember/service.py) between the relations and
# the trust block, and only when it holds a version. Only that key is read out of the
# metadata; json_object cannot leave a key out, hence the two objects (one is built per row).
_HAS_HISTORY = "json_array_length(e.metadata, '$.replaced_history') > 0"
_ENTRY_JSON = f"""CASE WHEN {_HAS_HISTORY}
  THEN json_object({_ENTRY_HEAD},
                   'replaced_history', e.metadata -> '$.replaced_history', {_TRUST_JSON})
  ELSE json_object({_ENTRY_HEAD}, {_TRUST_JSON}) END"""

# Params: the id to start after, the filters' (EntityFilters.sql), limit. Result: id and entry
# of the next `limit` active entities the filters keep, in id order. `+e.status` keeps the
# planner on the rowid range, which the LIMIT stops early (the status index would read every
# active row and sort them, for each chunk).
_SQL_ENTRIES = f"""
SELECT e.id, {_ENTRY_JSON}
FROM graph_entity AS e
WHERE +e.status = 'active' AND e.id > ?{{filters}}
ORDER BY e.id
LIMIT ?
"""
# Params: the filters'. Result: how many active entities they keep.
_SQL_COUNT = "SELECT COUNT(*) FROM graph_entity AS e WHERE e.status = 'active'{filters}"


class BundleReadQueries:
    # SQLite's statement (graph/storage/postgres/bundle_reads.py has PostgreSQL's).
    _sql_entries = _SQL_ENTRIES

    def bundle_entries_json(
        self, filters: EntityFilters, after_id: int, limit: int
    ) -> list[tuple[int, str]]:
        """(id, entry as JSON text) of the first `limit` active entities after `after_id`
        that `filters` keep, in id order."""
        sql, params = filters.sql()
        with cursor() as cur:
            cur.execute(self._sql_entries.format(filters=sql), [after_id, *params, limit])
            # The driver's rows as they come (an INTEGER and a TEXT column): a tuple rebuilt
            # per row cost a few percent of a 10k export.
            return cast(list[tuple[int, str]], cur.fetchall())

    def bundle_count(self, filters: EntityFilters) -> int:
        """How many active entities `filters` keep (what bundle_entries_json reads in all)."""
        sql, params = filters.sql()
        with cursor() as cur:
            cur.execute(_SQL_COUNT.format(filters=sql), params)
            return int(cur.fetchone()[0])
