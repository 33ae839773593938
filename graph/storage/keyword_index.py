"""Raw SQL for the keyword (FTS5) and vector (vec0) indexes.

Two FTS5 tables share one shape (head: name and title; body: observations and tags), keyed by
entity id:
`graph_entity_fts` holds active entities, `graph_entity_fts_archived` archived ones. Keeping
archived rows out of the live table means ordinary recall can never surface them, and the
fts5vocab table over the live index gives the per-term document counts that the
document-frequency guard needs, counted over active rows only, in one index lookup per term.

Every column holds `graph.search.text.index_text(...)` output: memesh tokenizes in Python and FTS5's
`ascii` tokenizer only splits on the spaces between those tokens. The tables store that text
(they are not contentless): only then does deleting a row also take it out of the bm25
statistics, which keeps the index equal to a rebuild (migration 0002 says more).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import models, transaction

from graph.search.text import embedding_text, index_text, text_hash
from graph.storage import term_frequencies, vector_index
from graph.storage.cursor import change_token, cursor, db_time, placeholders
from graph.storage.documents import SQL_ENTITY_STATES, SQL_OBSERVATIONS_OF, SQL_TAGS_OF
from graph.storage.project_scope import project_scope_condition, project_scope_sql

LIVE_FTS = "graph_entity_fts"
ARCHIVED_FTS = "graph_entity_fts_archived"
VOCAB = "graph_entity_fts_vocab"
ARCHIVED_VOCAB = "graph_entity_fts_archived_vocab"

# Column weights for bm25(): head (name + title), body (observations + tags).
# Name and title label the memory, written to be read and found, so a word there is stronger
# evidence than the same word somewhere in its observations. Tags share the body's weight:
# the common ones (project:x) already get a low IDF from bm25 itself.
BM25_WEIGHTS = "2.5, 1.0"

# Params per row: hash, id.
_SQL_SET_EMBEDDING_HASH = "UPDATE graph_entity SET embedding_hash = ? WHERE id = ?"
# Params: ids. Result: the generations holding a vector of any of them.
_SQL_VECTOR_GENERATIONS = (
    "SELECT DISTINCT generation FROM graph_entityvector WHERE entity_id IN ({ids})"
)
_SQL_FTS_DELETE = "DELETE FROM {table} WHERE rowid IN ({ids})"
# Params: id, head, body (index_text output).
_SQL_FTS_INSERT = "INSERT INTO {table} (rowid, head, body) VALUES (?, ?, ?)"


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
# Params: ids. Result: id and the indexed (already tokenized) text of each row.
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
# Result: ids of the active entities the filters keep (the scope of a filtered recall).
_SQL_SCOPED_IDS = "SELECT e.id FROM graph_entity AS e WHERE +e.status = 'active' {filters}"


# --- consistency checks (graph/indexing/consistency.py) ------------------------------------------
# Result: ids of entities without a row in the keyword table their status puts them in.
# FTS5 answers `rowid = ?` with a point lookup, so this is one index probe per entity.
_SQL_FTS_MISSING = f"""
SELECT e.id FROM graph_entity AS e
WHERE (e.status = 'active'
       AND NOT EXISTS (SELECT 1 FROM {LIVE_FTS} AS f WHERE f.rowid = e.id))
   OR (e.status != 'active'
       AND NOT EXISTS (SELECT 1 FROM {ARCHIVED_FTS} AS a WHERE a.rowid = e.id))
ORDER BY e.id
"""
# Params: the status the table is for. Result: rowid and entity status (NULL: no such entity)
# of each row of {table} whose entity is missing or has another status.
_SQL_FTS_MISPLACED = """
SELECT f.rowid, e.status FROM {table} AS f
LEFT JOIN graph_entity AS e ON e.id = f.rowid
WHERE e.id IS NULL OR e.status != ?
ORDER BY f.rowid
"""
# Params: after id, limit. Result per entity (id order): id, name, title, status, and the head
# and body stored in the table its status puts it in (NULL when that row is missing).
_SQL_INDEXED_TEXT_PAGE = f"""
SELECT e.id, e.name, e.title, e.status,
       coalesce(f.head, a.head), coalesce(f.body, a.body)
