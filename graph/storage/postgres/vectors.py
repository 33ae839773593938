"""EntityVector.objects on PostgreSQL: one pgvector table per index generation.

A generation's table `graph_vectors_g<N>(entity_id bigint primary key, embedding vector(W))`
carries an HNSW index over cosine distance; it replaces both of SQLite's coarse searches
(sqlite-vec's sign-bit KNN and the process's copy of the bits, graph/storage/vector_cache.py):
the database answers the nearest neighbours itself, so every server and worker sees a vector
the moment its transaction commits. The float32 rows in graph_entityvector (text hash, pieces,
time) stay shared with SQLite, as ordinary rows; the generation table holds the same vector
as a `vector` for the index, written in the same transaction.

pgvector's HNSW scan returns at most `hnsw.ef_search` rows (pgvector 0.6: filters apply after
the scan, so a narrow scope can leave fewer than k). `nearest` therefore sets ef_search for each
search, and a scope is searched so:
- no scope: ef_search = twice k, at least EF_SEARCH_MIN. SQLite's `coarse` (400 sign-bit
  candidates) does not carry over: an HNSW candidate list is far closer to the truth than a
  Hamming one.
- a scope no larger than `coarse`: scored exactly, whole, inside the database (as SQLite does).
- a larger one: enough of the generation's nearest that about 2k fall in the scope (sized by
  the planner's row count; at least max(coarse, 2k)), kept to the scope in Python (a set, not
  an array parameter of the whole scope); a scope too narrow for any ef_search, or one that
  kept fewer than k, is scored exactly: always right, as slow as the scope is large.
  pgvector 0.8's iterative scans would replace that pass.
Measured at 100k clustered 384-d vectors on this 2-core machine under a load average of 6,
recall@10 against an exact scan / p50: no scope, ef_search 100: 1.000 / 5 ms (400: 1.000 /
18 ms); a scope of 50 %: 1.000 / 22 ms; 10 %: 1.000 / 30 ms; 1 %: 1.000 / 11 ms (exact).
https://github.com/pgvector/pgvector#hnsw, #filtering, #query-options
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.db import connection

from graph.storage.cursor import cursor, placeholders
from graph.storage.postgres import vector_tables
from graph.storage.postgres.vector_checks import PostgresVectorChecks
from graph.storage.postgres.vector_tables import TABLE_PREFIX, table_name, vector_literal
from graph.storage.vector_index import (
    _SQL_PENDING,
    _SQL_ROW_COUNT,
    _SQL_ROWS_COPY,
    VectorManager,
    _chunks,
)

if TYPE_CHECKING:
    import numpy as np

# (_SQL_ROW_COUNT and _SQL_ROWS_COPY above: statements both databases accept, SQLite's own.)
# pgvector's HNSW index takes vectors of at most 2,000 dimensions; a wider generation gets no
# index and is scanned exactly (correct, slower: OpenAI's 3,072-d models, for instance).
HNSW_MAX_DIMENSIONS = 2000
# The range pgvector accepts for hnsw.ef_search is 1..1000; below EF_SEARCH_MIN the time saved
# is small (pgvector's default is 40).
EF_SEARCH_MIN = 100
EF_SEARCH_MAX = 1000

# Params: none. The generation's table and its HNSW index (m and ef_construction: pgvector's
# defaults, 16 and 64).
_SQL_CREATE_TABLE = (
    "CREATE TABLE IF NOT EXISTS {table}"
    " (entity_id bigint PRIMARY KEY, embedding vector({dims}) NOT NULL)"
)
_SQL_CREATE_INDEX = (
    "CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw (embedding vector_cosine_ops)"
)
_SQL_DROP_TABLE = "DROP TABLE IF EXISTS {table}"
# Params: the prefix. Result: names of the generation tables present.
_SQL_GENERATION_TABLES = (
    "SELECT tablename FROM pg_tables"
    " WHERE schemaname = current_schema() AND starts_with(tablename, ?)"
)
# Params: ids. Result: the generations holding a vector of any of them.
_SQL_GENERATIONS_OF = "SELECT DISTINCT generation FROM graph_entityvector WHERE entity_id = ANY(?)"
# Params: generation, ids. Removes those entities' rows from one generation.
_SQL_ROWS_DELETE = "DELETE FROM graph_entityvector WHERE generation = ? AND entity_id = ANY(?)"
_SQL_INDEX_DELETE = "DELETE FROM {table} WHERE entity_id = ANY(?)"
# Params per row: generation, entity id, text hash, float32 bytes, created_at, pieces bytes.
# One statement replaces a row: two workers storing one entity cannot collide on the
# (generation, entity) constraint between a delete and an insert.
_SQL_ROW_UPSERT = """
INSERT INTO graph_entityvector (generation, entity_id, text_hash, embedding, created_at, pieces)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (generation, entity_id) DO UPDATE SET text_hash = EXCLUDED.text_hash,
    embedding = EXCLUDED.embedding, created_at = EXCLUDED.created_at, pieces = EXCLUDED.pieces
