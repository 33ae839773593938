"""Document frequencies and index totals on PostgreSQL: term_frequencies' `source` there.

A term's document frequency is the number of its postings in that index (an index-only count
on the posting table's key). The index's state — what frequencies are kept under in this
process — is each totals slot's write counter: every write to the index moves its own slot's
counter in the write's transaction, so any committed write, by any connection of any host,
changes the state, and two writes that could commit in either order land on different slots
or wait for each other on the same one (the slots' tuple never repeats a state).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from graph.storage.cursor import cursor
from graph.storage.keyword.tables import ARCHIVED_FTS, ARCHIVED_VOCAB
from graph.storage.postgres.keyword_postings import POSTING, TOTALS, posting_term

# Result: per slot (slot order): writes, live rows, archived rows.
_SQL_STATE = f"SELECT slot, writes, live_rows, archived_rows FROM {TOTALS} ORDER BY slot"
# Params: archived, terms (posting keys). Result: term, postings (rows holding it).
_SQL_DOC_FREQS = f"""
SELECT term, count(*) FROM {POSTING} WHERE archived = ? AND term = ANY(?::text[]) GROUP BY term
"""

# (slot, writes) of every totals slot, in slot order.
State = tuple[tuple[int, int], ...]


def index_state(table: str) -> tuple[Hashable, int]:
    """(the index's state, rows in the live index or, for ARCHIVED_FTS, the archived one)."""
    with cursor() as cur:
        cur.execute(_SQL_STATE)
        rows = cur.fetchall()
    column = 3 if table == ARCHIVED_FTS else 2
    return tuple((int(r[0]), int(r[1])) for r in rows), sum(int(r[column]) for r in rows)


def lookup(vocab: str, terms: Sequence[str]) -> dict[str, int]:
    """Rows of the live index (or, for ARCHIVED_VOCAB, the archived one) holding each term."""
    keys = {term: posting_term(term) for term in terms}
    with cursor() as cur:
        cur.execute(_SQL_DOC_FREQS, [vocab == ARCHIVED_VOCAB, sorted(set(keys.values()))])
        counts = {term: int(n) for term, n in cur.fetchall()}
    return {term: counts.get(keys[term], 0) for term in terms}
