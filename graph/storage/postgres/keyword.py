"""The keyword index's writes on PostgreSQL: each write's transaction replaces the posting rows
of the entities it touched (graph/storage/postgres/keyword_postings.py says what they hold) and
moves the index totals by what it removed and added."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graph.storage.keyword.tables import index_columns
from graph.storage.keyword.writes import IndexState, KeywordIndexWrites, stamp_embedding_hashes
from graph.storage.postgres.keyword_postings import DOC, POSTING, TOTALS, TOTALS_SLOTS, doc_postings

# Params: ids. Result: (archived, tokens) of each document row removed.
_SQL_DOC_DELETE = f"DELETE FROM {DOC} WHERE entity_id = ANY(?) RETURNING archived, tokens"
_SQL_POSTING_DELETE = f"DELETE FROM {POSTING} WHERE entity_id = ANY(?)"
# Params: arrays of entity ids, archived flags, token counts, heads, bodies.
_SQL_DOC_INSERT = f"""
INSERT INTO {DOC} (entity_id, archived, tokens, head, body)
SELECT * FROM unnest(?::bigint[], ?::boolean[], ?::integer[], ?::text[], ?::text[])
"""
# Params: arrays of archived flags, terms, entity ids, head tfs, body tfs. One statement for
# every posting of the write: a row per statement would cost a round trip per term.
_SQL_POSTING_INSERT = f"""
INSERT INTO {POSTING} (archived, term, entity_id, head_tf, body_tf)
SELECT * FROM unnest(?::boolean[], ?::text[], ?::bigint[], ?::integer[], ?::integer[])
"""
# Params: live rows, live tokens, archived rows, archived tokens (deltas). The slot is this
# connection's: concurrent writers mostly update different rows, and one transaction only
# ever locks its one row (no lock-order deadlock between two writers).
_SQL_TOTALS_MOVE = f"""
UPDATE {TOTALS} SET live_rows = live_rows + ?, live_tokens = live_tokens + ?,
    archived_rows = archived_rows + ?, archived_tokens = archived_tokens + ?,
    writes = writes + 1
WHERE slot = pg_backend_pid() % {TOTALS_SLOTS}
"""
_SQL_CLEAR = [
    f"TRUNCATE {POSTING}, {DOC}",
    f"UPDATE {TOTALS} SET live_rows = 0, live_tokens = 0, archived_rows = 0,"
    " archived_tokens = 0, writes = writes + 1",
]


class PostgresKeywordIndexWrites(KeywordIndexWrites):
    """The keyword index's writes on PostgreSQL (index_sync, index_new and index_rebuild are
    SQLite's, around these two steps)."""

    def _index_write(self, cur: Any, ids: Sequence[int], states: Sequence[IndexState]) -> list[int]:
        # [live rows, live tokens, archived rows, archived tokens]
        delta = [0, 0, 0, 0]
        cur.execute(_SQL_DOC_DELETE, [list(ids)])
        for archived, tokens in cur.fetchall():
            delta[2 if archived else 0] -= 1
            delta[3 if archived else 1] -= tokens
        cur.execute(_SQL_POSTING_DELETE, [list(ids)])
        docs: list[list[Any]] = [[], [], [], [], []]
        postings: list[list[Any]] = [[], [], [], [], []]
        for entity_id, name, title, status, observations, tags in states:
            archived = status != "active"
            head, body = index_columns(name, title, observations, tags)
            row = doc_postings(head, body)
            for column, value in zip(
                docs, (entity_id, archived, row.tokens, head, body), strict=True
            ):
                column.append(value)
            for term, head_tf, body_tf in row.postings:
                for column, value in zip(
                    postings, (archived, term, entity_id, head_tf, body_tf), strict=True
                ):
                    column.append(value)
            delta[2 if archived else 0] += 1
            delta[3 if archived else 1] += row.tokens
        if states:
            cur.execute(_SQL_DOC_INSERT, docs)
            cur.execute(_SQL_POSTING_INSERT, postings)
        cur.execute(_SQL_TOTALS_MOVE, delta)
        return stamp_embedding_hashes(cur, states)

    def _index_clear(self, cur: Any) -> None:
        for sql in _SQL_CLEAR:
            cur.execute(sql)
