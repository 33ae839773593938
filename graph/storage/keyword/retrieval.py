"""Recall's reads of the keyword index: the best bm25 matches with their ranking inputs, the
same inputs for the vector side's candidates, which query terms each candidate holds, the
per-term document counts, and the turns stored around a memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import models

from graph.storage import term_frequencies
from graph.storage.cursor import cursor, db_time, placeholders
from graph.storage.entity_filters import EntityFilters
from graph.storage.keyword.tables import ARCHIVED_FTS, ARCHIVED_VOCAB, LIVE_FTS, VOCAB

# Column weights for bm25(): head (name + title), body (observations + tags).
# Name and title label the memory, written to be read and found, so a word there is stronger
# evidence than the same word somewhere in its observations. Tags share the body's weight:
# the common ones (project:x) already get a low IDF from bm25 itself.
BM25_WEIGHTS = "2.5, 1.0"

# One arm of the candidate query. Params: MATCH expression, [namespace], [tag], [project
# scope], [trust], [unexpired at].
_SQL_FTS_ARM = """
SELECT {table}.rowid AS id, bm25({table}, {weights}) AS score
FROM {table}
{join}
WHERE {table} MATCH ? {filters}
"""
# The same arm over the newest matches only (params: its arm's, then how many). FTS5 walks
# its matches in rowid order, so the subquery's LIMIT stops the walk: bm25 runs for those rows
# alone, not for every match.
_SQL_FTS_ARM_NEWEST = """
SELECT * FROM (
SELECT {table}.rowid AS id, bm25({table}, {weights}) AS score
FROM {table}
{join}
WHERE {table} MATCH ? {filters}
ORDER BY {table}.rowid DESC LIMIT ?)
"""
# Params: now (naive UTC), arms' params, limit. Result per candidate: id, bm25 (negative,
# lower is better), days since the later of last write and last access, access_count,
# confidence, recall_hits, recall_misses. The entity join runs on the LIMITed rows only.
# Ties break on the higher id, i.e. newest first.
_SQL_FTS_CANDIDATES = """
SELECT c.id, c.score,
       julianday(?) - julianday(max(e.updated_at, coalesce(e.last_accessed_at, e.updated_at))),
       e.access_count, e.confidence, e.recall_hits, e.recall_misses
FROM ({arms} ORDER BY score, id DESC LIMIT ?) AS c
JOIN graph_entity AS e ON e.id = c.id
ORDER BY c.score, c.id DESC
"""
# Params: one ' term ' per query term, then ids. Result per row: rowid, then for each term
# whether the row's index text holds it. The index text is the terms separated by single
# spaces (graph.search.text.index_text), so a padded `instr` is an exact term test, done in
# SQLite without sending every candidate's text to Python to be split.
_SQL_TERMS_PRESENT = (
    "SELECT rowid, {tests} FROM (SELECT rowid, ' ' || head || ' ' || body || ' ' AS t"
    " FROM {table} WHERE rowid IN ({ids}))"
)
# Params: now (naive UTC), ids, the filters' (EntityFilters.sql). Result per active entity
# among the ids: the ranking inputs of _SQL_FTS_CANDIDATES with a bm25 of 0 (no keyword
# evidence).
# `+e.status`: with the (status, updated_at) index the planner walked every active row
# (14 ms at 100k) instead of looking the ids up.
_SQL_RANKING_INPUTS = """
SELECT e.id, 0.0,
       julianday(?) - julianday(max(e.updated_at, coalesce(e.last_accessed_at, e.updated_at))),
       e.access_count, e.confidence, e.recall_hits, e.recall_misses
