"""Counts over the whole graph for the dashboard's data routes (GET /v1/stats, /v1/analytics,
/v1/analytics/pm, /v1/projects): each one or two aggregate queries, so their cost grows with
a scan of the entity table, never with Python objects per row. The selectors in graph/ops/
decide the windows, thresholds, types and caps and pass them in as bound values; times are
naive UTC (`db_time`), the form Django's SQLite backend stores, so text comparisons order.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from graph.storage.cursor import cursor, db_time, placeholders

# --- GET /v1/stats ----------------------------------------------------------------------------

# Result: entities, observations, relations, distinct tag names (every status).
_SQL_TOTALS = """
SELECT (SELECT COUNT(*) FROM graph_entity),
       (SELECT COUNT(*) FROM graph_observation),
       (SELECT COUNT(*) FROM graph_relation),
       (SELECT COUNT(DISTINCT name) FROM graph_tag)
"""
# Params: limit. Result: type, entities of that type; the most common first, ties by name.
_SQL_TYPE_COUNTS = """
SELECT type, COUNT(*) AS n FROM graph_entity GROUP BY type ORDER BY n DESC, type LIMIT ?
"""
# Params: limit. Result: tag, entities carrying it (a tag is unique per entity).
_SQL_TAG_COUNTS = """
SELECT name, COUNT(*) AS n FROM graph_tag GROUP BY name ORDER BY n DESC, name LIMIT ?
"""
# Result: status, entities in it; the most common first.
_SQL_STATUS_COUNTS = """
SELECT status, COUNT(*) AS n FROM graph_entity GROUP BY status ORDER BY n DESC, status
"""

# --- GET /v1/analytics ------------------------------------------------------------------------

# Params: accessed since, confidence threshold, created since, lesson type. Result: active
# entities; active ones accessed since; active ones above the threshold; entities (any status)
# created since; entities (any status) of the lesson type. The health score's inputs.
# (Aggregate FILTER clauses, which PostgreSQL reads too; in SQLite they scanned 100k rows in
# two thirds of the time SUM over boolean expressions took.)
_SQL_HEALTH_COUNTS = """
SELECT COUNT(*) FILTER (WHERE status = 'active'),
       COUNT(*) FILTER (WHERE status = 'active' AND last_accessed_at >= ?),
       COUNT(*) FILTER (WHERE status = 'active' AND confidence > ?),
       COUNT(*) FILTER (WHERE created_at >= ?),
       COUNT(*) FILTER (WHERE type = ?)
FROM graph_entity
"""
# Params: since. Result: UTC day (YYYY-MM-DD), entities (any status) created that day.
_SQL_CREATED_PER_DAY = """
SELECT substr(created_at, 1, 10) AS day, COUNT(*) FROM graph_entity
WHERE created_at >= ? GROUP BY day
"""
# Params: since. Result: UTC day, entities (any status) whose last recall was that day.
_SQL_ACCESSED_PER_DAY = """
SELECT substr(last_accessed_at, 1, 10) AS day, COUNT(*) FROM graph_entity
WHERE last_accessed_at >= ? GROUP BY day
"""
# Params: since, the excluded types. Result: UTC day, active entities of other types whose
# last recall was that day.
_SQL_REUSED_PER_DAY = """
SELECT substr(last_accessed_at, 1, 10) AS day, COUNT(*) FROM graph_entity
WHERE last_accessed_at >= ? AND status = 'active' AND type NOT IN ({types}) GROUP BY day
"""
# Params: since, the excluded types. Result: active entities of other types recalled since.
_SQL_REUSED_SINCE = """
SELECT COUNT(*) FROM graph_entity
WHERE last_accessed_at >= ? AND status = 'active' AND type NOT IN ({types})
"""
# Params: the bucket boundaries (newest first), the excluded types. Result: type, index of the
# first boundary the creation time is after (len(boundaries) when none), active entities.
_SQL_AGE_BUCKETS = """
SELECT type, CASE {cases} ELSE ? END AS bucket, COUNT(*) FROM graph_entity
WHERE status = 'active' AND type NOT IN ({types})
GROUP BY type, bucket
"""
_SQL_AGE_CASE = "WHEN created_at > ? THEN {index}"
# Params: types. Result: type, active entities of that type.
_SQL_ACTIVE_TYPE_COUNTS = """
SELECT type, COUNT(*) FROM graph_entity WHERE status = 'active' AND type IN ({types})
GROUP BY type
"""

# --- GET /v1/analytics/pm ---------------------------------------------------------------------

# Params: decision type, window start; release type, window start; plan type, stale-before
# (twice); decision type, open-before, superseding relation type. Result, over active
# entities: decisions created in the window; releases created in the window; plans neither
# recalled nor written since stale-before; decisions created before open-before that nothing
# supersedes; all of them; those with no relation either way. (FILTER clauses, as above.)
_SQL_PM_COUNTS = """
SELECT COUNT(*) FILTER (WHERE e.type = ? AND e.created_at >= ?),
       COUNT(*) FILTER (WHERE e.type = ? AND e.created_at >= ?),
       COUNT(*) FILTER (WHERE e.type = ? AND e.updated_at < ?
                        AND COALESCE(e.last_accessed_at, e.updated_at) < ?),
       COUNT(*) FILTER (WHERE e.type = ? AND e.created_at < ? AND NOT EXISTS (
           SELECT 1 FROM graph_relation AS r WHERE r.to_entity_id = e.id AND r.type = ?)),
       COUNT(*),
       COUNT(*) FILTER (WHERE
           NOT EXISTS (SELECT 1 FROM graph_relation AS r WHERE r.from_entity_id = e.id)
           AND NOT EXISTS (SELECT 1 FROM graph_relation AS r WHERE r.to_entity_id = e.id))
