"""The graph view's reads (GET /v1/graph, ?layer=work, /v1/graph/evidence): which entities
a view holds, in its order, and the relations between them, as set-based SQL. The selector
(graph/ops/graph_view.py) decides the types and caps.

The two whole-graph views answer with every entity of a view (8,200 at 10k memories), so
their nodes and relations come out of SQLite as JSON text (`json_object`, one row each): the
answer is those rows joined, with no Python object per node on the way (building and then
encoding a model per node cost most of a second at 10k). `_NODE_JSON` is therefore the one
serializer of the node shape; graph/ops/graph_view.py's GraphNode describes it (for OpenAPI
and the Python readers, which parse it), and tests/services/test_graph_view.py holds the two
equal. The drill-down returns at most 200 entities, in recall's shape, through
DocumentQueries.documents.

Entity types are bound values (`{types}` is a run of `?` placeholders), never SQL text.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from graph.storage.cursor import cursor, placeholders

# The later of an entity's last recall and its last write: "most recently used" (DESIGN §5.3
# reads recency the same way, so a new memory is never behind an old one).
_LAST_USED = "MAX(e.updated_at, COALESCE(e.last_accessed_at, e.updated_at))"

# One node of the graph view, of the entity row `e`, as a JSON object: times as ISO 8601 text
# (UTC, as DocumentQueries.documents gives them); `tags` in the order they were added, `[]`
# for none (ordered in a subquery the entity_id index already walks in id order: an
# aggregate's own ORDER BY sorts a temporary b-tree per node). json() keeps the tags an array
# inside the object rather than a string (https://sqlite.org/json1.html#jsubtype). No
# `project` of its own: a second subquery over the tags cost a sixth of the whole read, and
# the `project:<id>` tag is in `tags`.
_NODE_JSON = """json_object(
  'id', e.id, 'name', e.name, 'title', e.title, 'type', e.type, 'status', e.status,
  'trust_status', e.trust,
  'created_at', replace(CAST(e.created_at AS TEXT), ' ', 'T') || 'Z',
  'updated_at', replace(CAST(e.updated_at AS TEXT), ' ', 'T') || 'Z',
  'tags', json((SELECT json_group_array(name) FROM (
                  SELECT t.name FROM graph_tag AS t WHERE t.entity_id = e.id ORDER BY t.id))),
  'observation_count', (SELECT COUNT(*) FROM graph_observation AS o WHERE o.entity_id = e.id)
)"""
# One relation as a JSON object, of the relation `r` between the entities `f` and `t`.
_RELATION_JSON = "json_object('from', f.name, 'to', t.name, 'type', r.type)"

# Params: the capped types. Result: the node of every entity of another type, most recently
# used first (every status: the full view shows archived memories too, as the reference's
# does).
_SQL_UNCAPPED_NODES = """
SELECT {node} FROM graph_entity AS e WHERE e.type NOT IN ({types})
ORDER BY {last_used} DESC, e.id DESC
"""
# Params: the capped types, limit. Result: the first `limit` of those nodes (a drawing's).
# The inner query orders ids alone, so only `limit` nodes are built (the query above builds
# every node before it sorts); the outer ORDER BY keeps the inner one's order.
_SQL_UNCAPPED_FIRST_NODES = """
SELECT {node}
FROM (SELECT e.id, {last_used} AS used FROM graph_entity AS e WHERE e.type NOT IN ({types})
      ORDER BY used DESC, e.id DESC LIMIT ?) AS first
JOIN graph_entity AS e ON e.id = first.id
ORDER BY first.used DESC, e.id DESC
"""
# Params: the capped types, limit. Result: the nodes of the newest entities of those types,
# newest first. The inner query picks them by id first, so only `limit` nodes are built.
_SQL_NEWEST_NODES = """
SELECT {node}
FROM (SELECT id FROM graph_entity WHERE type IN ({types})
      ORDER BY created_at DESC, id DESC LIMIT ?) AS newest
