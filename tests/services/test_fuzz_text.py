"""Property tests of the text pipeline (graph/search/text.py) against the real FTS5 index.

Whatever Unicode a memory or a query holds — control characters, quotes, FTS5 operators, very
long runs — segmentation must not raise, every token must survive FTS5's `ascii` tokenizer
unchanged (that is what lets memesh tokenize in Python), and every MATCH expression memesh
builds must be valid FTS5 syntax: https://sqlite.org/fts5.html#full_text_query_syntax.
"""

from __future__ import annotations

import string

import pytest
from django.db import connection, transaction
from django.utils import timezone
from hypothesis import example, given, settings
from hypothesis import strategies as st

from graph.models import Entity
from graph.ops.kit.fields import MAX_QUERY_CHARS
from graph.ops.recall.access import discard_pending_accesses
from graph.search import text
from graph.storage.keyword.tables import LIVE_FTS, VOCAB
from tests.helpers import recall, remember

# Fixed seed, bounded examples: reproducible in CI, still generated (not a fixed table).
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None)
FUZZ_DB = settings(FUZZ, max_examples=80)

# FTS5 query syntax and other characters a user might type that must never be interpreted.
FTS5_PIECES = [
    "AND", "OR", "NOT", "NEAR", "NEAR(", "NEAR/2", "*", "^", ":", '"', "'", "(", ")", "{",
    "}", "-", "+", ",", "head:", "body:", "{head body}:", "rowid", "''", '""', "\\", "\x00",
    "\t", "\n", "\r", "\x1b", "\u202e", "\u200b", "\ufeff", "a", "É", "ǅ", "İ", "ß", "ﬀ",
    "資料庫", "ひらがな", "한국어", "ภาษาไทย", "\u0301", "\u3099", "\U0001f600", "٣", "Ⅻ",
    "²", "x" * 60,
]  # fmt: skip

any_text = st.text(max_size=200)  # arbitrary code points; hypothesis never emits surrogates
control_text = st.text(
    alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Po"]),
    max_size=80,
)
fts_syntax = st.lists(st.sampled_from(FTS5_PIECES) | any_text, max_size=25).flatmap(
    lambda parts: st.sampled_from([" ".join(parts), "".join(parts)])
)
long_text = st.builds(
    lambda chunk, times: chunk * times, st.text(min_size=1, max_size=12), st.integers(200, 2500)
)
# Queries with hundreds of distinct terms (up to the 10,000-character query limit).
many_terms = st.builds(
    lambda start, count, cjk: (
        "".join(chr(0x4E00 + start + i) for i in range(count))
        if cjk
        else " ".join(f"w{start + i}" for i in range(count))
    ),
    st.integers(0, 5000),
    st.integers(400, 1500),
    st.booleans(),
)
queries = any_text | control_text | fts_syntax | long_text | many_terms

# Characters the `ascii` tokenizer treats as separators: a token must not hold one.
ASCII_SEPARATORS = {chr(c) for c in range(128)} - set(string.ascii_lowercase + string.digits)


# --- pure segmentation ------------------------------------------------------------------------


@FUZZ
@given(queries)
@example("")
@example('"NEAR(a b, 2)" OR head:x* AND ^y NOT (z')
@example("\x00\x00資\x00料")
@example("a\u0301\u0301\u0301b İ ǅ ﬀ")
def test_segmentation_never_raises_and_tokens_survive_the_ascii_tokenizer(query: str) -> None:
    tokens = text.tokens(query)

    for token in tokens:
        assert token
        assert not set(token) & ASCII_SEPARATORS, token  # FTS5 would split it
        assert token == token.lower()
        assert len(token.encode("utf-8")) <= text.MAX_TOKEN_BYTES  # FTS5 would cut it
    assert text.index_text(query) == " ".join(tokens)
    assert text.normalize(query) == text.normalize(text.normalize(query))


@FUZZ
@given(queries)
@example("the and of")  # only stopwords: they stay, the df guard decides
@example("ÉCOLE école ecole")
def test_query_terms_are_distinct_index_tokens_of_the_same_text(query: str) -> None:
    terms = text.query_terms(query)
    indexed = set(text.tokens(query))

    assert len(terms) == len(set(terms))
    assert set(terms) <= indexed  # what a query looks up is what indexing the query stores
    assert bool(terms) == bool(indexed)
    for term in terms:
        assert text.tokens(term) or not term  # a term is itself segmentable text


