"""The vector index's consistency reads and repair on PostgreSQL (graph/indexing/consistency.py).

SQLite's checks compare each float row with its sign-bit row in the generation's vec0 table;
here the counterpart of a sign-bit row is the generation table's `vector` (graph/storage/
postgres/vectors.py), so "bits missing / orphaned / disagreeing" mean: a float row without its
indexed vector, an indexed vector without its float row, and an indexed vector that is not the
float row's value. The last compares the values in Python, page by page: PostgreSQL has no
cast from the float rows' little-endian bytes to a vector.
"""

from __future__ import annotations

from collections.abc import Sequence

from graph.storage.cursor import cursor
from graph.storage.postgres.vector_tables import table_name, vector_literal

PAGE = 2000

# Params: generation. Result: entity ids of float rows with no vector in {table}.
_SQL_INDEX_MISSING = """
SELECT v.entity_id FROM graph_entityvector AS v
WHERE v.generation = ? AND NOT EXISTS (SELECT 1 FROM {table} AS b WHERE b.entity_id = v.entity_id)
ORDER BY v.entity_id
"""
# Params: generation. Result: entity ids of vectors in {table} with no float row.
_SQL_INDEX_ORPHANED = """
SELECT b.entity_id FROM {table} AS b
WHERE NOT EXISTS (
    SELECT 1 FROM graph_entityvector AS v WHERE v.generation = ? AND v.entity_id = b.entity_id
)
ORDER BY b.entity_id
"""
# Params: generation, float32 width in bytes, after entity id, page size. Result: entity id,
# float32 bytes, the indexed vector as real[], of rows of the right width, in id order.
_SQL_BOTH_PAGE = """
SELECT v.entity_id, v.embedding, b.embedding::real[] FROM graph_entityvector AS v
JOIN {table} AS b ON b.entity_id = v.entity_id
WHERE v.generation = ? AND length(v.embedding) = ? AND v.entity_id > ?
ORDER BY v.entity_id
LIMIT ?
"""
# Params: generation, ids. Result: entity id, float32 bytes.
_SQL_FLOATS_OF = (
    "SELECT entity_id, embedding FROM graph_entityvector"
    " WHERE generation = ? AND entity_id = ANY(?)"
)
_SQL_INDEX_DELETE = "DELETE FROM {table} WHERE entity_id = ANY(?)"
# Params per row: entity id, the vector as pgvector's text literal.
_SQL_INDEX_INSERT = "INSERT INTO {table} (entity_id, embedding) VALUES (?, ?::vector)"


class PostgresVectorChecks:
    """The consistency methods of graph.storage.vector_index.VectorManager, on PostgreSQL."""

    def bits_missing_ids(self, generation: int) -> list[int]:
        """Entities with a float row but no indexed vector in the generation's table."""
        with cursor() as cur:
            cur.execute(_SQL_INDEX_MISSING.format(table=table_name(generation)), [generation])
            return [row[0] for row in cur.fetchall()]

    def bits_orphaned_ids(self, generation: int) -> list[int]:
        """Entity ids of indexed vectors that have no float row in the generation."""
        with cursor() as cur:
            cur.execute(_SQL_INDEX_ORPHANED.format(table=table_name(generation)), [generation])
            return [row[0] for row in cur.fetchall()]

    def bits_disagreeing_ids(self, generation: int, dimensions: int) -> list[int]:
        """Entities whose indexed vector is not their float row."""
        import numpy as np

        sql = _SQL_BOTH_PAGE.format(table=table_name(generation))
        out: list[int] = []
        after = 0
        with cursor() as cur:
            while True:
                cur.execute(sql, [generation, dimensions * 4, after, PAGE])
                page = cur.fetchall()
                for entity_id, blob, indexed in page:
                    floats = np.frombuffer(blob, dtype=np.float32)
                    if not np.array_equal(floats, np.asarray(indexed, dtype=np.float32)):
                        out.append(entity_id)
                if len(page) < PAGE:
                    return out
                after = page[-1][0]

    def bits_rewrite_from_floats(self, generation: int, entity_ids: Sequence[int]) -> None:
        """Replace these entities' indexed vectors by their float rows (kept as they are)."""
        import numpy as np

        ids = list(entity_ids)
        if not ids:
            return
        table = table_name(generation)
        with cursor() as cur:
            cur.execute(_SQL_FLOATS_OF, [generation, ids])
            rows = [
                (entity_id, vector_literal(np.frombuffer(blob, dtype=np.float32)))
                for entity_id, blob in cur.fetchall()
            ]
            cur.execute(_SQL_INDEX_DELETE.format(table=table), [ids])
            cur.executemany(_SQL_INDEX_INSERT.format(table=table), rows)
