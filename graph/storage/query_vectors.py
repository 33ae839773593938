"""Recall queries' embeddings, shared by every process of one database.

A server runs two processes, and hooks, the CLI and MCP servers are processes of their own:
a per-process cache (graph.indexing.query_cache) embeds a repeated query again in each of them,
and a one-shot `memesh recall` would load the model (~0.5-1 s) for a query it has asked
before. Rows are keyed by a hash of the embedder's identity, its width and the query, so no
query text is stored and another model never reads another's vectors. Writes come in batches
(graph.indexing.query_cache), and the table keeps the newest MAX_ROWS.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import connection, models, transaction

from graph.storage.cursor import cursor, db_time

# The newest rows kept: ~1.5 KB each at 384 floats, so ~6 MB at most.
MAX_ROWS = 4096

# Params: key. Result: the float32 blob.
_SQL_FIND = "SELECT vector FROM graph_queryvector WHERE key = ?"
# Params per row: key, blob, created_at. A key stored again takes the new row (an UPSERT both
# SQLite and PostgreSQL read alike).
_SQL_STORE = """
INSERT INTO graph_queryvector (key, vector, created_at) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET vector = excluded.vector, created_at = excluded.created_at
"""
# Params: rows kept. Deletes every row older than the newest `kept` (SQLite's OFFSET needs a
# LIMIT, -1 for none; PostgreSQL's takes none and refuses a negative one).
_SQL_PRUNE = (
    "DELETE FROM graph_queryvector WHERE key IN (SELECT key FROM graph_queryvector"
    " ORDER BY created_at DESC, key LIMIT -1 OFFSET ?)"
)
_SQL_PRUNE_POSTGRES = (
    "DELETE FROM graph_queryvector WHERE key IN (SELECT key FROM graph_queryvector"
    " ORDER BY created_at DESC, key OFFSET ?)"
)


class QueryVectorManager(models.Manager):
    def find(self, key: str) -> bytes | None:
        """The stored float32 vector under `key`, or None."""
        if connection.vendor == "postgresql" and connection.in_atomic_block:
            # In a savepoint: PostgreSQL refuses every later statement of a transaction in
            # which one failed, and the caller treats a failed read as a cache miss
            # (graph.indexing.query_cache), so the failure must end here.
            with transaction.atomic():
                return self._find(key)
        return self._find(key)

    def _find(self, key: str) -> bytes | None:
        with cursor() as cur:
            cur.execute(_SQL_FIND, [key])
            row = cur.fetchone()
        return None if row is None else bytes(row[0])

    def store(self, rows: Sequence[tuple[str, bytes]], now: datetime) -> None:
        """Store these (key, float32 blob) rows and drop all but the newest MAX_ROWS (call it
        inside a transaction)."""
        if not rows:
            return
        when = db_time(now)
        with cursor() as cur:
            cur.executemany(_SQL_STORE, [(key, blob, when) for key, blob in rows])
            prune = _SQL_PRUNE_POSTGRES if connection.vendor == "postgresql" else _SQL_PRUNE
            cur.execute(prune, [MAX_ROWS])
