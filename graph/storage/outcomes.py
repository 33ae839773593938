"""Raw SQL of the session-outcome ledger (graph.models.SessionOutcome): which memories a
session was returned, cited, or returned and did not cite. graph/ops/feedback.py holds the rule
that turns these rows into the entities' recall_hits / recall_misses; this module only reads
and writes rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from django.db import connection, models

from graph.storage.cursor import cursor, db_time, placeholders

# Params per row: session, entity id, created_at, updated_at. A row already there keeps its
# outcome: a memory cited before a recall's batched flush stays a hit. PostgreSQL has no
# INSERT OR IGNORE; SQLite reads its ON CONFLICT DO NOTHING too, but a quarter slower.
_SQL_RETURNED_INSERT = """
INSERT OR IGNORE INTO graph_sessionoutcome (session_id, entity_id, outcome, created_at, updated_at)
VALUES (?, ?, 'returned', ?, ?)
"""
_SQL_RETURNED_INSERT_POSTGRES = """
INSERT INTO graph_sessionoutcome (session_id, entity_id, outcome, created_at, updated_at)
VALUES (?, ?, 'returned', ?, ?)
ON CONFLICT (session_id, entity_id) DO NOTHING
"""
# Params: session, ids. Result: entity_id, outcome of those of the ids the session has a row for.
_SQL_OUTCOMES_OF = """
SELECT entity_id, outcome FROM graph_sessionoutcome
WHERE session_id = ? AND entity_id IN ({ids})
"""
# Params: session. Result: ids the session was returned and has no verdict on yet.
_SQL_RETURNED_OF = """
SELECT entity_id FROM graph_sessionoutcome
WHERE session_id = ? AND outcome = 'returned'
ORDER BY entity_id
"""
# Params per row: session, entity id, outcome, created_at, updated_at. An UPSERT
# (https://sqlite.org/lang_upsert.html) on the (session_id, entity_id) unique constraint.
_SQL_OUTCOME_SET = """
INSERT INTO graph_sessionoutcome (session_id, entity_id, outcome, created_at, updated_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (session_id, entity_id) DO UPDATE
SET outcome = excluded.outcome, updated_at = excluded.updated_at
"""
# Params: cut-off time. Removes the rows whose outcome last changed before it.
_SQL_PRUNE = "DELETE FROM graph_sessionoutcome WHERE updated_at < ?"


class OutcomeManager(models.Manager):
    """SessionOutcome.objects."""

    def returned_add(self, returned: Mapping[tuple[str, int], datetime]) -> None:
        """Note (session, entity id) -> when a recall returned it; existing rows are kept."""
        rows = []
        for (session_id, entity_id), when in returned.items():
            at = db_time(when)
            rows.append((session_id, entity_id, at, at))
        if rows:
            postgres = connection.vendor == "postgresql"
            with cursor() as cur:
                cur.executemany(
                    _SQL_RETURNED_INSERT_POSTGRES if postgres else _SQL_RETURNED_INSERT, rows
                )

    def outcomes_of(self, session_id: str, entity_ids: Sequence[int]) -> dict[int, str]:
        """entity id -> outcome, for those of these ids the session has a row for."""
        ids = sorted(set(entity_ids))
        if not ids:
            return {}
        with cursor() as cur:
            cur.execute(_SQL_OUTCOMES_OF.format(ids=placeholders(len(ids))), [session_id, *ids])
            return {entity_id: outcome for entity_id, outcome in cur.fetchall()}

    def returned_ids(self, session_id: str) -> list[int]:
        """The ids returned to the session that it has no verdict on yet."""
        with cursor() as cur:
            cur.execute(_SQL_RETURNED_OF, [session_id])
            return [row[0] for row in cur.fetchall()]

    def outcomes_set(self, session_id: str, outcomes: Mapping[int, str], when: datetime) -> None:
        """Record entity id -> outcome for the session, replacing what each row said."""
        at = db_time(when)
        rows = [(session_id, entity_id, outcome, at, at) for entity_id, outcome in outcomes.items()]
        if rows:
            with cursor() as cur:
                cur.executemany(_SQL_OUTCOME_SET, rows)

    def prune(self, before: datetime) -> int:
        """Remove the rows whose outcome last changed before `before`; returns how many."""
        with cursor() as cur:
            cur.execute(_SQL_PRUNE, [db_time(before)])
            return int(cur.rowcount)
