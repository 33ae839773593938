"""The dashboard's counts (graph/storage/aggregates.py) on PostgreSQL: the statements whose
SQL is SQLite's own — a day as the first ten characters of the stored time text, a bare
column beside MIN(), json_each — in PostgreSQL's dialect."""

from __future__ import annotations

from collections.abc import Sequence

from graph.storage.aggregates import AggregateQueries


def _utc_day(column: str) -> str:
    """The UTC day (YYYY-MM-DD) of the timestamptz `column`."""
    return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


# As graph/storage/aggregates.py's statements of the same names.
_SQL_CREATED_PER_DAY = f"""
SELECT {_utc_day("created_at")} AS day, COUNT(*) FROM graph_entity
WHERE created_at >= ? GROUP BY day
"""
_SQL_ACCESSED_PER_DAY = f"""
SELECT {_utc_day("last_accessed_at")} AS day, COUNT(*) FROM graph_entity
WHERE last_accessed_at >= ? GROUP BY day
"""
_SQL_REUSED_PER_DAY = f"""
SELECT {_utc_day("last_accessed_at")} AS day, COUNT(*) FROM graph_entity
WHERE last_accessed_at >= ? AND status = 'active' AND type NOT IN ({{types}}) GROUP BY day
"""
# Params and result as aggregates.py's _SQL_PROJECT_COUNTS, the suffixes as a text array.
# Each entity's first project tag and first matching suffix by DISTINCT ON (the row its ORDER
# BY puts first); a name too short for its suffix gets an empty project (SQLite's substr
# takes a negative length, PostgreSQL's refuses one), which min_length leaves out.
_SQL_PROJECT_COUNTS = """
WITH tagged AS (
    SELECT DISTINCT ON (t.entity_id) t.entity_id, substr(t.name, ?) AS project
    FROM graph_tag AS t JOIN graph_entity AS e ON e.id = t.entity_id
    WHERE e.status = 'active' AND t.name > ? AND t.name < ?
    ORDER BY t.entity_id, t.id
),
by_name AS (
    SELECT DISTINCT ON (e.id) e.id AS entity_id,
           substr(e.name, length(?) + 1,
                  GREATEST(0, length(e.name) - length(?) - length(s.value) - 1)) AS project
    FROM graph_entity AS e
    CROSS JOIN unnest(CAST(? AS text[])) WITH ORDINALITY AS s (value, key)
    WHERE e.status = 'active' AND e.name > ? AND e.name < ?
      AND right(e.name, length(s.value) + 1) = '-' || s.value
      AND NOT EXISTS (SELECT 1 FROM graph_tag AS t
                      WHERE t.entity_id = e.id AND t.name >= ? AND t.name < ?)
    ORDER BY e.id, s.key
)
SELECT project, type, source, COUNT(*) FROM (
    SELECT tagged.project, e.type, 'tag' AS source
    FROM tagged JOIN graph_entity AS e ON e.id = tagged.entity_id
    UNION ALL
    SELECT by_name.project, e.type, 'heuristic' AS source
    FROM by_name JOIN graph_entity AS e ON e.id = by_name.entity_id
    WHERE length(by_name.project) >= ?
) AS counted
GROUP BY project, type, source
"""


class PostgresAggregateQueries(AggregateQueries):
    _sql_created_per_day = _SQL_CREATED_PER_DAY
    _sql_accessed_per_day = _SQL_ACCESSED_PER_DAY
    _sql_reused_per_day = _SQL_REUSED_PER_DAY
    _sql_project_counts = _SQL_PROJECT_COUNTS

    def _suffixes_param(self, suffixes: Sequence[str]) -> object:
        return list(suffixes)
