"""Which active entities a scope holds (graph/storage/entity_filters.py) on PostgreSQL: the
same statements without SQLite's `+column` planner hints (PostgreSQL has no unary plus on
text, and its planner chooses by its statistics)."""

from __future__ import annotations

from graph.storage.entity_filters import EntityScopeQueries

# As graph/storage/entity_filters.py's _SQL_SCOPED_IDS (in id order, as SQLite's rowid scan
# gives them) and _SQL_EXPIRED_EXIST.
_SQL_SCOPED_IDS = (
    "SELECT e.id FROM graph_entity AS e WHERE e.status = 'active' {filters} ORDER BY e.id"
)
_SQL_EXPIRED_EXIST = (
    "SELECT 1 FROM graph_entity AS e WHERE e.expires_at <= ? AND e.status = 'active' LIMIT 1"
)


class PostgresScopeQueries(EntityScopeQueries):
    _sql_scoped_ids = _SQL_SCOPED_IDS
    _sql_expired_exist = _SQL_EXPIRED_EXIST
