"""Text pipeline for the keyword index: one tokenizer for index time and query time.

Pure Python, no Django. memesh tokenizes in Python and stores space-separated tokens in an
FTS5 table declared with `tokenize='ascii'`: that tokenizer splits only on ASCII separators
and treats every non-ASCII character as part of a word, so SQLite indexes exactly the tokens
produced here, and a query term looked up in the fts5vocab table is spelled exactly as stored.

Pipeline (`tokens`):
1. NFC, then case folding (ß → ss).
2. Diacritics folded for Latin, Greek and Cyrillic letters only (naïve → naive). Marks on
   other scripts carry meaning (Thai vowels, the kana voicing mark) and are kept.
3. Every character that is not a letter, digit or mark separates words, so punctuation
   inside a word splits it (kitchen's → kitchen, s; auth-decision → auth, decision).
4. Runs of scripts written without spaces (Han, Kana, Hangul, Thai, Lao, Khmer, Myanmar) are
   cut into overlapping 2-character pieces (資料庫 → 資料, 料庫); a lone character stays whole.
5. ASCII words are stemmed with Snowball English (Porter2): graduating/graduate → graduat.

Queries additionally drop English stopwords (unless nothing else is left) and then go through
the document-frequency guard in `select_terms`. Terms reach SQLite only as double-quoted
FTS5 strings (`match_expression`), so no FTS5 syntax typed by a user is ever interpreted.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from snowballstemmer.basestemmer import BaseStemmer

MAX_QUERY_TERMS = 32
# The reference's guard: a term in more than half of the indexed rows is noise, but only once
# there are enough rows for "more than half" to mean "common" rather than "the subject".
COMMON_TERM_FRACTION = 0.5
COMMON_TERM_MIN_ROWS = 25
# A stricter cut than the reference's, from FREQUENT_TERM_MIN_ROWS rows on: a term in more than
# a fifth of the rows is dropped while a rarer term remains. bm25 scores every row a term
# matches, so the frequent words of a long query set its cost (at 10k memories an 8-word
# query scored ~3x the rows it scores with the cut), while their idf is what makes them rank
# nothing. Measured neutral on both quality sets, in both query orders (docs/recall.md); below
# the floor every match is scored in well under a millisecond, and the reference's rule holds.
FREQUENT_TERM_FRACTION = 0.2
FREQUENT_TERM_MIN_ROWS = 1000
# When every term of a query is in more than half of the rows, the guard keeps the rarest, and
# FTS5's bm25 gives it no weight: its idf, log((N - n + 0.5) / (n + 0.5)), is zero or less, which
# FTS5 clamps to 1e-6, so its matches differ only in how often, and in how short a text, they
# hold the word. Ranking every match costs time in proportion to them (5 ms for a word in all
# 10,000 memories) for an order that says little; the newest COMMON_MATCH_WINDOW matches are
# ranked instead (0.8 ms), which ranking's recency factor favours anyway (docs/recall.md).
COMMON_MATCH_WINDOW = 1000
# The window holds at least this many times the candidates asked for.
WINDOW_PER_CANDIDATE = 5
# FTS5 truncates a longer token to this many UTF-8 bytes when it indexes or parses it
# (FTS5_MAX_TOKEN_SIZE in ext/fts5/fts5Int.h), but the fts5vocab lookup of the document-frequency
# guard compares whole terms: a word of 8,193 four-byte letters was stored truncated, counted as
# absent, and never found. Tokens are cut here instead, identically at index and query time.
MAX_TOKEN_BYTES = 32768

# Code-point ranges of scripts written without spaces between words.
_UNSPACED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303C),
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFFDC),  # halfwidth Katakana and Hangul
    (0x20000, 0x323AF),  # CJK extensions B-H
)

# English function words. Dropped from queries only: the index keeps every word, so a memory
# about "the IT team" stays findable by a query that has nothing else to offer.
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me might more most must my myself no nor not now of off on
    once only or other our ours ourselves out over own same shall she should so some such
    than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t d ll m re ve don doesn didn isn wasn aren
    weren won wouldn shouldn couldn
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


@cache
def _english() -> BaseStemmer:
    # Imported on the first word stemmed: the package imports its thirty-odd languages
    # (~0.06 s), which a process that never indexes or searches text need not pay for.
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _english().stemWord(word)


def _is_unspaced(cp: int) -> bool:
    if cp < 0x0E00:
        return False
    return any(lo <= cp <= hi for lo, hi in _UNSPACED_RANGES)


def _folds_diacritics(cp: int) -> bool:
    # Latin, IPA, Greek, Cyrillic (< U+0530) and Latin/Greek extended additional.
    return cp < 0x0530 or 0x1E00 <= cp < 0x2000


def normalize(text: str) -> str:
    """NFC, case-folded, with Latin/Greek/Cyrillic diacritics removed."""
    text = unicodedata.normalize("NFC", text).casefold()
    if text.isascii():
        return text
    out: list[str] = []
    base_folds = False
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            if base_folds:
                continue
        else:
            base_folds = _folds_diacritics(ord(ch))
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _is_word_char(ch: str) -> bool:
    if ch.isascii():
        return ch.isalnum()
    return unicodedata.category(ch)[0] in "LNM" or unicodedata.category(ch) == "Co"


_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _raw_tokens(text: str) -> Iterator[tuple[str, bool]]:
    """Yield (token, is_word) in text order; is_word is False for 2-character pieces."""
    text = normalize(text)
    if text.isascii():  # the common case, and a regex is ~10x faster than the loop below
        for token in _ASCII_WORD.findall(text):
            yield token, True
        return
    word: list[str] = []
    run: list[str] = []

    def flush_word() -> Iterator[tuple[str, bool]]:
        if word:
            yield "".join(word), True
            word.clear()

    def flush_run() -> Iterator[tuple[str, bool]]:
        if len(run) == 1:
            yield run[0], False
        else:
            for i in range(len(run) - 1):
                yield run[i] + run[i + 1], False
        run.clear()

    for ch in text:
        if _is_unspaced(ord(ch)):
            yield from flush_word()
            run.append(ch)
        elif _is_word_char(ch):
            if run:
                yield from flush_run()
            word.append(ch)
        else:
            yield from flush_word()
            if run:
                yield from flush_run()
    yield from flush_word()
    if run:
        yield from flush_run()


def _finish(token: str, is_word: bool) -> str:
    if is_word and token.isascii() and token.isalpha():
        token = _stem(token)
    if len(token) > MAX_TOKEN_BYTES // 4:  # a UTF-8 character takes at most 4 bytes
        # Cut at a character boundary ("ignore" drops only a character split by the cut).
        token = token.encode("utf-8")[:MAX_TOKEN_BYTES].decode("utf-8", "ignore")
    return token


# ASCII words up to this length have their finished form cached: every write tokenizes its
# whole text for the keyword index, and a vocabulary repeats (a longer word is rare, and must
# not pin a big key in the cache).
_CACHED_WORD_LENGTH = 64


@lru_cache(maxsize=65536)
def _finish_ascii_word(token: str) -> str:
    return _finish(token, True)


def tokens(text: str) -> list[str]:
    """Index/query tokens of `text`, in order, duplicates kept."""
    normalized = normalize(text)
    if normalized.isascii():
        # _raw_tokens' ASCII case (every token a word), each finished through the cache.
        return [
            _finish_ascii_word(tok) if len(tok) <= _CACHED_WORD_LENGTH else _finish(tok, True)
            for tok in _ASCII_WORD.findall(normalized)
        ]
    return [_finish(tok, is_word) for tok, is_word in _raw_tokens(text)]


def index_text(text: str) -> str:
    """The form stored in the FTS5 table: tokens joined by spaces."""
    return " ".join(tokens(text))


def query_terms(query: str) -> list[str]:
    """Distinct searchable terms of a query, in query order.

    English stopwords are dropped unless the query consists of nothing else, in which case
    they stay and the document-frequency guard decides.
    """
    raw = list(_raw_tokens(query))
    content = [(tok, is_word) for tok, is_word in raw if not (is_word and tok in STOPWORDS)]
    chosen = content or raw
    seen: dict[str, None] = {}
    for tok, is_word in chosen:
        seen.setdefault(_finish(tok, is_word), None)
    return list(seen)


def select_terms(
    terms: Sequence[str],
    doc_freq: Mapping[str, int],
    total_rows: int,
    cap: int = MAX_QUERY_TERMS,
) -> list[str]:
    """Apply the document-frequency guard, then the positional cap.

    - A term no row contains is dropped first: it cannot match, so it must not take one of the
      32 places from a term that can (the reference counts it; this is strictly better).
    - With at least 25 rows, a term in more than half of them is dropped; when every term is
      that common, the rarest one is kept (first in query order on a tie).
    - With at least 1,000 rows, a term in more than a fifth of them is also dropped, as long as
      a term in at most a fifth remains (memesh's cut, not the reference's: FREQUENT_TERM_*).
    - Of what survives, the first `cap` terms in query order are used.
    """
    present = [t for t in terms if doc_freq.get(t, 0) > 0]
    if total_rows >= COMMON_TERM_MIN_ROWS:
        limit = total_rows * COMMON_TERM_FRACTION
        kept = [t for t in present if doc_freq[t] <= limit]
        if not kept and present:
            kept = [min(present, key=lambda t: doc_freq[t])]  # min() keeps the first on a tie
    else:
        kept = present
    if total_rows >= FREQUENT_TERM_MIN_ROWS:
        rarer = [t for t in kept if doc_freq[t] <= total_rows * FREQUENT_TERM_FRACTION]
        kept = rarer or kept
    return kept[:cap]


def match_window(
    selected: Sequence[str], doc_freq: Mapping[str, int], total_rows: int, candidates: int
) -> int | None:
    """How many of the newest matches bm25 ranks for these selected terms (select_terms'
    output), or None for every match: a window only when each term is in more than half of
    at least COMMON_TERM_MIN_ROWS rows (COMMON_MATCH_WINDOW says why)."""
    if total_rows < COMMON_TERM_MIN_ROWS or not selected:
        return None
    if any(doc_freq[t] <= total_rows * COMMON_TERM_FRACTION for t in selected):
        return None
    return max(COMMON_MATCH_WINDOW, candidates * WINDOW_PER_CANDIDATE)


def match_expression(terms: Sequence[str]) -> str:
    """OR of double-quoted FTS5 strings; see https://sqlite.org/fts5.html#fts5_strings."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def normalize_observation(text: str) -> str:
    """Whitespace-normalised form used to recognise an observation already stored."""
    return " ".join(text.split())


def embedding_text(name: str, title: str | None, observations: Sequence[str]) -> str:
    """What an entity's vector is built from: name, title, then observations in order."""
    return "\n".join([name, *([title] if title else []), *observations])


def text_hash(text: str) -> str:
    """A short, stable fingerprint of an embedding text (32 hex characters)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
