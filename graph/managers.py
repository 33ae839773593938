"""Raw SQL for the keyword (FTS5) and vector (vec0) indexes.

Two FTS5 tables share one shape (name, title, body, tags), keyed by entity id:
`graph_entity_fts` holds active entities, `graph_entity_fts_archived` archived ones. Keeping
archived rows out of the live table means ordinary recall can never surface them, and the
fts5vocab table over the live index gives the per-term document counts that the
document-frequency guard needs, counted over active rows only, in one index lookup per term.

Every column holds `graph.text.index_text(...)` output: memesh tokenizes in Python and FTS5's
`ascii` tokenizer only splits on the spaces between those tokens. The tables store that text
(they are not contentless): only then does deleting a row also take it out of the bm25
statistics, which keeps the index equal to a rebuild (migration 0002 says more).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import connection, models

from graph.text import index_text

if TYPE_CHECKING:
    pass

LIVE_FTS = "graph_entity_fts"
ARCHIVED_FTS = "graph_entity_fts_archived"
VOCAB = "graph_entity_fts_vocab"
ARCHIVED_VOCAB = "graph_entity_fts_archived_vocab"
VEC = "graph_entity_vec"

# Column weights for bm25(): name, title, body (observations), tags.
# A title is a summary written to be read and found, so a hit there is the strongest signal;
# a name is an identifier, often abbreviated ("auth-decision"); observations carry most of
# the words and get the base weight; tags are labels such as project:x shared by many
# memories, so they only nudge.
BM25_WEIGHTS = "2.0, 3.0, 1.0, 0.5"

# Params: ids. Result: id, name, title, status.
_SQL_INDEX_ENTITIES = "SELECT id, name, title, status FROM graph_entity WHERE id IN ({ids})"
# Params: ids. Result: entity_id, text in insertion order.
_SQL_INDEX_OBSERVATIONS = (
    "SELECT entity_id, text FROM graph_observation WHERE entity_id IN ({ids}) ORDER BY id"
)
# Params: ids. Result: entity_id, name.
_SQL_INDEX_TAGS = "SELECT entity_id, name FROM graph_tag WHERE entity_id IN ({ids}) ORDER BY id"
_SQL_FTS_DELETE = "DELETE FROM {table} WHERE rowid IN ({ids})"
# Params: id, name, title, body, tags (all index_text output).
_SQL_FTS_INSERT = "INSERT INTO {table} (rowid, name, title, body, tags) VALUES (%s, %s, %s, %s, %s)"

# Params: one term. Result: number of rows of that index containing it.
_SQL_TERM_DOC_FREQ = "SELECT doc FROM {vocab} WHERE term = %s"
# Result: number of rows in that index. docsize has one small row per document.
_SQL_ROW_COUNT = "SELECT count(*) FROM {table}_docsize"

# Params: MATCH expression, [namespace], [tag], limit. Result: id, bm25 (negative, lower better).
# Ties break on the higher id, i.e. newest first.
_SQL_FTS_CANDIDATES = """
SELECT {table}.rowid AS id, bm25({table}, {weights}) AS score
FROM {table}
{join}
WHERE {table} MATCH %s {filters}
"""


@dataclass(frozen=True, slots=True)
class KeywordHit:
    entity_id: int
    bm25: float


def _placeholders(n: int) -> str:
    return ", ".join(["%s"] * n)


class EntityManager(models.Manager["Entity"]):
    # --- index maintenance -------------------------------------------------------------

    def index_sync(self, entity_ids: Iterable[int]) -> None:
        """Rewrite the keyword-index rows of these entities from their current state.

        Call inside the write's transaction: the index then commits or rolls back with it.
        An active entity goes to the live table, an archived one to the archived table, a
        deleted one to neither. Stored vectors describe the old text, so they are dropped
        here and recomputed by the embedding pipeline.
        """
        ids = sorted(set(entity_ids))
        if not ids:
            return
        marks = _placeholders(len(ids))
        with connection.cursor() as cur:
            cur.execute(_SQL_INDEX_ENTITIES.format(ids=marks), ids)
            entities = cur.fetchall()
            cur.execute(_SQL_INDEX_OBSERVATIONS.format(ids=marks), ids)
            bodies: dict[int, list[str]] = {}
            for entity_id, text in cur.fetchall():
                bodies.setdefault(entity_id, []).append(text)
            cur.execute(_SQL_INDEX_TAGS.format(ids=marks), ids)
            tags: dict[int, list[str]] = {}
            for entity_id, name in cur.fetchall():
                tags.setdefault(entity_id, []).append(name)
            for table in (LIVE_FTS, ARCHIVED_FTS):
                cur.execute(_SQL_FTS_DELETE.format(table=table, ids=marks), ids)
            for entity_id, name, title, status in entities:
                table = LIVE_FTS if status == "active" else ARCHIVED_FTS
                cur.execute(
                    _SQL_FTS_INSERT.format(table=table),
                    [
                        entity_id,
                        index_text(name),
                        index_text(title or ""),
                        index_text("\n".join(bodies.get(entity_id, []))),
                        index_text(" ".join(tags.get(entity_id, []))),
                    ],
                )
        self.vector_delete(ids)

    def index_rebuild(self) -> int:
        """Rebuild both keyword indexes from the entity tables; returns entities indexed."""
        with connection.cursor() as cur:
            for table in (LIVE_FTS, ARCHIVED_FTS):
                cur.execute(f"DELETE FROM {table}")
        ids = list(self.values_list("id", flat=True))
        for start in range(0, len(ids), 500):
            self.index_sync(ids[start : start + 500])
        return len(ids)

    def vector_delete(self, entity_ids: Sequence[int]) -> None:
        if not entity_ids or not vector_index_ready():
            return
        with connection.cursor() as cur:
            cur.execute(
                f"DELETE FROM {VEC} WHERE rowid IN ({_placeholders(len(entity_ids))})",
                list(entity_ids),
            )

    # --- keyword search ------------------------------------------------------------------

    def indexed_row_count(self, *, archived: bool = False) -> int:
        """Rows in the live index (active entities) or the archived one."""
        with connection.cursor() as cur:
            cur.execute(_SQL_ROW_COUNT.format(table=ARCHIVED_FTS if archived else LIVE_FTS))
            return int(cur.fetchone()[0])

    def term_doc_freqs(self, terms: Sequence[str], *, archived: bool = False) -> dict[str, int]:
        """Number of entities in the live (or archived) index containing each term.

        One equality lookup per term on purpose: fts5vocab only uses its index for
        `term = ?`; an IN list would scan the whole vocabulary.
        """
        sql = _SQL_TERM_DOC_FREQ.format(vocab=ARCHIVED_VOCAB if archived else VOCAB)
        freqs: dict[str, int] = {}
        with connection.cursor() as cur:
            for term in terms:
                cur.execute(sql, [term])
                row = cur.fetchone()
                freqs[term] = int(row[0]) if row else 0
        return freqs

    def fts_candidates(
        self,
        match: str,
        *,
        limit: int,
        include_archived: bool = False,
        namespace: str | None = None,
        tag: str | None = None,
    ) -> list[KeywordHit]:
        """Best `limit` keyword matches by bm25, newest first on ties.

        `match` must come from graph.text.match_expression (quoted terms only).
        With include_archived, archived rows are searched in their own table and merged;
        their bm25 uses that table's statistics, which is close enough to order a merge.
        """
        tables = [LIVE_FTS, ARCHIVED_FTS] if include_archived else [LIVE_FTS]
        parts: list[str] = []
        params: list[object] = []
        for table in tables:
            filters = ""
            join = ""
            table_params: list[object] = [match]
            if namespace is not None or tag is not None:
                join = f"JOIN graph_entity AS e ON e.id = {table}.rowid"
            if namespace is not None:
                filters += " AND e.namespace = %s"
                table_params.append(namespace)
            if tag is not None:
                filters += (
                    " AND EXISTS (SELECT 1 FROM graph_tag AS t"
                    " WHERE t.entity_id = e.id AND t.name = %s)"
                )
                table_params.append(tag)
            parts.append(
                _SQL_FTS_CANDIDATES.format(
                    table=table, weights=BM25_WEIGHTS, join=join, filters=filters
                )
            )
            params.extend(table_params)
        sql = " UNION ALL ".join(parts) + " ORDER BY score, id DESC LIMIT %s"
        params.append(limit)
        with connection.cursor() as cur:
            cur.execute(sql, params)
            return [KeywordHit(int(row[0]), float(row[1])) for row in cur.fetchall()]


def vector_index_ready() -> bool:
    """sqlite-vec is loaded on this connection and the vec0 table exists."""
    if not getattr(connection, "vec_available", False):
        return False
    with connection.cursor() as cur:
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [VEC])
        return cur.fetchone() is not None
