"""PostgreSQL's keyword index as rows: the tables (migration 0008) and the postings an entity's
head and body (graph.storage.keyword.tables.index_columns) turn into.

The postings hold exactly the tokens FTS5 indexes on SQLite — `index_text` output split on its
spaces (FTS5's `ascii` tokenizer splits on nothing else there: a token holds no ASCII
punctuation) — so both backends count the same terms, and bm25 over them ranks alike.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

DOC = "graph_keyword_doc"
POSTING = "graph_keyword_posting"
TOTALS = "graph_keyword_totals"
TOTALS_SLOTS = 16  # the rows graph_keyword_totals holds (migration 0008)

# A btree entry holds at most ~2,700 bytes, and a token may be 32,768 (text.MAX_TOKEN_BYTES):
# a longer term is keyed by its digest. The key's '#' cannot begin a token (a token holds
# letters, digits and marks only), so a digest never equals a real term.
_MAX_TERM_BYTES = 512


def posting_term(token: str) -> str:
    """The `term` a posting of this token is stored (and looked up) under."""
    if len(token) * 4 <= _MAX_TERM_BYTES or len(token.encode("utf-8")) <= _MAX_TERM_BYTES:
        return token
    return "#" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def split_tokens(indexed: str) -> list[str]:
    """The tokens of `index_text` output."""
    return [token for token in indexed.split(" ") if token]


@dataclass(frozen=True, slots=True)
class DocPostings:
    """What one entity's row writes: its document length and (term, head tf, body tf)."""

    tokens: int
    postings: list[tuple[str, int, int]]


def doc_postings(head: str, body: str) -> DocPostings:
    """The postings of an entity whose index columns are (head, body)."""
    head_tokens = split_tokens(head)
    body_tokens = split_tokens(body)
    head_tf = Counter(posting_term(t) for t in head_tokens)
    body_tf = Counter(posting_term(t) for t in body_tokens)
    terms = dict.fromkeys([*head_tf, *body_tf])
    return DocPostings(
        len(head_tokens) + len(body_tokens),
        [(term, head_tf[term], body_tf[term]) for term in terms],
    )