FROM graph_entity AS e
LEFT JOIN {LIVE_FTS} AS f ON f.rowid = e.id AND e.status = 'active'
LEFT JOIN {ARCHIVED_FTS} AS a ON a.rowid = e.id AND e.status != 'active'
WHERE e.id > ?
ORDER BY e.id
LIMIT ?
"""
# Params: first id, last id. Result: entity_id, text of the observations (or tags) in range.
_SQL_OBSERVATIONS_IN_RANGE = (
    "SELECT entity_id, text FROM graph_observation WHERE entity_id BETWEEN ? AND ? ORDER BY id"
)
_SQL_TAGS_IN_RANGE = (
    "SELECT entity_id, name FROM graph_tag WHERE entity_id BETWEEN ? AND ? ORDER BY id"
)


def index_columns(
    name: str, title: str | None, observations: Sequence[str], tags: Sequence[str]
) -> tuple[str, str]:
    """The (head, body) an entity's keyword-index row holds: what index_sync writes and the
    consistency checker expects."""
    return (
        index_text(f"{name}\n{title or ''}"),
        index_text("\n".join([*observations, *tags])),
    )


# What one entity's index rows are written from: id, name, title, status, observations and
# tags (each in insertion order).
_IndexState = tuple[int, str, str | None, str, Sequence[str], Sequence[str]]


def _index_write(cur: Any, ids: Sequence[int], states: Sequence[_IndexState]) -> list[int]:
    """Replace the keyword-index rows of `ids` by those of `states` (the ones that still
    exist) and stamp their embedding_hash; returns the ids of the states not active."""
    for table in (LIVE_FTS, ARCHIVED_FTS):
        cur.execute(_SQL_FTS_DELETE.format(table=table, ids=placeholders(len(ids))), ids)
    inactive = []
    hashes = []
    for entity_id, name, title, status, observations, tags in states:
        table = LIVE_FTS if status == "active" else ARCHIVED_FTS
        if status != "active":
            inactive.append(entity_id)
        hashes.append((text_hash(embedding_text(name, title, observations)), entity_id))
        cur.execute(
            _SQL_FTS_INSERT.format(table=table),
            [entity_id, *index_columns(name, title, observations, tags)],
        )
    cur.executemany(_SQL_SET_EMBEDDING_HASH, hashes)
    return inactive


@dataclass(frozen=True, slots=True)
class IndexedText:
    """An entity's source fields beside the keyword-index text stored for it."""

    entity_id: int
    name: str
    title: str | None
    status: str
    head: str | None  # None: no row in the table its status puts it in
    body: str | None
    observations: list[str]
    tags: list[str]


@dataclass(frozen=True, slots=True)
class KeywordHit:
    entity_id: int
    bm25: float
    days_since_touch: float
    access_count: int
    confidence: float
    recall_hits: int
    recall_misses: int


