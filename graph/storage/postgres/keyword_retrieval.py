"""Recall's keyword reads on PostgreSQL: bm25 computed in SQL over the posting tables with
FTS5's own formula, so both backends rank a query's matches alike.

FTS5's bm25() (https://sqlite.org/fts5.html#the_bm25_function; fts5Bm25Function in
ext/fts5/fts5_aux.c), for a row D matching a query of terms q1..qn:

    score(D) = -Σ_i IDF(qi) · f(qi, D) · (k1 + 1) / (f(qi, D) + k1 · (1 - b + b · |D| / avgdl))
    IDF(qi)  = log((N - n(qi) + 0.5) / (n(qi) + 0.5)), 1e-6 where that is not above 0

with k1 = 1.2, b = 0.75; f(qi, D) the sum, over the term's occurrences in the row, of its
column's weight (head 2.5, body 1.0: BM25_WEIGHTS); |D| the row's tokens over both columns;
N the rows of the index and avgdl its tokens over N; n(qi) the rows holding the term, counted
over the whole index (the filters do not change it, as they do not in FTS5). The terms are
summed in query order, as FTS5 does, so equal rows get equal scores to the last bit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from graph.storage import term_frequencies
from graph.storage.cursor import cursor, db_time
from graph.storage.entity_filters import EntityFilters
from graph.storage.keyword.retrieval import KeywordHit, KeywordRetrieval
from graph.storage.keyword.tables import ARCHIVED_FTS, ARCHIVED_VOCAB, LIVE_FTS, VOCAB
from graph.storage.postgres import keyword_frequencies
from graph.storage.postgres.keyword_postings import DOC, POSTING, TOTALS, posting_term

# BM25_WEIGHTS (graph/storage/keyword/retrieval.py), per column.
HEAD_WEIGHT = 2.5
BODY_WEIGHT = 1.0

# One arm's query terms with their idf and the index's average row length. Params: the terms
# (posting keys), in query order. {archived}: the arm's index; {totals}: its totals columns.
_SQL_TERM_WEIGHTS = f"""
w{{arm}} AS (
SELECT q.term, q.pos, t.avgdl, CASE WHEN l.x > 0 THEN l.x ELSE 1e-6 END AS idf
FROM unnest(?::text[]) WITH ORDINALITY AS q(term, pos)
CROSS JOIN (SELECT sum({{totals}}_rows)::float8 AS n,
                   sum({{totals}}_tokens)::float8 / nullif(sum({{totals}}_rows), 0) AS avgdl
            FROM {TOTALS}) AS t
CROSS JOIN LATERAL (SELECT count(*)::float8 AS n FROM {POSTING} AS p
                    WHERE p.archived = {{archived}} AND p.term = q.term) AS f
CROSS JOIN LATERAL (SELECT ln((t.n - f.n + 0.5) / (f.n + 0.5)) AS x) AS l)
"""
# One arm: each matching row's bm25 (negative, lower is better). Params: the filters', then,
# with a window, how many of the newest matches. {weight}: f(q, D) of a posting.
_WEIGHTED_TF = f"(p.head_tf * {HEAD_WEIGHT}::float8 + p.body_tf * {BODY_WEIGHT}::float8)"
_SQL_ARM = f"""
SELECT p.entity_id AS id,
       -sum(w.idf * (({_WEIGHTED_TF} * (1.2::float8 + 1.0::float8))
            / ({_WEIGHTED_TF} + 1.2::float8 * (1.0::float8 - 0.75::float8
                                               + 0.75::float8 * d.tokens / w.avgdl)))
            ORDER BY w.pos) AS score
FROM w{{arm}} AS w
JOIN {POSTING} AS p ON p.archived = {{archived}} AND p.term = w.term
JOIN {DOC} AS d ON d.entity_id = p.entity_id
{{join}}
WHERE TRUE {{where}}
GROUP BY p.entity_id
"""
# The window: the newest matches the filters keep (params: the filters', how many).
_SQL_WINDOW = f"""
AND p.entity_id IN (
SELECT m.id FROM (SELECT DISTINCT p.entity_id AS id
                  FROM w{{arm}} AS w
                  JOIN {POSTING} AS p ON p.archived = {{archived}} AND p.term = w.term
                  {{join}}
                  WHERE TRUE {{filters}}) AS m
ORDER BY m.id DESC LIMIT ?)
"""
_JOIN_ENTITY = "JOIN graph_entity AS e ON e.id = p.entity_id"
# Days from `now` (naive UTC, a parameter) back to the later of last write and last access.
_DAYS_SINCE_TOUCH = (
    "extract(epoch FROM (CAST(? AS timestamp) AT TIME ZONE 'UTC')"
    " - greatest(e.updated_at, coalesce(e.last_accessed_at, e.updated_at)))::float8 / 86400"
)
# Params: the arms' terms, now, the arms' params, limit. Result: as SQLite's
# _SQL_FTS_CANDIDATES (id, bm25, days since touch, access_count, confidence, recall_hits,
# recall_misses), ties newest first.
_SQL_CANDIDATES = f"""
WITH {{weights}}
SELECT c.id, c.score, {_DAYS_SINCE_TOUCH},
       e.access_count, e.confidence, e.recall_hits, e.recall_misses