"""
# Params per row: entity id, the vector as pgvector's text literal.
_SQL_INDEX_UPSERT = (
    "INSERT INTO {table} (entity_id, embedding) VALUES (?, ?::vector)"
    " ON CONFLICT (entity_id) DO UPDATE SET embedding = EXCLUDED.embedding"
)
# Params: ids. Copies those entities' index rows across generations of one width.
_SQL_INDEX_COPY = (
    "INSERT INTO {target} (entity_id, embedding)"
    " SELECT entity_id, embedding FROM {source} WHERE entity_id = ANY(?)"
)
# A claim on a pending memory, held until the claiming transaction ends. The key is the
# entity id's negative: ids are positive, and memesh's other advisory keys
# (core/db/schema.py's migration lock) are too.
_SQL_CLAIM = "SELECT pg_try_advisory_xact_lock(-?::bigint)"
# Params: generation, ids, limit. Result: those of the ids still without a current vector
# (another worker may have written one since they were read as pending): the pending query
# itself, narrowed to them.
_SQL_STILL_PENDING = _SQL_PENDING.format(namespace="AND e.id = ANY(?)")
# Pending memories read per page while looking for unclaimed ones: other workers hold theirs.
CLAIM_PAGE_FACTOR = 4
# Params: the ef_search value as text. For the session, not the transaction: a search needs
# no transaction of its own (it may run inside a caller's, or a raw read snapshot's), and
# every HNSW search sets it first, so no other search sees a stale value.
_SQL_EF_SEARCH = "SELECT set_config('hnsw.ef_search', ?, false)"
# Params: query literal (twice), limit. Result: entity id, cosine similarity, nearest first,
# by the HNSW index (ORDER BY the distance operator, ascending, is what it answers).
_SQL_NEAREST = (
    "SELECT entity_id, 1 - (embedding <=> ?::vector) FROM {table}"
    " ORDER BY embedding <=> ?::vector LIMIT ?"
)
# Params: the table's name. Result: the planner's estimate of its rows (-1: never analysed).
# https://www.postgresql.org/docs/current/catalog-pg-class.html
_SQL_ESTIMATED_ROWS = "SELECT reltuples FROM pg_class WHERE oid = to_regclass(?)"
# Params: query literal, ids, limit. Result: as _SQL_NEAREST, exactly, among those ids:
# ordering by the similarity rather than by the distance operator keeps the HNSW index out.
_SQL_NEAREST_AMONG = (
    "SELECT entity_id, 1 - (embedding <=> ?::vector) AS similarity FROM {table}"
    " WHERE entity_id = ANY(?::bigint[]) ORDER BY similarity DESC, entity_id DESC LIMIT ?"
)


def vectors_remove(generation: int, entity_ids: Sequence[int]) -> None:
    """graph.storage.vector_index.vectors_remove on PostgreSQL."""
    ids = list(entity_ids)
    if not ids:
        return
    with cursor() as cur:
        cur.execute(_SQL_ROWS_DELETE, [generation, ids])
        if vector_tables.table_exists(cur, generation):
            cur.execute(_SQL_INDEX_DELETE.format(table=table_name(generation)), [ids])


class PostgresEntityVectorDrops:
    """Entity.objects.vectors_drop (the keyword writes' archive path) on PostgreSQL."""

    def vectors_drop(self, entity_ids: Sequence[int]) -> None:
        """Remove these entities' vectors from every generation (live and staging)."""
        with cursor() as cur:
            cur.execute(_SQL_GENERATIONS_OF, [list(entity_ids)])
            generations = [row[0] for row in cur.fetchall()]
        for generation in generations:
            vectors_remove(generation, entity_ids)


def _ranked(found: Sequence[tuple[int, float]], k: int) -> list[tuple[int, float]]:
    """Best first, as SQLite's nearest orders them (ties: the newer memory first)."""
    best = sorted(((int(i), float(s)) for i, s in found), key=lambda item: (-item[1], -item[0]))
    return best[:k]


class PostgresVectorManager(PostgresVectorChecks, VectorManager):
    def table_exists(self, generation: int) -> bool:
        with cursor() as cur:
            return vector_tables.table_exists(cur, generation)

    def create_table(self, generation: int, dimensions: int) -> None:
        table = table_name(generation)
        with cursor() as cur:
            cur.execute(_SQL_CREATE_TABLE.format(table=table, dims=int(dimensions)))
            if dimensions <= HNSW_MAX_DIMENSIONS:
                cur.execute(_SQL_CREATE_INDEX.format(table=table))

    def drop_generation(self, generation: int) -> int:
        with cursor() as cur:
            cur.execute(_SQL_ROW_COUNT, [generation])
            rows = int(cur.fetchone()[0])
            cur.execute("DELETE FROM graph_entityvector WHERE generation = ?", [generation])
            cur.execute(_SQL_DROP_TABLE.format(table=table_name(generation)))
        return rows

    def remove(self, generation: int, entity_ids: Sequence[int]) -> None:
        vectors_remove(generation, entity_ids)

    def claim_pending(self, generation: int, limit: int, namespace: str | None = None) -> list[int]:
        """Up to `limit` pending ids that no other worker holds, each claimed with an advisory
        lock held until the caller's transaction ends: call it inside the transaction that
        writes their vectors. Workers on several hosts then split one backlog, and none
        embeds a memory another is embedding or has just written."""
        if not connection.in_atomic_block:
            raise RuntimeError("claim_pending needs the transaction its claims last for")
        claimed: list[int] = []
        page = limit * CLAIM_PAGE_FACTOR
        seen = 0
        while len(claimed) < limit:
            # Claims this transaction holds are still pending until it commits: skip them.
            candidates = [
                i
                for i in self.pending_ids(generation, seen + page, namespace)[seen:]
                if i not in claimed
            ]
            if not candidates:
                break
            seen += page
            with cursor() as cur:
                for entity_id in candidates:
                    cur.execute(_SQL_CLAIM, [entity_id])
                    if cur.fetchone()[0]:
                        claimed.append(entity_id)
                        if len(claimed) == limit:
                            break
        if not claimed:
            return []
        with cursor() as cur:
            cur.execute(_SQL_STILL_PENDING, [generation, claimed, len(claimed)])
            still = {row[0] for row in cur.fetchall()}
        return [i for i in claimed if i in still]

    def store(
        self,
        generation: int,
        rows: Sequence[tuple[int, str, np.ndarray]],
        created_at: object,
        pieces: Sequence[bytes] | None = None,
    ) -> None:
        if not rows:
            return
        import numpy as np

        vectors = [np.asarray(v, dtype=np.float32) for _, _, v in rows]
        kept = [p or None for p in pieces] if pieces is not None else [None] * len(rows)
        with cursor() as cur:
            cur.executemany(
                _SQL_ROW_UPSERT,
                [
                    (generation, eid, digest, vector.tobytes(), created_at, piece)
                    for (eid, digest, _), vector, piece in zip(rows, vectors, kept, strict=True)
                ],
            )
            cur.executemany(
                _SQL_INDEX_UPSERT.format(table=table_name(generation)),
                [(eid, vector_literal(v)) for (eid, _, _), v in zip(rows, vectors, strict=True)],
            )

    def copy_rows(self, source: int, target: int, entity_ids: Sequence[int]) -> None:
        with cursor() as cur:
            for chunk in _chunks(entity_ids):
                marks = placeholders(len(chunk))
                cur.execute(_SQL_ROWS_COPY.format(ids=marks), [target, source, *chunk])
                cur.execute(
                    _SQL_INDEX_COPY.format(target=table_name(target), source=table_name(source)),
                    [chunk],
                )

    def generations_present(self) -> list[int]:
        with cursor() as cur:
            cur.execute(_SQL_GENERATION_TABLES, [TABLE_PREFIX])
            found = {
                int(name[len(TABLE_PREFIX) :])
                for (name,) in cur.fetchall()
                if name[len(TABLE_PREFIX) :].isdigit()
            }
            cur.execute("SELECT DISTINCT generation FROM graph_entityvector")
            found.update(row[0] for row in cur.fetchall())
        return sorted(found)

    # --- search -----------------------------------------------------------------------

    def coarse_neighbours(self, generation: int, query: np.ndarray, coarse: int) -> list[int]:
        """The `coarse` nearest by the HNSW index."""
        return [i for i, _ in self._index_nearest(generation, query, coarse, coarse)]

    def nearest(
        self,
        generation: int,
        query: np.ndarray,
        *,
        k: int,
        coarse: int,
        token: str = "",
        among: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The k entities nearest the query (of those in `among`, when given), with their
        cosine similarity, best first: from the HNSW index, or exactly within a scope (the
        module's docstring says when). `token` is SQLite's (its process copy's key)."""
        if k <= 0 or (among is not None and not len(among)):
            return []
        if among is not None and len(among) <= coarse:
            return self._exact_among(generation, query, among, k)
        if among is None:
            return _ranked(self._index_nearest(generation, query, max(2 * k, EF_SEARCH_MIN), k), k)
        wanted = max(coarse, 2 * k)
        rows = self._estimated_rows(generation)
        if rows > 0:
            # Enough candidates that about 2k of them fall in the scope; a scope too narrow
            # for any ef_search pgvector accepts is scored exactly at once.
            needed = math.ceil(2 * k * rows / len(among))
            if needed > EF_SEARCH_MAX:
                return self._exact_among(generation, query, among, k)
            wanted = max(wanted, needed)
        found = self._index_nearest(generation, query, wanted, wanted)
        allowed = set(among)
        kept = [(i, s) for i, s in found if i in allowed]
        if len(kept) < k:
            return self._exact_among(generation, query, among, k)
        return _ranked(kept, k)

    def _index_nearest(
        self, generation: int, query: np.ndarray, ef_search: int, limit: int
    ) -> list[tuple[int, float]]:
        literal = vector_literal(query)
        ef = max(1, min(EF_SEARCH_MAX, ef_search))
        with cursor() as cur:
            cur.execute(_SQL_EF_SEARCH, [str(ef)])
            cur.execute(
                _SQL_NEAREST.format(table=table_name(generation)), [literal, literal, limit]
            )
            return [(int(i), float(s)) for i, s in cur.fetchall()]

    def _estimated_rows(self, generation: int) -> float:
        """The planner's row count of the generation's table (maintained by autovacuum's
        ANALYZE and CREATE INDEX); -1 or 0 when not known yet."""
        with cursor() as cur:
            cur.execute(_SQL_ESTIMATED_ROWS, [table_name(generation)])
            row = cur.fetchone()
        return float(row[0]) if row and row[0] is not None else -1.0

    def _exact_among(
        self, generation: int, query: np.ndarray, among: Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        with cursor() as cur:
            cur.execute(
                _SQL_NEAREST_AMONG.format(table=table_name(generation)),
                [vector_literal(query), [int(i) for i in among], k],
            )
            return _ranked(cur.fetchall(), k)