class KeywordIndexQueries(models.Manager):
    """The keyword index half of Entity.objects."""

    # --- index maintenance -------------------------------------------------------------

    def index_sync(self, entity_ids: Iterable[int]) -> None:
        """Rewrite the keyword-index rows of these entities from their current state.

        Call inside the write's transaction: the index then commits or rolls back with it.
        An active entity goes to the live table, an archived one to the archived table, a
        deleted one to neither. The entity's embedding_hash is set from its new text: an
        active entity keeps its old vector (the nearest thing to right) until the embedding
        worker replaces it; an archived or deleted one loses its vectors here, at once.
        """
        ids = sorted(set(entity_ids))
        if not ids:
            return
        marks = placeholders(len(ids))
        with cursor() as cur:
            cur.execute(SQL_ENTITY_STATES.format(ids=marks), ids)
            entities = cur.fetchall()
            cur.execute(SQL_OBSERVATIONS_OF.format(ids=marks), ids)
            bodies: dict[int, list[str]] = {}
            for entity_id, text in cur.fetchall():
                bodies.setdefault(entity_id, []).append(text)
            cur.execute(SQL_TAGS_OF.format(ids=marks), ids)
            tags: dict[int, list[str]] = {}
            for entity_id, name in cur.fetchall():
                tags.setdefault(entity_id, []).append(name)
            found = {row[0] for row in entities}
            # Deleted entities, then the archived ones: their vectors go.
            unsearchable = [entity_id for entity_id in ids if entity_id not in found]
            unsearchable += _index_write(
                cur,
                ids,
                [
                    (
                        entity_id,
                        name,
                        title,
                        status,
                        bodies.get(entity_id, []),
                        tags.get(entity_id, []),
                    )
                    for entity_id, name, title, status in entities
                ],
            )
        if unsearchable:
            self.vectors_drop(unsearchable)

    def index_new(
        self,
        entity_id: int,
        name: str,
        title: str | None,
        observations: Sequence[str],
        tags: Sequence[str],
    ) -> None:
        """index_sync of an active entity this transaction has just inserted, with these
        observations and tags (in the order they were inserted): the same rows, written from
        what the caller holds instead of read back (remember's create path: three reads fewer)."""
        with cursor() as cur:
            _index_write(cur, [entity_id], [(entity_id, name, title, "active", observations, tags)])

    def index_rebuild(self) -> int:
        """Rebuild both keyword indexes from the entity tables, in one transaction; returns
        entities indexed."""
        with transaction.atomic():
            with cursor() as cur:
                for table in (LIVE_FTS, ARCHIVED_FTS):
                    cur.execute(f"DELETE FROM {table}")
            ids = list(self.values_list("id", flat=True))
            for start in range(0, len(ids), 500):
                self.index_sync(ids[start : start + 500])
        return len(ids)

    def vectors_drop(self, entity_ids: Sequence[int]) -> None:
        """Remove these entities' vectors from every generation (live and staging)."""
        with cursor() as cur:
            cur.execute(
                _SQL_VECTOR_GENERATIONS.format(ids=placeholders(len(entity_ids))), entity_ids
            )
            generations = [row[0] for row in cur.fetchall()]
        for generation in generations:
            vector_index.vectors_remove(generation, entity_ids)

    # --- consistency checks (graph/indexing/consistency.py) --------------------------------------

    def fts_missing_ids(self) -> list[int]:
        """Entities without a row in the keyword table their status puts them in."""
        with cursor() as cur:
            cur.execute(_SQL_FTS_MISSING)
            return [row[0] for row in cur.fetchall()]

    def fts_misplaced_rows(self, *, archived: bool) -> list[tuple[int, str | None]]:
        """(rowid, entity status or None when there is no such entity) of the rows of the
        live (or archived) table that do not belong there."""
        table = ARCHIVED_FTS if archived else LIVE_FTS
        status = "archived" if archived else "active"
        with cursor() as cur:
            cur.execute(_SQL_FTS_MISPLACED.format(table=table), [status])
            return [(row[0], row[1]) for row in cur.fetchall()]

    def indexed_text_page(self, after_id: int, limit: int) -> list[IndexedText]:
        """The next `limit` entities after `after_id` (id order), each with its observations
        and tags and the keyword-index text stored for it."""
        with cursor() as cur:
            cur.execute(_SQL_INDEXED_TEXT_PAGE, [after_id, limit])
            rows = cur.fetchall()
            if not rows:
                return []
            span = [rows[0][0], rows[-1][0]]
            cur.execute(_SQL_OBSERVATIONS_IN_RANGE, span)
            bodies: dict[int, list[str]] = {}
            for entity_id, text in cur.fetchall():
                bodies.setdefault(entity_id, []).append(text)
            cur.execute(_SQL_TAGS_IN_RANGE, span)
            tags: dict[int, list[str]] = {}
            for entity_id, name in cur.fetchall():
                tags.setdefault(entity_id, []).append(name)
        return [
            IndexedText(
                entity_id,
                name,
                title,
                status,
                head,
                body,
                bodies.get(entity_id, []),
                tags.get(entity_id, []),
            )
            for entity_id, name, title, status, head, body in rows
        ]

    # --- keyword search ------------------------------------------------------------------

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
        sql = _SQL_RANKING_INPUTS.format(ids=placeholders(len(entity_ids)), filters=where)
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
            cur.execute(_SQL_ACTIVE_TAGS_OF.format(ids=placeholders(len(probe))), sorted(probe))
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

    def scoped_ids(
        self,
        *,
        namespace: str | None = None,
        tag: str | None = None,
        project: str | None = None,
        trust: str | None = None,
        unexpired_at: datetime | None = None,
    ) -> list[int]:
        """Ids of the active entities these filters keep: the vector side searches among them
        so that a filtered recall's neighbours are not spent on memories the filter drops.

        Listing a wide scope scans the entity table with index probes per row (a project's
        scope: ~10 ms at 10k memories on the shared 2-core machine, docs/recall.md), so each
        thread keeps its last answers until anything is committed to the database
        (graph.storage.cursor.change_token): a server answering recalls between writes lists
        a scope once. The list returned is the caller's to keep.
        """
        filters = EntityFilters(namespace, tag, project, trust, unexpired_at)
        token = change_token()
        kept = _scoped_ids_kept()
        if token is not None and kept.token == token and filters in kept.ids:
            return list(kept.ids[filters])
        sql, params = filters.sql()
        with cursor() as cur:
            cur.execute(_SQL_SCOPED_IDS.format(filters=sql), params)
            ids = [row[0] for row in cur.fetchall()]
        if token is not None:
            if kept.token != token or len(kept.ids) >= _SCOPED_IDS_KEPT:
                kept.token, kept.ids = token, {}
            kept.ids[filters] = tuple(ids)
        return ids

    def expired_exist(self, now: datetime) -> bool:
        """Whether any active memory has expired by `now`: only then does a recall pay for the
        expiry filter (one probe of the expires_at index)."""
        with cursor() as cur:
            cur.execute(_SQL_EXPIRED_EXIST, [db_time(now)])
            return cur.fetchone() is not None