FROM graph_entity AS e WHERE e.status = 'active'
"""
_SQL_RELATION_COUNT = "SELECT COUNT(*) FROM graph_relation"

# --- GET /v1/projects -------------------------------------------------------------------------

# Params: the project-tag prefix (and its length + 1), twice more for the range; the legacy
# lesson-name suffixes as a JSON array; the minimum project length. Result: project, entity
# type, source ('tag' | 'heuristic'), active entities.
# - tagged: each active entity's first non-empty project tag (the lowest tag id; SQLite takes
#   a bare column from the row holding the MIN, https://sqlite.org/lang_select.html#bareagg).
#   The name range `>= 'project:' AND < 'project;'` is the prefix as an index range.
# - by_name: active entities with no project tag named `lesson-<project>-<suffix>`, the
#   lesson names of MeMesh before project tags (they arrive in imported bundles).
_SQL_PROJECT_COUNTS = """
WITH tagged AS (
    SELECT t.entity_id, substr(t.name, ?) AS project, MIN(t.id)
    FROM graph_tag AS t JOIN graph_entity AS e ON e.id = t.entity_id
    WHERE e.status = 'active' AND t.name > ? AND t.name < ?
    GROUP BY t.entity_id
),
by_name AS (
    SELECT e.id AS entity_id,
           substr(e.name, length(?) + 1,
                  length(e.name) - length(?) - length(s.value) - 1) AS project,
           MIN(s.key)
    FROM graph_entity AS e JOIN json_each(?) AS s
    WHERE e.status = 'active' AND e.name > ? AND e.name < ?
      AND substr(e.name, -length(s.value) - 1) = '-' || s.value
      AND NOT EXISTS (SELECT 1 FROM graph_tag AS t
                      WHERE t.entity_id = e.id AND t.name >= ? AND t.name < ?)
    GROUP BY e.id
)
SELECT project, type, source, COUNT(*) FROM (
    SELECT tagged.project, e.type, 'tag' AS source
    FROM tagged JOIN graph_entity AS e ON e.id = tagged.entity_id
    UNION ALL
    SELECT by_name.project, e.type, 'heuristic' AS source
    FROM by_name JOIN graph_entity AS e ON e.id = by_name.entity_id
    WHERE length(by_name.project) >= ?
)
GROUP BY project, type, source
"""


@dataclass(frozen=True, slots=True)
class GraphTotals:
    entities: int
    observations: int
    relations: int
    tags: int


@dataclass(frozen=True, slots=True)
class HealthCounts:
    active: int
    accessed_recently: int
    confident: int
    new_recently: int
    lessons: int


@dataclass(frozen=True, slots=True)
class PmCounts:
    decisions_in_window: int
    releases_in_window: int
    stale_plans: int
    open_decisions: int
    active: int
    orphans: int
    relations: int


def _pairs(sql: str, params: Sequence[object]) -> list[tuple[str, int]]:
    with cursor() as cur:
        cur.execute(sql, list(params))
        return [(key, n) for key, n in cur.fetchall()]


def _prefix_end(prefix: str) -> str:
    """The first string after every string starting with `prefix` (its last character
    incremented): `name >= prefix AND name < end` is the prefix as an index range."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class AggregateQueries:
    # The statements in SQLite's dialect (graph/storage/postgres/aggregates.py has PostgreSQL's).
    _sql_created_per_day = _SQL_CREATED_PER_DAY
    _sql_accessed_per_day = _SQL_ACCESSED_PER_DAY
    _sql_reused_per_day = _SQL_REUSED_PER_DAY
    _sql_project_counts = _SQL_PROJECT_COUNTS

    # --- stats ------------------------------------------------------------------------------

    def totals(self) -> GraphTotals:
        with cursor() as cur:
            cur.execute(_SQL_TOTALS)
            return GraphTotals(*cur.fetchone())

    def type_counts(self, limit: int) -> list[tuple[str, int]]:
        """(type, entities) of the `limit` most common types, every status."""
        return _pairs(_SQL_TYPE_COUNTS, [limit])

    def tag_counts(self, limit: int) -> list[tuple[str, int]]:
        """(tag, entities) of the `limit` most common tags, every status."""
        return _pairs(_SQL_TAG_COUNTS, [limit])

    def status_counts(self) -> list[tuple[str, int]]:
        return _pairs(_SQL_STATUS_COUNTS, [])

    # --- analytics ----------------------------------------------------------------------------

    def health_counts(
        self, *, accessed_since: datetime, confidence_above: float, created_since: datetime,
        lesson_type: str,
    ) -> HealthCounts:  # fmt: skip
        with cursor() as cur:
            cur.execute(
                _SQL_HEALTH_COUNTS,
                [db_time(accessed_since), confidence_above, db_time(created_since), lesson_type],
            )
            return HealthCounts(*cur.fetchone())

    def created_per_day(self, since: datetime) -> dict[str, int]:
        """UTC day -> entities created that day, from `since` on."""
        return dict(_pairs(self._sql_created_per_day, [db_time(since)]))

    def accessed_per_day(self, since: datetime) -> dict[str, int]:
        """UTC day -> entities whose last recall fell on that day, from `since` on (each
        entity counts once, on its latest recall: the table keeps no history)."""
        return dict(_pairs(self._sql_accessed_per_day, [db_time(since)]))

    def reused_per_day(self, since: datetime, excluded_types: Collection[str]) -> dict[str, int]:
        """As accessed_per_day, for active entities of types other than `excluded_types`."""
        types = sorted(excluded_types)
        sql = self._sql_reused_per_day.format(types=placeholders(len(types)))
        return dict(_pairs(sql, [db_time(since), *types]))

    def reused_since(self, since: datetime, excluded_types: Collection[str]) -> int:
        types = sorted(excluded_types)
        with cursor() as cur:
            cur.execute(
                _SQL_REUSED_SINCE.format(types=placeholders(len(types))), [db_time(since), *types]
            )
            return int(cur.fetchone()[0])

    def age_buckets(
        self, boundaries: Sequence[datetime], excluded_types: Collection[str]
    ) -> list[tuple[str, int, int]]:
        """(type, bucket, active entities): bucket i < len(boundaries) holds those created
        after boundaries[i] and not after boundaries[i - 1] (`boundaries` newest first), bucket
        len(boundaries) the rest; types in `excluded_types` left out."""
        types = sorted(excluded_types)
        cases = " ".join(_SQL_AGE_CASE.format(index=i) for i in range(len(boundaries)))
        sql = _SQL_AGE_BUCKETS.format(cases=cases, types=placeholders(len(types)))
        with cursor() as cur:
            cur.execute(sql, [*(db_time(b) for b in boundaries), len(boundaries), *types])
            return [(type_, bucket, n) for type_, bucket, n in cur.fetchall()]

    def active_type_counts(self, types: Collection[str]) -> dict[str, int]:
        """Type -> active entities, for those of these types that have any."""
        ordered = sorted(types)
        sql = _SQL_ACTIVE_TYPE_COUNTS.format(types=placeholders(len(ordered)))
        return dict(_pairs(sql, ordered))

    # --- analytics/pm -------------------------------------------------------------------------

    def pm_counts(
        self, *, window_start: datetime, stale_before: datetime, open_before: datetime,
        decision_type: str, release_type: str, plan_type: str, superseding_type: str,
    ) -> PmCounts:  # fmt: skip
        params = [
            decision_type, db_time(window_start),
            release_type, db_time(window_start),
            plan_type, db_time(stale_before), db_time(stale_before),
            decision_type, db_time(open_before), superseding_type,
        ]  # fmt: skip
        with cursor() as cur:
            cur.execute(_SQL_PM_COUNTS, params)
            decisions, releases, stale, open_, active, orphans = cur.fetchone()
            cur.execute(_SQL_RELATION_COUNT)
            relations = cur.fetchone()[0]
        return PmCounts(decisions, releases, stale, open_, active, orphans, relations)

    # --- projects -----------------------------------------------------------------------------

    def project_counts(
        self, *, tag_prefix: str, name_prefix: str, name_suffixes: Sequence[str],
        min_length: int,
    ) -> list[tuple[str, str, str, int]]:  # fmt: skip
        """(project, type, source, active entities): `source` 'tag' for an entity's first
        `<tag_prefix><project>` tag, 'heuristic' for an untagged entity named
        `<name_prefix><project>-<suffix>` (`project` at least `min_length` characters)."""
        params = [
            len(tag_prefix) + 1, tag_prefix, _prefix_end(tag_prefix),
            name_prefix, name_prefix, self._suffixes_param(name_suffixes),
            name_prefix, _prefix_end(name_prefix),
            tag_prefix, _prefix_end(tag_prefix),
            min_length,
        ]  # fmt: skip
        with cursor() as cur:
            cur.execute(self._sql_project_counts, params)
            return [(p, t, s, n) for p, t, s, n in cur.fetchall()]

    def _suffixes_param(self, suffixes: Sequence[str]) -> object:
        """The name suffixes as _sql_project_counts binds them: a JSON array (json_each)."""
        return json.dumps(list(suffixes))
