"""Raw SQL for the vector index: one vec0 table per index generation, plus EntityVector rows.

A generation is one embedding space (provider, model, width). Its vec0 table
`graph_vec_g<N>` holds each vector's sign bits (`bit[width]`, 1/32 of the float size) for a
Hamming-distance scan; the float32 vectors sit in `graph_entityvector` rows, keyed by
(generation, entity), for exact cosine rescoring of the few hundred rows the scan keeps.
At 100k vectors a float brute-force vec0 scan takes ~45–100 ms; this takes a fraction of
that (docs/benchmarks.md has the figures).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import models

from graph.storage.cursor import cursor, db_time, placeholders

if TYPE_CHECKING:
    # numpy is imported where a vector is handled, not with the models: every process loads
    # the models at start-up, and most never touch a vector (numpy costs ~0.15 s to import).
    import numpy as np

# Params: none. Creates the generation's bit table.
_SQL_CREATE_TABLE = "CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(coarse bit[{dims}])"
_SQL_DROP_TABLE = "DROP TABLE IF EXISTS {table}"
# Params: generation, ids. Removes those entities' rows from one generation.
_SQL_ROWS_DELETE = "DELETE FROM graph_entityvector WHERE generation = ? AND entity_id IN ({ids})"
_SQL_BITS_DELETE = "DELETE FROM {table} WHERE rowid IN ({ids})"
# Params per row: generation, entity id, text hash, float32 blob, created_at, pieces blob.
_SQL_ROW_INSERT = (
    "INSERT INTO graph_entityvector"
    " (generation, entity_id, text_hash, embedding, created_at, pieces)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
# Params per row: entity id, float32 blob (quantised to sign bits by sqlite-vec).
_SQL_BITS_INSERT = "INSERT INTO {table} (rowid, coarse) VALUES (?, vec_quantize_binary(?))"
# Params: query float32 blob, k. Result: the k rows nearest by Hamming distance of sign bits.
# A first search of a scope larger than its coarse count fetches this many times as many
# sqlite-vec neighbours and keeps the scope's (a one-shot process; later ones use the copy).
SCOPED_OVERFETCH = 4
_SQL_COARSE_NEIGHBOURS = (
    "SELECT rowid FROM {table} WHERE coarse MATCH vec_quantize_binary(?) AND k = ?"
)
# Params: generation, ids. Result: entity id, float32 blob.
_SQL_FLOATS_OF = (
    "SELECT entity_id, embedding FROM graph_entityvector"
    " WHERE generation = ? AND entity_id IN ({ids})"
)
# Params: generation, ids. Result: entity id, packed pieces, for the rows that have them.
_SQL_PIECES_OF = (
    "SELECT entity_id, pieces FROM graph_entityvector"
    " WHERE generation = ? AND entity_id IN ({ids}) AND pieces IS NOT NULL"
)
# Params: generation. Result: entity id, text hash of every row of the generation.
_SQL_HASHES = "SELECT entity_id, text_hash FROM graph_entityvector WHERE generation = ?"
# Params: generation, [namespace], limit. Result: ids of active entities whose vector in the
# generation is missing or was built from other text, oldest write first.
_SQL_PENDING = """
SELECT e.id FROM graph_entity AS e
LEFT JOIN graph_entityvector AS v ON v.generation = ? AND v.entity_id = e.id
WHERE e.status = 'active' AND (v.text_hash IS NULL OR v.text_hash != e.embedding_hash)
{namespace}
ORDER BY e.id
LIMIT ?
"""
_SQL_PENDING_COUNT = """
SELECT count(*) FROM graph_entity AS e
LEFT JOIN graph_entityvector AS v ON v.generation = ? AND v.entity_id = e.id
WHERE e.status = 'active' AND (v.text_hash IS NULL OR v.text_hash != e.embedding_hash)
{namespace} {written_by}
"""
# Params: generation. Result: ids of rows that belong to no active entity.
_SQL_ORPHANS = """
SELECT v.entity_id FROM graph_entityvector AS v
LEFT JOIN graph_entity AS e ON e.id = v.entity_id
WHERE v.generation = ? AND (e.id IS NULL OR e.status != 'active')
"""
# Params: last row id seen, generation. Result: rows written since, oldest first (row ids
# only grow: AUTOINCREMENT never reuses one). `+generation` keeps the planner on the rowid
# range: with the (generation, entity) index it walked the whole generation to find none.
_SQL_ROW_COUNT = "SELECT count(*) FROM graph_entityvector WHERE generation = ?"
_SQL_ROW_BYTES = (
    "SELECT coalesce(sum(length(embedding)), 0) FROM graph_entityvector WHERE generation = ?"
)
_SQL_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
# Params: target generation, source generation, entity ids. Copies rows across generations.
_SQL_ROWS_COPY = """
INSERT INTO graph_entityvector (generation, entity_id, text_hash, embedding, created_at, pieces)
SELECT ?, entity_id, text_hash, embedding, created_at, pieces FROM graph_entityvector
WHERE generation = ? AND entity_id IN ({ids})
"""
_SQL_BITS_COPY = (
    "INSERT INTO {target} (rowid, coarse) SELECT rowid, coarse FROM {source} WHERE rowid IN ({ids})"
)

# --- consistency checks (graph/indexing/consistency.py) ------------------------------------------
# Params: generation, float32 width in bytes. Result: entity ids of rows of another width.
_SQL_WRONG_WIDTH = (
    "SELECT entity_id FROM graph_entityvector"
    " WHERE generation = ? AND length(embedding) != ? ORDER BY entity_id"
)
# Params: generation. Result: entity ids of float rows with no sign-bit row in {table}.
_SQL_BITS_MISSING = """
SELECT v.entity_id FROM graph_entityvector AS v
WHERE v.generation = ? AND NOT EXISTS (SELECT 1 FROM {table} AS b WHERE b.rowid = v.entity_id)
ORDER BY v.entity_id
"""
# Params: generation. Result: rowids of sign-bit rows with no float row in the generation.
_SQL_BITS_ORPHANED = """
SELECT b.rowid FROM {table} AS b
WHERE NOT EXISTS (
    SELECT 1 FROM graph_entityvector AS v WHERE v.generation = ? AND v.entity_id = b.rowid
)
ORDER BY b.rowid
"""
# Params: generation, float32 width in bytes. Result: entity ids whose sign bits are not the
# quantised float row (rows of the right width only: others are reported as such).
_SQL_BITS_DISAGREE = """
SELECT v.entity_id FROM graph_entityvector AS v
JOIN {table} AS b ON b.rowid = v.entity_id
WHERE v.generation = ? AND length(v.embedding) = ?
  AND b.coarse != vec_quantize_binary(v.embedding)