JOIN graph_entity AS e ON e.id = newest.id
ORDER BY e.created_at DESC, e.id DESC
"""
# Result: every relation, in creation order.
_SQL_ALL_RELATIONS = """
SELECT {relation}
FROM graph_relation AS r
JOIN graph_entity AS f ON f.id = r.from_entity_id
JOIN graph_entity AS t ON t.id = r.to_entity_id
ORDER BY r.id
"""
# Params: the layer's types. Result: the nodes of its active entities, most recently used
# first.
_SQL_LAYER_NODES = """
SELECT {node} FROM graph_entity AS e WHERE e.status = 'active' AND e.type IN ({types})
ORDER BY {last_used} DESC, e.id DESC
"""
# Params: the layer's types, limit. Result: the first `limit` of those nodes (a drawing's),
# built after their ids are ordered, as _SQL_UNCAPPED_FIRST_NODES.
_SQL_LAYER_FIRST_NODES = """
SELECT {node}
FROM (SELECT e.id, {last_used} AS used FROM graph_entity AS e
      WHERE e.status = 'active' AND e.type IN ({types})
      ORDER BY used DESC, e.id DESC LIMIT ?) AS first
JOIN graph_entity AS e ON e.id = first.id
ORDER BY first.used DESC, e.id DESC
"""
# Params: types. Result: how many entities are of another type; of one of them; active and
# of one of them (what the node queries above hold, uncapped and unlimited).
_SQL_COUNT_OTHER_TYPES = "SELECT COUNT(*) FROM graph_entity WHERE type NOT IN ({types})"
_SQL_COUNT_OF_TYPES = "SELECT COUNT(*) FROM graph_entity WHERE type IN ({types})"
_SQL_COUNT_LAYER = "SELECT COUNT(*) FROM graph_entity WHERE status = 'active' AND type IN ({types})"
# Params: the layer's types, twice. Result: the relations whose two ends are active entities
# of the layer, in creation order.
_SQL_LAYER_RELATIONS = """
SELECT {relation}
FROM graph_relation AS r
JOIN graph_entity AS f ON f.id = r.from_entity_id
JOIN graph_entity AS t ON t.id = r.to_entity_id
WHERE f.status = 'active' AND t.status = 'active'
  AND f.type IN ({types}) AND t.type IN ({types})
