"""The keyword index as the consistency checker reads it, on PostgreSQL: an entity's document
row stands for FTS5's row (`archived` says which of the two tables it would be in), and the
text it stores is what the checker compares; the postings are checked against that text."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from graph.storage.cursor import cursor
from graph.storage.keyword.consistency import IndexedText, KeywordConsistency
from graph.storage.postgres.keyword_postings import DOC, POSTING, doc_postings

# Result: ids of entities without a document row. (An entity has one row at most: one in the
# wrong index is reported by _SQL_MISPLACED alone, where FTS5 can hold a row in each table.)
_SQL_MISSING = f"""
SELECT e.id FROM graph_entity AS e
WHERE NOT EXISTS (SELECT 1 FROM {DOC} AS d WHERE d.entity_id = e.id)
ORDER BY e.id
"""
# Params: the index (archived), the status it is for. Result: entity id and status (NULL: no
# such entity) of each of its rows whose entity is missing or has another status.
_SQL_MISPLACED = f"""
SELECT d.entity_id, e.status FROM {DOC} AS d
LEFT JOIN graph_entity AS e ON e.id = d.entity_id
WHERE d.archived = ? AND (e.id IS NULL OR e.status != ?)
ORDER BY d.entity_id
"""
# Params: after id, limit. As SQLite's _SQL_INDEXED_TEXT_PAGE, the text from the document row
# when it is in the index the entity's status puts it in.
_SQL_INDEXED_TEXT_PAGE = f"""
SELECT e.id, e.name, e.title, e.status, d.head, d.body
FROM graph_entity AS e
LEFT JOIN {DOC} AS d ON d.entity_id = e.id AND d.archived = (e.status != 'active')
WHERE e.id > ?
ORDER BY e.id
LIMIT ?
"""
# Params: first id, last id. Result: entity id, term, head tf, body tf of the postings in range.
_SQL_POSTINGS_IN_RANGE = f"""
SELECT entity_id, term, head_tf, body_tf FROM {POSTING} WHERE entity_id BETWEEN ? AND ?
"""


class PostgresKeywordConsistency(KeywordConsistency):
    """The consistency checker's reads of the keyword index on PostgreSQL."""

    sql_indexed_text_page = _SQL_INDEXED_TEXT_PAGE

    def fts_missing_ids(self) -> list[int]:
        with cursor() as cur:
            cur.execute(_SQL_MISSING)
            return [row[0] for row in cur.fetchall()]

    def fts_misplaced_rows(self, *, archived: bool) -> list[tuple[int, str | None]]:
        with cursor() as cur:
            cur.execute(_SQL_MISPLACED, [archived, "archived" if archived else "active"])
            return [(row[0], row[1]) for row in cur.fetchall()]

    def indexed_text_page(self, after_id: int, limit: int) -> list[IndexedText]:
        """SQLite's page, except that a row whose postings are not those of its stored text
        comes back with no body (None beside a head): the checker then finds its text stale,
        and index_sync rewrites both."""
        page = super().indexed_text_page(after_id, limit)
        if not page:
            return page
        held: defaultdict[int, set[tuple[str, int, int]]] = defaultdict(set)
        with cursor() as cur:
            cur.execute(_SQL_POSTINGS_IN_RANGE, [page[0].entity_id, page[-1].entity_id])
            for entity_id, term, head_tf, body_tf in cur.fetchall():
                held[entity_id].add((term, head_tf, body_tf))
        out = []
        for row in page:
            if (
                row.head is not None
                and row.body is not None
                and set(doc_postings(row.head, row.body).postings) != held[row.entity_id]
            ):
                row = replace(row, body=None)
            out.append(row)
        return out