FROM ({{arms}} ORDER BY score, id DESC LIMIT ?) AS c
JOIN graph_entity AS e ON e.id = c.id
ORDER BY c.score, c.id DESC
"""
# Params: terms (posting keys), ids, whether archived rows count. Result: entity id, a term it
# holds (NULL when it holds none), for each of these ids with a row in the index.
_SQL_TERMS_PRESENT = f"""
SELECT d.entity_id, p.term FROM {DOC} AS d
LEFT JOIN {POSTING} AS p
  ON p.archived = d.archived AND p.term = ANY(?::text[]) AND p.entity_id = d.entity_id
WHERE d.entity_id = ANY(?::bigint[]) AND (NOT d.archived OR ?)
"""
# Result: rows of the live index, rows of the archived one.
_SQL_ROWS = f"SELECT coalesce(sum(live_rows), 0), coalesce(sum(archived_rows), 0) FROM {TOTALS}"
# As SQLite's, with PostgreSQL's functions (and no `+` planner hint, which it does not parse).
_SQL_RANKING_INPUTS = f"""
SELECT e.id, 0.0::float8, {_DAYS_SINCE_TOUCH},
       e.access_count, e.confidence, e.recall_hits, e.recall_misses
FROM graph_entity AS e
WHERE e.id IN ({{ids}}) AND e.status = 'active' {{filters}}
"""
_SQL_ACTIVE_TAGS_OF = """
SELECT t.entity_id, t.name FROM graph_tag AS t JOIN graph_entity AS e ON e.id = t.entity_id
WHERE t.entity_id IN ({ids}) AND e.status = 'active'
"""

# A double-quoted FTS5 string of graph.search.text.match_expression, `""` inside for `"`.
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def match_terms(match: str) -> list[str]:
    """The terms of a match_expression string, in its order (the inverse of that function)."""
    return [quoted.replace('""', '"') for quoted in _QUOTED.findall(match)]


class PostgresKeywordRetrieval(KeywordRetrieval):
    """Recall's keyword reads on PostgreSQL."""

    sql_ranking_inputs = _SQL_RANKING_INPUTS
    sql_active_tags_of = _SQL_ACTIVE_TAGS_OF

    def indexed_row_count(self, *, archived: bool = False) -> int:
        with cursor() as cur:
            cur.execute(_SQL_ROWS)
            live, archived_rows = cur.fetchone()
        return int(archived_rows if archived else live)

    def term_stats(
        self, terms: Sequence[str], *, archived: bool = False
    ) -> tuple[dict[str, int], int]:
        """SQLite's term_stats, counted from the posting table (kept in this process until
        the index totals' write counters move: graph/storage/postgres/keyword_frequencies.py)."""
        table, vocab = (ARCHIVED_FTS, ARCHIVED_VOCAB) if archived else (LIVE_FTS, VOCAB)
        return term_frequencies.doc_freqs(table, vocab, terms, source=keyword_frequencies)

    def fts_candidates(
        self,
        match: str,
        *,
        limit: int,
        now: datetime,
        include_archived: bool = False,
        namespace: str | None = None,
        tag: str | None = None,
        project: str | None = None,
        trust: str | None = None,
        unexpired_at: datetime | None = None,
        newest: int | None = None,
    ) -> list[KeywordHit]:
        """SQLite's fts_candidates (same arguments, same answer), `match` read back into its
        terms (match_terms)."""
        terms = [posting_term(term) for term in match_terms(match)]
        if not terms:
            return []
        filter_sql, filter_params = EntityFilters(
            namespace, tag, project, trust, unexpired_at
        ).sql()
        join = _JOIN_ENTITY if filter_sql else ""
        weights: list[str] = []
        arms: list[str] = []
        arm_params: list[object] = []
        for arm, archived in enumerate([False, True] if include_archived else [False]):
            flag = "TRUE" if archived else "FALSE"
            weights.append(
                _SQL_TERM_WEIGHTS.format(
                    arm=arm, archived=flag, totals="archived" if archived else "live"
                )
            )
            if newest is None:
                where, arm_join = filter_sql, join
                arm_params.extend(filter_params)
            else:
                # The window holds only what the filters keep: the arm needs no filter again.
                where = _SQL_WINDOW.format(arm=arm, archived=flag, join=join, filters=filter_sql)
                arm_join = ""
                arm_params.extend([*filter_params, newest])
            arms.append(_SQL_ARM.format(arm=arm, archived=flag, join=arm_join, where=where))
        sql = _SQL_CANDIDATES.format(weights=", ".join(weights), arms=" UNION ALL ".join(arms))
        params: list[object] = [terms] * len(weights)
        params += [db_time(now), *arm_params, limit]
        with cursor() as cur:
            cur.execute(sql, params)
            return [KeywordHit(*row) for row in cur.fetchall()]

    def terms_present(
        self, entity_ids: Sequence[int], terms: Sequence[str], *, include_archived: bool = False
    ) -> dict[int, set[str]]:
        if not entity_ids or not terms:
            return {}
        by_key: dict[str, set[str]] = {}
        for term in terms:
            by_key.setdefault(posting_term(term), set()).add(term)
        out: dict[int, set[str]] = {}
        with cursor() as cur:
            cur.execute(_SQL_TERMS_PRESENT, [list(by_key), list(entity_ids), include_archived])
            for entity_id, key in cur.fetchall():
                held = out.setdefault(entity_id, set())
                if key is not None:
                    held |= by_key[key]
        return out