ORDER BY r.id
"""
# Params: relation type, the layer's types. Result: name of each active entity of the layer
# that active entities point at with that relation, and how many do (what the drill-down
# below lists, so a badge and its drill-down agree).
_SQL_INCOMING_COUNTS = """
SELECT t.name, COUNT(*)
FROM graph_relation AS r
JOIN graph_entity AS t ON t.id = r.to_entity_id
JOIN graph_entity AS f ON f.id = r.from_entity_id
WHERE r.type = ? AND t.status = 'active' AND t.type IN ({types}) AND f.status = 'active'
GROUP BY t.id
"""
# Params: target id, relation type, limit. Result: ids of the active entities pointing at the
# target with that relation, newest first.
_SQL_SOURCES_OF = """
SELECT f.id
FROM graph_relation AS r
JOIN graph_entity AS f ON f.id = r.from_entity_id
WHERE r.to_entity_id = ? AND r.type = ? AND f.status = 'active'
ORDER BY f.created_at DESC, f.id DESC
LIMIT ?
"""


@dataclass(frozen=True, slots=True)
class GraphViewStatements:
    """The view's statements that build JSON in one dialect: the templates above with a
    dialect's node and relation objects and its "most recently used" (graph/storage/postgres/
    graph_reads.py has PostgreSQL's); `{types}` is left for the types' placeholders."""

    uncapped_nodes: str
    uncapped_first_nodes: str
    newest_nodes: str
    all_relations: str
    layer_nodes: str
    layer_first_nodes: str
    layer_relations: str

    @classmethod
    def of(cls, *, node: str, relation: str, last_used: str) -> GraphViewStatements:
        parts = {"node": node, "relation": relation, "last_used": last_used, "types": "{types}"}
        return cls(
            *(
                template.format(**parts)
                for template in (
                    _SQL_UNCAPPED_NODES,
                    _SQL_UNCAPPED_FIRST_NODES,
                    _SQL_NEWEST_NODES,
                    _SQL_ALL_RELATIONS,
                    _SQL_LAYER_NODES,
                    _SQL_LAYER_FIRST_NODES,
                    _SQL_LAYER_RELATIONS,
                )
            )
        )


SQLITE_STATEMENTS = GraphViewStatements.of(
    node=_NODE_JSON, relation=_RELATION_JSON, last_used=_LAST_USED
)


def _column(sql: str, params: list[object]) -> list[Any]:
    with cursor() as cur:
        cur.execute(sql, params)
        return [row[0] for row in cur.fetchall()]


def _texts(sql: str, params: list[object]) -> list[str]:
    """The JSON text of each row (the first column)."""
    return [str(text) for text in _column(sql, params)]


def _count(sql: str, params: list[object]) -> int:
    [n] = _column(sql, params)
    return int(n)


class GraphReadQueries:
    _graph_sql = SQLITE_STATEMENTS

    def nodes_capping_types_json(
        self, capped: Collection[str], cap: int, limit: int | None = None
    ) -> list[str]:
        """The node (JSON text) of every entity whose type is not in `capped` (most recently
        used first), then of the `cap` newest of those types; only the first `limit` when
        given."""
        types = sorted(capped)
        marks = placeholders(len(types))
        if limit is None:
            first = _texts(self._graph_sql.uncapped_nodes.format(types=marks), [*types])
        else:
            first = _texts(
                self._graph_sql.uncapped_first_nodes.format(types=marks), [*types, limit]
            )
            cap = min(cap, limit - len(first))
        if cap <= 0:
            return first
        return first + _texts(self._graph_sql.newest_nodes.format(types=marks), [*types, cap])

    def count_capping_types(self, capped: Collection[str], cap: int) -> int:
        """How many nodes nodes_capping_types_json holds without a limit."""
        types = sorted(capped)
        marks = placeholders(len(types))
        capped_count = _count(_SQL_COUNT_OF_TYPES.format(types=marks), [*types])
        return _count(_SQL_COUNT_OTHER_TYPES.format(types=marks), [*types]) + min(cap, capped_count)

    def relations_json(self) -> list[str]:
        """Every relation, `{from, to, type}` as JSON text."""
        return _texts(self._graph_sql.all_relations, [])

    def layer_nodes_json(self, types: Collection[str], limit: int | None = None) -> list[str]:
        """The nodes (JSON text) of the active entities of these types, most recently used
        first; only the first `limit` when given."""
        ordered = sorted(types)
        marks = placeholders(len(ordered))
        if limit is None:
            return _texts(self._graph_sql.layer_nodes.format(types=marks), [*ordered])
        return _texts(self._graph_sql.layer_first_nodes.format(types=marks), [*ordered, limit])

    def layer_count(self, types: Collection[str]) -> int:
        """How many nodes layer_nodes_json holds without a limit."""
        ordered = sorted(types)
        return _count(_SQL_COUNT_LAYER.format(types=placeholders(len(ordered))), [*ordered])

    def layer_relations_json(self, types: Collection[str]) -> list[str]:
        """The relations between active entities of these types, `{from, to, type}` as JSON
        text."""
        ordered = sorted(types)
        sql = self._graph_sql.layer_relations.format(types=placeholders(len(ordered)))
        return _texts(sql, [*ordered, *ordered])

    def incoming_counts(self, relation_type: str, types: Collection[str]) -> dict[str, int]:
        """Name -> how many active entities point at it with `relation_type`, for the active
        entities of these types that have any."""
        ordered = sorted(types)
        with cursor() as cur:
            cur.execute(
                _SQL_INCOMING_COUNTS.format(types=placeholders(len(ordered))),
                [relation_type, *ordered],
            )
            return {name: n for name, n in cur.fetchall()}

    def source_ids(self, target_id: int, relation_type: str, limit: int) -> list[int]:
        """The `limit` newest active entities pointing at `target_id` with `relation_type`."""
        return [int(i) for i in _column(_SQL_SOURCES_OF, [target_id, relation_type, limit])]