@FUZZ
@given(st.lists(st.text(min_size=1, max_size=30), max_size=40), st.data())
def test_select_terms_keeps_only_present_terms_within_the_cap(
    terms: list[str], data: st.DataObject
) -> None:
    terms = list(dict.fromkeys(terms))
    total = data.draw(st.integers(0, 200))
    freqs = {t: data.draw(st.integers(0, max(total, 1))) for t in terms}

    selected = text.select_terms(terms, freqs, total)

    assert len(selected) <= text.MAX_QUERY_TERMS
    assert all(freqs[t] > 0 for t in selected)
    assert selected == [t for t in terms if t in selected]  # query order kept
    present = [t for t in terms if freqs[t] > 0]
    if total < text.COMMON_TERM_MIN_ROWS:
        assert selected == present[: text.MAX_QUERY_TERMS]
    elif present:
        assert selected  # the rarest common term is kept rather than nothing


# --- against the real FTS5 table --------------------------------------------------------------


def _match_count(expression: str) -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {LIVE_FTS} WHERE {LIVE_FTS} MATCH %s", [expression])
        return int(cur.fetchone()[0])


@pytest.mark.sqlite_only  # FTS5's query syntax and tables (test_keyword_postings.py: PostgreSQL's)
@pytest.mark.django_db
@FUZZ_DB
@given(queries)
@example('"')
@example("NEAR(")
@example("head:x OR body:*")
@example("\x00")
def test_every_match_expression_is_valid_fts5(query: str) -> None:
    terms = text.query_terms(query)
    if not terms:
        return  # recall answers "nothing searchable" without running SQL
    expression = text.match_expression(terms[: text.MAX_QUERY_TERMS])

    assert _match_count(expression) == 0  # the index is empty: valid syntax, no rows
    assert set(Entity.objects.term_stats(terms)[0]) == set(terms)
    assert Entity.objects.term_stats(terms, archived=True) == (dict.fromkeys(terms, 0), 0)
    assert Entity.objects.fts_candidates(expression, limit=5, now=timezone.now()) == []
    filtered = Entity.objects.fts_candidates(
        expression,
        limit=5,
        now=timezone.now(),
        include_archived=True,
        namespace="personal",
        tag="project:x",
    )
    assert filtered == []


@pytest.mark.django_db
@FUZZ_DB
@given(queries.map(lambda q: q[:MAX_QUERY_CHARS]))
# Found by this test: more than 500 distinct terms made the document-frequency lookup one
# compound SELECT over SQLite's 500-arm limit ("too many terms in compound SELECT", a 500).
# graph/storage/term_frequencies.py (lookup) now batches it.
@example(" ".join(f"w{i}" for i in range(501)))
@example("".join(chr(0x4E00 + i) for i in range(3000)))
def test_recall_answers_any_query_up_to_the_length_limit(query: str) -> None:
    remember("fuzz-subject", "w1 資料 naive NEAR x")

    result = recall(query, include_archived=True)

    assert set(result) >= {"entities", "retrieval"}
    assert result["retrieval"]["mode"] == "fts"
    if query.strip() and not text.query_terms(query):
        assert result["entities"] == []  # nothing searchable: nothing, not the recent list
    discard_pending_accesses()


@pytest.mark.sqlite_only  # FTS5's query syntax and tables (test_keyword_postings.py: PostgreSQL's)
@pytest.mark.django_db
@FUZZ_DB
@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=10))
@example(['"', '""', "a OR b", "NEAR(x y)", "*", "^", ":"])
def test_match_expression_quotes_any_string_it_is_given(strings: list[str]) -> None:
    # Not only the pipeline's tokens: the quoting alone keeps FTS5 syntax out.
    strings = [s.replace("\x00", "") or "x" for s in strings]  # a C string ends at NUL
    assert _match_count(text.match_expression(strings)) == 0


@pytest.mark.sqlite_only  # FTS5's query syntax and tables (test_keyword_postings.py: PostgreSQL's)
@pytest.mark.django_db
@FUZZ_DB
@given(queries)
@example("資料庫 migration's NEAR(x) \x00 naïve")
@example("ก\u0e31\u0e31 ๑")
# Found by this test: FTS5 cuts a token at 32768 UTF-8 bytes, so the vocabulary held a shorter
# term than the pipeline's (minimised: one word of 8,193 four-byte letters, a 9,000-character
# document of 2-byte letters failed the same way). graph/search/text.py now cuts tokens itself.
@example("\U0001d400" * 8193)
@example("é" * 16385 + " x")
def test_the_index_holds_exactly_the_python_tokens_and_each_is_found(document: str) -> None:
    tokens = set(text.tokens(document))
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {LIVE_FTS} (rowid, head, body) VALUES (1, '', %s)",
            [text.index_text(document)],
        )
        cur.execute(f"SELECT term FROM {VOCAB}")
        vocabulary = {row[0] for row in cur.fetchall()}

        assert vocabulary == tokens
        for term in text.query_terms(document)[:20]:
            assert _match_count(text.match_expression([term])) == 1, term
        transaction.set_rollback(True)
