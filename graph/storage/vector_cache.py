"""This process's copy of the live generation's sign bits (the coarse vector search) and of its
vectors at half precision (the re-ranking of the coarse candidates).

sqlite-vec's KNN over a `bit[384]` column costs time in proportion to k as well as to the
rows: on this project's 2-core machine k=400 took 7.8 ms at 10k vectors and 60–70 ms at 100k
(k=100: 2 ms at 10k, but it kept only 87 % of the true top 10). A numpy scan of the same
bits (48 bytes a vector: 4.8 MB at 100k) does XOR + popcount over every row whatever k is.
docs/benchmarks.md has the figures.

Building the copy reads every stored vector (~0.3 s at 100k), which a one-shot command
(`memesh recall` from a hook) would pay for one search. So a process's first search of a
generation asks sqlite-vec, and the copy is built at its second: long-lived processes (the
server, MCP servers, workers) pay once, one-shot ones never.

The coarse candidates (400) are re-ranked by cosine on a float16 copy of their vectors (768
bytes a vector: 7.7 MB at 10k, 77 MB at 100k): reading 400 float rows back from SQLite cost
~5 ms of a 7 ms search, the half-precision product ~0.3 ms. Only the `keep` best survive, and
the caller scores those from the stored floats, so a reported similarity is always exact and a
half-precision rounding (~1e-3 of a cosine) can at most swap two neighbours at the edge of
`keep`.

The copy is brought up to date on every search by reading the rows written since the last
one (row ids only grow), so it costs one index seek when nothing changed. Rows removed since
(archived memories) may linger in the copy; they cost at most a candidate slot, because the
candidates are re-scored from the stored floats and a removed row has none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from django.db import connection

from graph.storage.cursor import cursor

# Params: after row id, generation. Result: row id, entity id, float32 blob of the rows
# written since, in row order (`+generation`: walk the row-id order, not the generation index).
_SQL_ROWS_SINCE = (
    "SELECT id, entity_id, embedding FROM graph_entityvector"
    " WHERE id > ? AND +generation = ? ORDER BY id"
)


def _rows_since(generation: int, after_row: int) -> Iterator[list[tuple[int, int, bytes]]]:
    """(row id, entity id, float32 blob) of the rows written after `after_row`, in chunks."""
    with cursor() as cur:
        cur.execute(_SQL_ROWS_SINCE, [after_row, generation])
        while chunk := cur.fetchmany(5000):
            yield chunk


@dataclass
class _Copy:
    generation: int
    token: str
    last_row: int = 0
    # Rows [0, count) are in use; the arrays grow by doubling, so the backlog's vectors
    # arriving a few at a time between searches cost no copy of the whole (7.7 MB of halves
    # at 10k vectors, 77 MB at 100k) on every search.
    count: int = 0
    bits: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.uint64))
    halves: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float16))
    entity_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    position: dict[int, int] = field(default_factory=dict)

    def append(self, bits: np.ndarray, halves: np.ndarray, entity_ids: np.ndarray) -> None:
        needed = self.count + len(entity_ids)
        if needed > len(self.entity_ids):
            capacity = max(needed, 2 * len(self.entity_ids), 64)
            self.bits = _grown(self.bits, capacity, bits.shape[1], self.count)
            self.halves = _grown(self.halves, capacity, halves.shape[1], self.count)
            self.entity_ids = _grown(self.entity_ids, capacity, None, self.count)
        self.bits[self.count : needed] = bits
        self.halves[self.count : needed] = halves
        self.entity_ids[self.count : needed] = entity_ids
        self.count = needed


def _grown(array: np.ndarray, capacity: int, width: int | None, used: int) -> np.ndarray:
    shape = (capacity,) if width is None else (capacity, width)
    out = np.empty(shape, dtype=array.dtype)
    if used:
        out[:used] = array[:used]
    return out


_lock = threading.Lock()
_copies: dict[tuple[str, int], _Copy] = {}
_searched: set[tuple[str, int, str]] = set()


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    """Sign bits of each row (the quantisation of vec_quantize_binary), packed into 64-bit
    words: XOR and popcount then run on 6 words a vector at 384-d instead of 48 bytes."""
    packed = np.packbits(np.atleast_2d(np.asarray(vectors)) > 0, axis=-1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def _refresh(copy: _Copy) -> None:
    for chunk in _rows_since(copy.generation, copy.last_row):
        floats = np.frombuffer(b"".join(blob for _, _, blob in chunk), dtype=np.float32)
        floats = floats.reshape(len(chunk), -1)
        bits = sign_bits(floats)
        halves = floats.astype(np.float16)
        new_rows: list[int] = []
        for n, (row_id, entity_id, _) in enumerate(chunk):
            at = copy.position.get(entity_id)
            if at is not None:
                copy.bits[at] = bits[n]  # re-embedded: same entity, new vector
                copy.halves[at] = halves[n]
            else:
                copy.position[entity_id] = copy.count + len(new_rows)
                new_rows.append(n)
            copy.last_row = row_id
        if new_rows:
            ids = np.array([chunk[n][1] for n in new_rows], dtype=np.int64)
            copy.append(bits[new_rows], halves[new_rows], ids)


def coarse_candidates(
    generation: int,
    token: str,
    query: np.ndarray,
    count: int,
    among: np.ndarray | None = None,
    *,
    keep: int | None = None,
) -> list[int] | None:
    """Entity ids of the `count` rows nearest the query by Hamming distance of sign bits (of
    the rows whose entity is in `among`, when given) — with `keep`, only the `keep` best of
    those by half-precision cosine, best first — or None on this process's first search of
    the generation (ask sqlite-vec instead)."""
    # One copy per database file and generation; the token (the generation's creation
    # time) tells a rebuilt generation of the same number apart.
    key = (str(connection.settings_dict["NAME"]), generation)
    with _lock:
        copy = _copies.get(key)
        if copy is None or copy.token != token:
            if (*key, token) not in _searched:
                _searched.add((*key, token))
                return None
            copy = _copies[key] = _Copy(generation, token)
        _refresh(copy)
        # Views of the rows in use: a later refresh writes past them or into new arrays.
        used = copy.count
        bits, halves, ids = copy.bits[:used], copy.halves[:used], copy.entity_ids[:used]
    rows = np.arange(len(ids))
    if among is not None:
        rows = rows[np.isin(ids, among)]
    if not len(rows):
        return []
    if len(rows) > count:
        distances = np.bitwise_count(np.bitwise_xor(bits[rows], sign_bits(query)[0])).sum(axis=1)
        rows = rows[np.argpartition(distances, count)[:count]]
    if keep is not None and len(rows) > keep:
        sims = halves[rows].astype(np.float32) @ np.asarray(query, dtype=np.float32)
        best = np.argpartition(-sims, keep)[:keep]
        rows = rows[best[np.argsort(-sims[best], kind="stable")]]
    return [int(i) for i in ids[rows]]


def forget_copies() -> None:
    """Drop every copy (tests that rebuild databases under the same name)."""
    with _lock:
        _copies.clear()
        _searched.clear()
