"""Document frequencies of query terms, kept in this process until the keyword index changes.

Every recall asks how many rows hold each of its terms (the document-frequency guard and the
coverage weights need them). fts5vocab answers by walking the term's whole posting list, so a
word in 3,000 of 10,000 memories costs ~0.3 ms, and an 8-word query of common words ~2.5 ms
— as much as its bm25 search once the frequent-term cut has run (docs/recall.md).

The answers stay exact: they are kept under the index's own state, FTS5's averages record
(id 1 of the %_data shadow table: row and token totals) and structure record (id 10: its
segments and a write counter that every committed write to the table moves, a delete or an
identical re-insert included). Any write to the index, by any connection of any process,
changes that key, and what was kept under the old one is dropped. Writes to other tables (the
worker's vectors, access counts) leave it alone, so a settled server or one embedding its
backlog answers from memory. Inside an atomic block nothing is kept: its writes may still
roll back.

On PostgreSQL the counts come from the posting table and the state from the index totals'
write counters (graph/storage/postgres/keyword_frequencies.py, passed in as the `source`);
what is kept, and when it is dropped, is the same.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import Protocol

from django.db import connection

from graph.storage.cursor import cursor

# Params: none. Result: (id, block) of the averages (1) and structure (10) records.
_SQL_INDEX_STATE = "SELECT id, block FROM {table}_data WHERE id IN (1, 10) ORDER BY id"
# Params: one term per arm. Result: term, number of rows of that index containing it. One
# `term = ?` arm per term: fts5vocab uses its index only for equality, so an IN list would
# scan the whole vocabulary.
_SQL_TERM_DOC_FREQ_ARM = "SELECT term, doc FROM {vocab} WHERE term = ?"
# SQLite refuses a compound SELECT of more than 500 arms (SQLITE_MAX_COMPOUND_SELECT,
# https://sqlite.org/limits.html#max_compound_select); a 10,000-character query can hold
# thousands of distinct terms, so the arms go in batches.
_MAX_COMPOUND_ARMS = 500
# Terms kept per index state; past it new terms are looked up every time until the index
# changes (a bound on memory, not a policy: real query vocabularies are far smaller).
MAX_KEPT_TERMS = 50_000


# (record id, block) of the averages and structure records, in id order.
State = tuple[tuple[int, bytes], ...]


class Source(Protocol):
    """Where the frequencies come from: FTS5's tables (this module's functions) by default."""

    def index_state(self, table: str) -> tuple[Hashable, int]:
        """(a value that changes with every committed write to the index, rows in it)."""
        ...

    def lookup(self, vocab: str, terms: Sequence[str]) -> dict[str, int]:
        """Rows of the index holding each term (0 for a term no row holds)."""
        ...


class _Kept:
    def __init__(self, state: Hashable) -> None:
        self.state = state
        self.freqs: dict[str, int] = {}


_lock = threading.Lock()
_kept: dict[tuple[str, str], _Kept] = {}


def index_state(table: str) -> State:
    """The averages and structure records of this FTS5 table: they change with every write."""
    with cursor() as cur:
        cur.execute(_SQL_INDEX_STATE.format(table=table))
        return tuple((int(record), bytes(block or b"")) for record, block in cur.fetchall())


def averages_row_count(state: State) -> int:
    """The number of rows in the index, from the state's averages record, which begins with it
    as a varint (https://sqlite.org/src/file?name=ext/fts5/fts5_index.c, "averages" record)."""
    averages = dict(state).get(1)
    return _leading_varint(averages) if averages else 0


def doc_freqs(
    table: str, vocab: str, terms: Sequence[str], *, source: Source | None = None
) -> tuple[dict[str, int], int]:
    """(rows of `table` holding each term, rows in `table`), through this process's copy."""
    # The state is read before the lookups it guards: see the module docstring.
    state: Hashable
    if source is None:
        fts_state = index_state(table)
        state, total = fts_state, averages_row_count(fts_state)
    else:
        state, total = source.index_state(table)
    key = (str(connection.settings_dict["NAME"]), table)
    # Inside an atomic block the state may hold writes that still roll back: read through.
    committed = not connection.in_atomic_block
    known: dict[str, int] = {}
    kept = None
    if committed:
        with _lock:
            kept = _kept.get(key)
            if kept is None or kept.state != state:
                kept = _kept[key] = _Kept(state)
            known = {t: kept.freqs[t] for t in terms if t in kept.freqs}
    missing = [t for t in dict.fromkeys(terms) if t not in known]
    if missing:
        looked_up = (source.lookup if source else lookup)(vocab, missing)
        known.update(looked_up)
        if kept is not None:
            with _lock:
                if len(kept.freqs) + len(looked_up) <= MAX_KEPT_TERMS:
                    kept.freqs.update(looked_up)
    return {t: known[t] for t in terms}, total


def lookup(vocab: str, terms: Sequence[str]) -> dict[str, int]:
    """Rows holding each term, asked of fts5vocab (0 for a term no row holds)."""
    arm = _SQL_TERM_DOC_FREQ_ARM.format(vocab=vocab)
    freqs = dict.fromkeys(terms, 0)
    with cursor() as cur:
        for start in range(0, len(terms), _MAX_COMPOUND_ARMS):
            batch = list(terms[start : start + _MAX_COMPOUND_ARMS])
            cur.execute(" UNION ALL ".join([arm] * len(batch)), batch)
            for term, doc in cur.fetchall():
                freqs[term] = int(doc)
    return freqs


def forget() -> None:
    """Drop every kept frequency (tests that rebuild databases under the same name)."""
    with _lock:
        _kept.clear()


def _leading_varint(blob: bytes) -> int:
    """Decode the SQLite varint at the start of `blob` (big-endian 7-bit groups)."""
    value = 0
    for i, byte in enumerate(blob[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return value