# Filters on the entity row `e`, shared by the keyword candidates and the ranking inputs of
# the vector candidates, so both sides of recall scope alike. Params: the namespace; the tag
# (the project scope's are graph.storage.project_scope's).
_SQL_NAMESPACE_FILTER = " AND e.namespace = ?"
_SQL_TAG_FILTER = (
    " AND EXISTS (SELECT 1 FROM graph_tag AS t WHERE t.entity_id = e.id AND t.name = ?)"
)


# The trust filters (graph/ops/kit/trust/): facts or hypotheses only; memories not expired by a
# time. Params: the trust status; the time (naive UTC, as stored).
_SQL_TRUST_FILTER = " AND e.trust = ?"
_SQL_UNEXPIRED_FILTER = " AND (e.expires_at IS NULL OR e.expires_at > ?)"
# Params: now. Result: a row when an active memory has expired by then. The index on
# expires_at answers it; `+e.status` keeps the planner on that index.
_SQL_EXPIRED_EXIST = (
    "SELECT 1 FROM graph_entity AS e WHERE e.expires_at <= ? AND +e.status = 'active' LIMIT 1"
)


@dataclass
class _KeptScopes:
    """One thread's last scoped_ids answers and the change token they were read under."""

    token: tuple[object, int, int] | None = None
    ids: dict[EntityFilters, tuple[int, ...]] = field(default_factory=dict)


_SCOPED_IDS_KEPT = 16  # scopes kept per thread (one per project recalled, mostly)
_scoped_ids_local = threading.local()


def _scoped_ids_kept() -> _KeptScopes:
    kept = getattr(_scoped_ids_local, "kept", None)
    if kept is None:
        kept = _scoped_ids_local.kept = _KeptScopes()
    return kept


@dataclass(frozen=True, slots=True)
class EntityFilters:
    """What a filtered read keeps of the entity rows: a namespace, a tag, `project`'s scope
    (graph.storage.project_scope) and the trust filters; None keeps any."""

    namespace: str | None = None
    tag: str | None = None
    project: str | None = None
    # The trust filters (graph/ops/kit/trust/): facts or hypotheses only; the memories not
    # expired by this time (naive or aware UTC).
    trust: str | None = None
    unexpired_at: datetime | None = None

    def __bool__(self) -> bool:
        return any(
            v is not None
            for v in (self.namespace, self.tag, self.project, self.trust, self.unexpired_at)
        )

    def restrict(self, queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
        """The same filters on an ORM query of entities: the listings that run no search
        (recall without a query, memory_list) keep exactly what `sql` keeps."""
        qs = queryset
        if self.namespace is not None:
            qs = qs.filter(namespace=self.namespace)
        if self.tag is not None:
            qs = qs.filter(tags__name=self.tag)
        if self.project is not None:
            qs = qs.filter(project_scope_condition(self.project))
        if self.trust is not None:
            qs = qs.filter(trust=self.trust)
        if self.unexpired_at is not None:
            qs = qs.filter(
                models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=self.unexpired_at)
            )
        return qs

    def sql(self) -> tuple[str, list[object]]:
        """The SQL to append after a WHERE on `e`, and its parameters."""
        sql = ""
        params: list[object] = []
        if self.namespace is not None:
            sql += _SQL_NAMESPACE_FILTER
            params.append(self.namespace)
        if self.tag is not None:
            sql += _SQL_TAG_FILTER
            params.append(self.tag)
        if self.project is not None:
            scope_sql, scope_params = project_scope_sql(self.project)
            sql += scope_sql
            params += scope_params
        if self.trust is not None:
            sql += _SQL_TRUST_FILTER
            params.append(self.trust)
        if self.unexpired_at is not None:
            sql += _SQL_UNEXPIRED_FILTER
            params.append(db_time(self.unexpired_at))
        return sql, params