FROM graph_entity AS e
WHERE e.id IN ({ids}) AND +e.status = 'active' {filters}
"""
# Params: ids. Result: entity id, tag name, for the tags of these ids' active entities.
_SQL_ACTIVE_TAGS_OF = """
SELECT t.entity_id, t.name FROM graph_tag AS t JOIN graph_entity AS e ON e.id = t.entity_id
WHERE t.entity_id IN ({ids}) AND +e.status = 'active'
"""


@dataclass(frozen=True, slots=True)
class KeywordHit:
    entity_id: int
    bm25: float
    days_since_touch: float
    access_count: int
    confidence: float
    recall_hits: int
    recall_misses: int


class KeywordRetrieval(models.Manager):
    """Recall's keyword-index reads, a part of Entity.objects."""

    # The statements ranking_inputs and session_neighbours run (another database's
    # implementation gives its dialect's).
    sql_ranking_inputs = _SQL_RANKING_INPUTS
    sql_active_tags_of = _SQL_ACTIVE_TAGS_OF

    def indexed_row_count(self, *, archived: bool = False) -> int:
        """Rows in the live index (active entities) or the archived one: O(1), from FTS5's
        averages record, where count(*) scans docsize (graph.storage.term_frequencies)."""
        table = ARCHIVED_FTS if archived else LIVE_FTS
        return term_frequencies.averages_row_count(term_frequencies.index_state(table))

    def term_stats(
        self, terms: Sequence[str], *, archived: bool = False
    ) -> tuple[dict[str, int], int]:
        """(number of entities in the live, or archived, index containing each term, rows in
        that index), the frequencies kept in this process until the index changes
        (graph.storage.term_frequencies)."""
        if archived:
            return term_frequencies.doc_freqs(ARCHIVED_FTS, ARCHIVED_VOCAB, terms)
        return term_frequencies.doc_freqs(LIVE_FTS, VOCAB, terms)

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
        """Best `limit` keyword matches by bm25 (newest first on ties), with ranking inputs.

        The filters (a namespace, a tag, `project`'s scope: graph.storage.project_scope) are
        tested on every match before the LIMIT, so a filtered recall ranks the best matches
        among the memories it keeps, never a filtered remainder of the whole database's best.
        (Reading the best matches of all deeper and testing only those was measured no
        faster on 10k bench memories: bm25 scores every match either way, and a scope holding
        a quarter of the memories needed more than 4 × `limit` of them.)
        `match` must come from graph.search.text.match_expression (quoted terms only).
        With include_archived, archived rows are searched in their own table and merged;
        their bm25 uses that table's statistics, which is close enough to order a merge.
        `trust` keeps facts or hypotheses only; `unexpired_at` drops the memories expired by
        then (pass it only when `expired_exist`: the filter joins every match to its entity).
        `newest` ranks only that many of the newest matches the filters keep (the highest ids;
        in each table with include_archived) rather than every match: see
        graph.search.text.match_window.
        """
        tables = [LIVE_FTS, ARCHIVED_FTS] if include_archived else [LIVE_FTS]
        parts: list[str] = []
        params: list[object] = [db_time(now)]
        filter_sql, filter_params = EntityFilters(
            namespace, tag, project, trust, unexpired_at
        ).sql()
        for table in tables:
            join = f"JOIN graph_entity AS e ON e.id = {table}.rowid" if filter_sql else ""
            arm = _SQL_FTS_ARM if newest is None else _SQL_FTS_ARM_NEWEST
            parts.append(
                arm.format(table=table, weights=BM25_WEIGHTS, join=join, filters=filter_sql)
            )
            params.extend([match, *filter_params])
            if newest is not None:
                params.append(newest)
        sql = _SQL_FTS_CANDIDATES.format(arms=" UNION ALL ".join(parts))
        params.append(limit)
        with cursor() as cur:
            cur.execute(sql, params)
            return [KeywordHit(*row) for row in cur.fetchall()]

    def terms_present(
        self, entity_ids: Sequence[int], terms: Sequence[str], *, include_archived: bool = False
    ) -> dict[int, set[str]]:
        """Which of these index terms each of these entities holds (head and body together)."""
        if not entity_ids or not terms:
            return {}
        out: dict[int, set[str]] = {}
        tables = [LIVE_FTS, ARCHIVED_FTS] if include_archived else [LIVE_FTS]
        tests = ", ".join(["instr(t, ?) > 0"] * len(terms))
        params = [f" {term} " for term in terms] + list(entity_ids)
        with cursor() as cur:
            for table in tables:
                cur.execute(
                    _SQL_TERMS_PRESENT.format(
                        tests=tests, table=table, ids=placeholders(len(entity_ids))
                    ),
                    params,
                )
                for entity_id, *held in cur.fetchall():
                    out[entity_id] = {term for term, h in zip(terms, held, strict=True) if h}
        return out

    def ranking_inputs(
        self,
        entity_ids: Sequence[int],
        *,
        now: datetime,
        filters: EntityFilters | None = None,
    ) -> list[KeywordHit]:
        """Ranking inputs of these active entities (for candidates found by vectors),
        filtered like fts_candidates; bm25 is 0."""
        if not entity_ids:
            return []
        where, filter_params = (filters or EntityFilters()).sql()
        params: list[object] = [db_time(now), *entity_ids, *filter_params]
        sql = self.sql_ranking_inputs.format(ids=placeholders(len(entity_ids)), filters=where)
        with cursor() as cur:
            cur.execute(sql, params)
            return [KeywordHit(*row) for row in cur.fetchall()]

    def session_neighbours(
        self, entity_ids: Sequence[int], *, reach: int = 1, beyond: bool = False
    ) -> dict[int, list[int]]:
        """For each of these entities that has tags, the active ones written up to `reach`
        writes before and after it (ids that far apart) in an unbroken run of memories that
        carry exactly its tags: the turns around it of one conversation or session, stored
        one after another. A memory with other tags, or none (forgotten), between them ends
        the run. Only those among `entity_ids` unless `beyond` (recall lifts its candidates
        by the ones among them, and brings in the turns around its best few:
        graph/ops/recall/adjacent.py); the run is followed through the stored memories
        either way."""
        if not entity_ids:
            return {}
        steps = range(1, reach + 1)
        given = set(entity_ids)
        if beyond:
            probe = given | {i + s * d for i in given for d in steps for s in (-1, 1)}
        else:
            # Among the given only: their own tags, and those of the memories between two of
            # them within reach (the run must be unbroken), not every id around each one.
            probe = given | {
                between
                for i in given
                for d in steps[1:]
                if i + d in given
                for between in range(i + 1, i + d)
            }
        tags: dict[int, set[str]] = {}
        # A recall's candidates are a few dozen: far below SQLite's variable limit.
        with cursor() as cur:
            cur.execute(self.sql_active_tags_of.format(ids=placeholders(len(probe))), sorted(probe))
            for entity_id, name in cur.fetchall():
                tags.setdefault(entity_id, set()).add(name)
        out: dict[int, list[int]] = {}
        for i in entity_ids:
            if i not in tags:
                continue
            around: list[int] = []
            for sign in (-1, 1):
                for d in steps:
                    j = i + sign * d
                    if tags.get(j) != tags[i]:
                        break
                    if beyond or j in given:
                        around.append(j)
            out[i] = sorted(around)
        return out