ORDER BY v.entity_id
"""
# Params: generation. Result: active entities with no row in it, and with a row built from
# other text than their current one (both wait for the embedding worker).
_SQL_WAITING_COUNTS = """
SELECT count(CASE WHEN v.entity_id IS NULL THEN 1 END),
       count(CASE WHEN v.text_hash != e.embedding_hash THEN 1 END)
FROM graph_entity AS e
LEFT JOIN graph_entityvector AS v ON v.generation = ? AND v.entity_id = e.id
WHERE e.status = 'active'
"""
# Params: generation, ids. Rewrites those entities' sign bits from their float rows.
_SQL_BITS_FROM_FLOATS = """
INSERT INTO {table} (rowid, coarse)
SELECT entity_id, vec_quantize_binary(embedding) FROM graph_entityvector
WHERE generation = ? AND entity_id IN ({ids})
"""


def table_name(generation: int) -> str:
    return f"graph_vec_g{int(generation)}"


def _chunks(ids: Sequence[int], size: int = 500) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def vectors_remove(generation: int, entity_ids: Sequence[int]) -> None:
    """Delete these entities' rows and sign bits from one generation (the keyword index's
    archive path calls this too, so it needs no manager). PostgreSQL's twin:
    graph.storage.postgres.vectors.vectors_remove, which its managers call instead."""
    table = table_name(generation)
    with cursor() as cur:
        for chunk in _chunks(entity_ids):
            marks = placeholders(len(chunk))
            cur.execute(_SQL_ROWS_DELETE.format(ids=marks), [generation, *chunk])
            cur.execute(_SQL_BITS_DELETE.format(table=table, ids=marks), chunk)


class VectorManager(models.Manager):
    def table_exists(self, generation: int) -> bool:
        with cursor() as cur:
            cur.execute(_SQL_TABLE_EXISTS, [table_name(generation)])
            return cur.fetchone() is not None

    def create_table(self, generation: int, dimensions: int) -> None:
        with cursor() as cur:
            cur.execute(_SQL_CREATE_TABLE.format(table=table_name(generation), dims=dimensions))

    def drop_generation(self, generation: int) -> int:
        """Drop a generation's table and rows; returns how many rows it held."""
        with cursor() as cur:
            cur.execute(_SQL_ROW_COUNT, [generation])
            rows = int(cur.fetchone()[0])
            cur.execute("DELETE FROM graph_entityvector WHERE generation = ?", [generation])
            cur.execute(_SQL_DROP_TABLE.format(table=table_name(generation)))
        return rows

    def remove(self, generation: int, entity_ids: Sequence[int]) -> None:
        vectors_remove(generation, entity_ids)

    def store(
        self,
        generation: int,
        rows: Sequence[tuple[int, str, np.ndarray]],
        created_at: object,
        pieces: Sequence[bytes] | None = None,
    ) -> None:
        """Write (entity id, text hash, vector) rows, replacing the entities' old ones, with
        each row's packed pieces (graph.search.late_interaction) when given (b"": none)."""
        if not rows:
            return
        self.remove(generation, [entity_id for entity_id, _, _ in rows])
        import numpy as np

        blobs = [(eid, h, np.asarray(v, dtype=np.float32).tobytes()) for eid, h, v in rows]
        kept = [p or None for p in pieces] if pieces is not None else [None] * len(blobs)
        with cursor() as cur:
            cur.executemany(
                _SQL_ROW_INSERT,
                [
                    (generation, eid, h, b, created_at, p)
                    for (eid, h, b), p in zip(blobs, kept, strict=True)
                ],
            )
            cur.executemany(
                _SQL_BITS_INSERT.format(table=table_name(generation)),
                [(eid, b) for eid, _, b in blobs],
            )

    def copy_rows(self, source: int, target: int, entity_ids: Sequence[int]) -> None:
        """Copy these entities' rows from one generation to another of the same width."""
        with cursor() as cur:
            for chunk in _chunks(entity_ids):
                marks = placeholders(len(chunk))
                cur.execute(_SQL_ROWS_COPY.format(ids=marks), [target, source, *chunk])
                cur.execute(
                    _SQL_BITS_COPY.format(
                        target=table_name(target), source=table_name(source), ids=marks
                    ),
                    chunk,
                )

    def generations_present(self) -> list[int]:
        """Generations that have a vec0 table or rows, whatever the markers say."""
        with cursor() as cur:
            cur.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'graph_vec_g%'"
            )
            found = {
                int(name[len("graph_vec_g") :])
                for (name,) in cur.fetchall()
                if name[len("graph_vec_g") :].isdigit()
            }
            cur.execute("SELECT DISTINCT generation FROM graph_entityvector")
            found.update(row[0] for row in cur.fetchall())
        return sorted(found)

    def hashes(self, generation: int) -> dict[int, str]:
        with cursor() as cur:
            cur.execute(_SQL_HASHES, [generation])
            return dict(cur.fetchall())

    def pending_ids(self, generation: int, limit: int, namespace: str | None = None) -> list[int]:
        sql = _SQL_PENDING.format(namespace="AND e.namespace = ?" if namespace else "")
        params: list[object] = [generation, *([namespace] if namespace else []), limit]
        with cursor() as cur:
            cur.execute(sql, params)
            return [row[0] for row in cur.fetchall()]

    def claim_pending(self, generation: int, limit: int, namespace: str | None = None) -> list[int]:
        """The pending ids this process embeds next. On SQLite one worker embeds a home's
        backlog, so they are pending_ids; PostgreSQL's claims them across workers."""
        return self.pending_ids(generation, limit, namespace)

    def pending_count(
        self,
        generation: int,
        namespace: str | None = None,
        *,
        written_by: datetime | None = None,
    ) -> int:
        """Active memories without a current vector in `generation`; with `written_by`, only
        those last written at or before then."""
        sql = _SQL_PENDING_COUNT.format(
            namespace="AND e.namespace = ?" if namespace else "",
            written_by="AND e.updated_at <= ?" if written_by is not None else "",
        )
        params: list[object] = [generation, *([namespace] if namespace else [])]
        if written_by is not None:
            params.append(db_time(written_by))
        with cursor() as cur:
            cur.execute(sql, params)
            return int(cur.fetchone()[0])

    def orphan_ids(self, generation: int) -> list[int]:
        with cursor() as cur:
            cur.execute(_SQL_ORPHANS, [generation])
            return [row[0] for row in cur.fetchall()]

    def row_count(self, generation: int) -> int:
        with cursor() as cur:
            cur.execute(_SQL_ROW_COUNT, [generation])
            return int(cur.fetchone()[0])

    def stored_bytes(self, generation: int) -> int:
        with cursor() as cur:
            cur.execute(_SQL_ROW_BYTES, [generation])
            return int(cur.fetchone()[0])

    # --- consistency checks (graph/indexing/consistency.py) --------------------------------------

    def wrong_width_ids(self, generation: int, dimensions: int) -> list[int]:
        """Entities whose float row in the generation is not `dimensions` float32 wide."""
        with cursor() as cur:
            cur.execute(_SQL_WRONG_WIDTH, [generation, dimensions * 4])
            return [row[0] for row in cur.fetchall()]

    def bits_missing_ids(self, generation: int) -> list[int]:
        """Entities with a float row but no sign-bit row in the generation's vec0 table."""
        with cursor() as cur:
            cur.execute(_SQL_BITS_MISSING.format(table=table_name(generation)), [generation])
            return [row[0] for row in cur.fetchall()]

    def bits_orphaned_ids(self, generation: int) -> list[int]:
        """Rowids of sign-bit rows that have no float row in the generation."""
        with cursor() as cur:
            cur.execute(_SQL_BITS_ORPHANED.format(table=table_name(generation)), [generation])
            return [row[0] for row in cur.fetchall()]

    def bits_disagreeing_ids(self, generation: int, dimensions: int) -> list[int]:
        """Entities whose sign-bit row is not the quantised float row."""
        with cursor() as cur:
            cur.execute(
                _SQL_BITS_DISAGREE.format(table=table_name(generation)),
                [generation, dimensions * 4],
            )
            return [row[0] for row in cur.fetchall()]

    def waiting_counts(self, generation: int) -> tuple[int, int]:
        """(active entities without a vector, active entities with a stale one)."""
        with cursor() as cur:
            cur.execute(_SQL_WAITING_COUNTS, [generation])
            missing, stale = cur.fetchone()
        return int(missing), int(stale)

    def bits_rewrite_from_floats(self, generation: int, entity_ids: Sequence[int]) -> None:
        """Replace these entities' sign-bit rows by the quantised float rows (kept as they are)."""
        table = table_name(generation)
        with cursor() as cur:
            for chunk in _chunks(entity_ids):
                marks = placeholders(len(chunk))
                cur.execute(_SQL_BITS_DELETE.format(table=table, ids=marks), chunk)
                cur.execute(
                    _SQL_BITS_FROM_FLOATS.format(table=table, ids=marks), [generation, *chunk]
                )

    # --- search -----------------------------------------------------------------------

    def floats(self, generation: int, entity_ids: Sequence[int]) -> dict[int, np.ndarray]:
        import numpy as np

        out: dict[int, np.ndarray] = {}
        with cursor() as cur:
            for chunk in _chunks(entity_ids):
                cur.execute(
                    _SQL_FLOATS_OF.format(ids=placeholders(len(chunk))), [generation, *chunk]
                )
                for entity_id, blob in cur.fetchall():
                    out[entity_id] = np.frombuffer(blob, dtype=np.float32)
        return out

    def pieces_of(self, generation: int, entity_ids: Sequence[int]) -> dict[int, bytes]:
        """Packed pieces of these entities' rows in the generation (rows with none left out)."""
        if not entity_ids:
            return {}
        with cursor() as cur:
            cur.execute(
                _SQL_PIECES_OF.format(ids=placeholders(len(entity_ids))),
                [generation, *entity_ids],
            )
            return {entity_id: bytes(blob) for entity_id, blob in cur.fetchall()}

    def similarities(
        self, generation: int, query: np.ndarray, entity_ids: Sequence[int]
    ) -> dict[int, float]:
        """Cosine similarity of the query to each of these entities' vectors (where stored)."""
        import numpy as np

        vectors = self.floats(generation, entity_ids)
        if not vectors:
            return {}
        ids = list(vectors)
        sims = np.stack([vectors[i] for i in ids]) @ np.asarray(query, dtype=np.float32)
        return dict(zip(ids, (float(s) for s in sims), strict=True))

    def coarse_neighbours(self, generation: int, query: np.ndarray, coarse: int) -> list[int]:
        """sqlite-vec's KNN over the sign bits (a process's first search; graph.storage.vector_cache
        scans a copy faster after that)."""
        import numpy as np

        blob = np.asarray(query, dtype=np.float32).tobytes()
        with cursor() as cur:
            cur.execute(_SQL_COARSE_NEIGHBOURS.format(table=table_name(generation)), [blob, coarse])
            return [row[0] for row in cur.fetchall()]

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
        """The k entities nearest the query (of those in `among`, when given): `coarse`
        candidates by sign-bit Hamming distance, re-ranked by exact cosine similarity. Returns
        (entity id, similarity), best first.

        The candidates come from sqlite-vec on a process's first search, then from its copy of
        the sign bits, cut to the best k by the copy's half-precision vectors
        (graph.storage.vector_cache); the similarities are computed from the stored floats, so a
        stale copy can only cost a candidate, never report a wrong score or a deleted memory. A
        scope is searched among its own rows in the copy; on a first search a scope no larger
        than `coarse` is scored exactly, whole, and a larger one among sqlite-vec's neighbours,
        fetched SCOPED_OVERFETCH times over (sqlite-vec cannot filter).
        """
        import numpy as np

        from graph.storage.vector_cache import coarse_candidates

        scope = None if among is None else np.asarray(among, dtype=np.int64)
        # With the copy, the coarse candidates are cut to the best `k` by half-precision cosine
        # before the exact floats are read: reading 400 rows was most of a search's time.
        copied = coarse_candidates(generation, token, query, coarse, scope, keep=k)
        if copied is not None:
            ids = copied
        elif among is not None and len(among) <= coarse:
            ids = list(among)
        elif among is None:
            ids = self.coarse_neighbours(generation, query, coarse)
        else:
            allowed = set(among)
            fetched = self.coarse_neighbours(generation, query, coarse * SCOPED_OVERFETCH)
            ids = [i for i in fetched if i in allowed]
        sims = self.similarities(generation, query, ids)
        best = sorted(sims.items(), key=lambda item: (-item[1], -item[0]))
        return best[:k]
