"""The keyword index as the consistency checker reads it (graph/indexing/consistency.py): rows
missing or in the wrong table, and the text stored beside what it should be."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models

from graph.storage.cursor import cursor
from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS, by_entity

# Result: ids of entities without a row in the keyword table their status puts them in.
# FTS5 answers `rowid = ?` with a point lookup, so this is one index probe per entity.
_SQL_FTS_MISSING = f"""
SELECT e.id FROM graph_entity AS e
WHERE (e.status = 'active'
       AND NOT EXISTS (SELECT 1 FROM {LIVE_FTS} AS f WHERE f.rowid = e.id))
   OR (e.status != 'active'
       AND NOT EXISTS (SELECT 1 FROM {ARCHIVED_FTS} AS a WHERE a.rowid = e.id))
ORDER BY e.id
"""
# Params: the status the table is for. Result: rowid and entity status (NULL: no such entity)
# of each row of {table} whose entity is missing or has another status.
_SQL_FTS_MISPLACED = """
SELECT f.rowid, e.status FROM {table} AS f
LEFT JOIN graph_entity AS e ON e.id = f.rowid
WHERE e.id IS NULL OR e.status != ?
ORDER BY f.rowid
"""
# Params: after id, limit. Result per entity (id order): id, name, title, status, and the head
# and body stored in the table its status puts it in (NULL when that row is missing).
_SQL_INDEXED_TEXT_PAGE = f"""
SELECT e.id, e.name, e.title, e.status,
       coalesce(f.head, a.head), coalesce(f.body, a.body)
FROM graph_entity AS e
LEFT JOIN {LIVE_FTS} AS f ON f.rowid = e.id AND e.status = 'active'
LEFT JOIN {ARCHIVED_FTS} AS a ON a.rowid = e.id AND e.status != 'active'
WHERE e.id > ?
ORDER BY e.id
LIMIT ?
"""
# Params: first id, last id. Result: entity_id, text of the observations (or tags) in range.
_SQL_OBSERVATIONS_IN_RANGE = (
    "SELECT entity_id, text FROM graph_observation WHERE entity_id BETWEEN ? AND ? ORDER BY id"
)
_SQL_TAGS_IN_RANGE = (
    "SELECT entity_id, name FROM graph_tag WHERE entity_id BETWEEN ? AND ? ORDER BY id"
)


@dataclass(frozen=True, slots=True)
class IndexedText:
    """An entity's source fields beside the keyword-index text stored for it."""

    entity_id: int
    name: str
    title: str | None
    status: str
    head: str | None  # None: no row in the table its status puts it in
    body: str | None
    observations: list[str]
    tags: list[str]


class KeywordConsistency(models.Manager):
    """The consistency checker's reads of the keyword index, a part of Entity.objects."""

    # indexed_text_page's statement (another database's implementation gives its own).
    sql_indexed_text_page = _SQL_INDEXED_TEXT_PAGE

    def fts_missing_ids(self) -> list[int]:
        """Entities without a row in the keyword table their status puts them in."""
        with cursor() as cur:
            cur.execute(_SQL_FTS_MISSING)
            return [row[0] for row in cur.fetchall()]

    def fts_misplaced_rows(self, *, archived: bool) -> list[tuple[int, str | None]]:
        """(rowid, entity status or None when there is no such entity) of the rows of the
        live (or archived) table that do not belong there."""
        table = ARCHIVED_FTS if archived else LIVE_FTS
        status = "archived" if archived else "active"
        with cursor() as cur:
            cur.execute(_SQL_FTS_MISPLACED.format(table=table), [status])
            return [(row[0], row[1]) for row in cur.fetchall()]

    def indexed_text_page(self, after_id: int, limit: int) -> list[IndexedText]:
        """The next `limit` entities after `after_id` (id order), each with its observations
        and tags and the keyword-index text stored for it."""
        with cursor() as cur:
            cur.execute(self.sql_indexed_text_page, [after_id, limit])
            rows = cur.fetchall()
            if not rows:
                return []
            span = [rows[0][0], rows[-1][0]]
            cur.execute(_SQL_OBSERVATIONS_IN_RANGE, span)
            bodies = by_entity(cur.fetchall())
            cur.execute(_SQL_TAGS_IN_RANGE, span)
            tags = by_entity(cur.fetchall())
        return [
            IndexedText(
                entity_id,
                name,
                title,
                status,
                head,
                body,
                bodies.get(entity_id, []),
                tags.get(entity_id, []),
            )
            for entity_id, name, title, status, head, body in rows
        ]
