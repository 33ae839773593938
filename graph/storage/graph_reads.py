"""The graph view's reads (GET /v1/graph, ?layer=work, /v1/graph/evidence): which entities
a view holds, in its order, and the relations between them, as set-based SQL. The selector
(graph/ops/graph_view.py) decides the types and caps; the documents themselves come from
DocumentQueries.documents.

Entity types are bound values (`{types}` is a run of `?` placeholders), never SQL text.
"""

from __future__ import annotations

from collections.abc import Collection

from graph.storage.cursor import cursor, placeholders

# The later of an entity's last recall and its last write: "most recently used" (DESIGN §5.3
# reads recency the same way, so a new memory is never behind an old one).
_LAST_USED = "MAX(e.updated_at, COALESCE(e.last_accessed_at, e.updated_at))"

# Params: the capped types. Result: ids of every entity of another type, most recently used
# first (every status: the full view shows archived memories too, as the reference's does).
_SQL_UNCAPPED_IDS = f"""
SELECT e.id FROM graph_entity AS e WHERE e.type NOT IN ({{types}})
ORDER BY {_LAST_USED} DESC, e.id DESC
"""
# Params: the capped types, limit. Result: ids of the newest entities of those types.
_SQL_NEWEST_IDS = """
SELECT e.id FROM graph_entity AS e WHERE e.type IN ({types})
ORDER BY e.created_at DESC, e.id DESC LIMIT ?
"""
# Result: from name, to name, type of every relation, in creation order.
_SQL_ALL_RELATIONS = """
SELECT f.name, t.name, r.type
FROM graph_relation AS r
JOIN graph_entity AS f ON f.id = r.from_entity_id
JOIN graph_entity AS t ON t.id = r.to_entity_id
ORDER BY r.id
"""
# Params: the layer's types. Result: ids of its active entities, most recently used first.
_SQL_LAYER_IDS = f"""
SELECT e.id FROM graph_entity AS e WHERE e.status = 'active' AND e.type IN ({{types}})
ORDER BY {_LAST_USED} DESC, e.id DESC
"""
# Params: the layer's types, twice. Result: from name, to name, type of the relations whose
# two ends are active entities of the layer, in creation order.
_SQL_LAYER_RELATIONS = """
SELECT f.name, t.name, r.type
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


def _ids(sql: str, params: list[object]) -> list[int]:
    with cursor() as cur:
        cur.execute(sql, params)
        return [row[0] for row in cur.fetchall()]


def _triples(sql: str, params: list[object]) -> list[tuple[str, str, str]]:
    with cursor() as cur:
        cur.execute(sql, params)
        return [(f, t, type_) for f, t, type_ in cur.fetchall()]


class GraphReadQueries:
    def ids_capping_types(self, capped: Collection[str], cap: int) -> list[int]:
        """Every entity whose type is not in `capped` (most recently used first), then the
        `cap` newest of those types."""
        types = sorted(capped)
        marks = placeholders(len(types))
        return _ids(_SQL_UNCAPPED_IDS.format(types=marks), [*types]) + _ids(
            _SQL_NEWEST_IDS.format(types=marks), [*types, cap]
        )

    def relation_names(self) -> list[tuple[str, str, str]]:
        """(from name, to name, type) of every relation."""
        return _triples(_SQL_ALL_RELATIONS, [])

    def layer_ids(self, types: Collection[str]) -> list[int]:
        """The active entities of these types, most recently used first."""
        ordered = sorted(types)
        return _ids(_SQL_LAYER_IDS.format(types=placeholders(len(ordered))), [*ordered])

    def layer_relation_names(self, types: Collection[str]) -> list[tuple[str, str, str]]:
        """(from name, to name, type) of the relations between active entities of these
        types."""
        ordered = sorted(types)
        sql = _SQL_LAYER_RELATIONS.format(types=placeholders(len(ordered)))
        return _triples(sql, [*ordered, *ordered])

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
        return _ids(_SQL_SOURCES_OF, [target_id, relation_type, limit])
