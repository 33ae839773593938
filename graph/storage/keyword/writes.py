"""Keeping the keyword index equal to the entity tables: each write's transaction rewrites the
rows of the entities it touched, and an entity that leaves search loses its vectors at once."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import models, transaction

from graph.search.text import embedding_text, text_hash
from graph.storage import vector_index
from graph.storage.cursor import cursor, placeholders
from graph.storage.documents import SQL_ENTITY_STATES, SQL_OBSERVATIONS_OF, SQL_TAGS_OF
from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS, by_entity, index_columns

# Params per row: hash, id.
_SQL_SET_EMBEDDING_HASH = "UPDATE graph_entity SET embedding_hash = ? WHERE id = ?"
# Params: ids. Result: the generations holding a vector of any of them.
_SQL_VECTOR_GENERATIONS = (
    "SELECT DISTINCT generation FROM graph_entityvector WHERE entity_id IN ({ids})"
)
_SQL_FTS_DELETE = "DELETE FROM {table} WHERE rowid IN ({ids})"
# Params: id, head, body (index_text output).
_SQL_FTS_INSERT = "INSERT INTO {table} (rowid, head, body) VALUES (?, ?, ?)"

# What one entity's index rows are written from: id, name, title, status, observations and
# tags (each in insertion order).


IndexState = tuple[int, str, str | None, str, Sequence[str], Sequence[str]]


def stamp_embedding_hashes(cur: Any, states: Sequence[IndexState]) -> list[int]:
    """Set the embedding_hash of these entities from their new text; returns the ids of the
    states not active."""
    cur.executemany(
        _SQL_SET_EMBEDDING_HASH,
        [
            (text_hash(embedding_text(name, title, observations)), entity_id)
            for entity_id, name, title, _status, observations, _tags in states
        ],
    )
    return [state[0] for state in states if state[3] != "active"]


class KeywordIndexWrites(models.Manager):
    """The keyword index's writes, a part of Entity.objects."""

    def _index_write(self, cur: Any, ids: Sequence[int], states: Sequence[IndexState]) -> list[int]:
        """Replace the keyword-index rows of `ids` by those of `states` (the ones that still
        exist) and stamp their embedding_hash; returns the ids of the states not active."""
        for table in (LIVE_FTS, ARCHIVED_FTS):
            cur.execute(_SQL_FTS_DELETE.format(table=table, ids=placeholders(len(ids))), ids)
        for entity_id, name, title, status, observations, tags in states:
            table = LIVE_FTS if status == "active" else ARCHIVED_FTS
            cur.execute(
                _SQL_FTS_INSERT.format(table=table),
                [entity_id, *index_columns(name, title, observations, tags)],
            )
        return stamp_embedding_hashes(cur, states)

    def _index_clear(self, cur: Any) -> None:
        """Empty both keyword indexes (index_rebuild's first step, in its transaction)."""
        for table in (LIVE_FTS, ARCHIVED_FTS):
            cur.execute(f"DELETE FROM {table}")

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
            bodies = by_entity(cur.fetchall())
            cur.execute(SQL_TAGS_OF.format(ids=marks), ids)
            tags = by_entity(cur.fetchall())
            found = {row[0] for row in entities}
            # Deleted entities, then the archived ones: their vectors go.
            unsearchable = [entity_id for entity_id in ids if entity_id not in found]
            unsearchable += self._index_write(
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
            self._index_write(
                cur, [entity_id], [(entity_id, name, title, "active", observations, tags)]
            )

    def index_rebuild(self) -> int:
        """Rebuild both keyword indexes from the entity tables, in one transaction; returns
        entities indexed."""
        with transaction.atomic():
            with cursor() as cur:
                self._index_clear(cur)
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
