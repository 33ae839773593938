"""Raw SQL reads and writes of the entity tables on the hot paths (recall's documents,
remember's inserts, access counts, recall-effectiveness counts): the ORM costs more than these
queries take."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connections, models

from graph.search.text import embedding_text
from graph.storage.cursor import cursor, db_time, placeholders

DOCUMENTS_CHUNK = 10_000  # ids per statement of documents()

# Params: ids. Result: the fields recall returns for those entities; times as ISO 8601 text
# (CAST: no declared type, so the driver hands back the stored text without parsing it; a
# NULL time stays NULL). The trust columns (migration 0005) follow the metadata.
_SQL_ENTITY_FIELDS = """
SELECT id, name, title, type, namespace, status, confidence,
       replace(CAST(created_at AS TEXT), ' ', 'T') || 'Z',
       replace(CAST(updated_at AS TEXT), ' ', 'T') || 'Z',
       metadata,
       trust, source, invalidation_tag, invalidation_condition, kind, parent_id, hop_count,
       replace(CAST(last_observed_at AS TEXT), ' ', 'T') || 'Z',
       replace(CAST(expires_at AS TEXT), ' ', 'T') || 'Z'
FROM graph_entity WHERE id IN ({ids})
"""
# Params: a JSON-quoted metadata key. Result: ids of the entities whose metadata holds that key
# with the JSON value true (https://sqlite.org/json1.html#jtype).
_SQL_IDS_MARKED = "SELECT id FROM graph_entity WHERE json_type(metadata, '$.' || ?) = 'true'"
# Params: ids. Result: id, name, title, status.
SQL_ENTITY_STATES = "SELECT id, name, title, status FROM graph_entity WHERE id IN ({ids})"
# Params: ids. Result: entity_id, observation text, in insertion order.
SQL_OBSERVATIONS_OF = (
    "SELECT entity_id, text FROM graph_observation WHERE entity_id IN ({ids}) ORDER BY id"
)
# Params: ids. Result: entity_id, tag, in insertion order.
SQL_TAGS_OF = "SELECT entity_id, name FROM graph_tag WHERE entity_id IN ({ids}) ORDER BY id"
# Params: ids. Result: from id, from name, to id, to name, type of their outgoing relations.
_SQL_RELATIONS_FROM = """
SELECT r.from_entity_id, f.name, r.to_entity_id, t.name, r.type
FROM graph_relation AS r
JOIN graph_entity AS f ON f.id = r.from_entity_id
JOIN graph_entity AS t ON t.id = r.to_entity_id
WHERE r.from_entity_id IN ({ids})
ORDER BY r.id
"""
# Params per row: entity id, text, created_at.
_SQL_OBSERVATION_INSERT = (
    "INSERT INTO graph_observation (entity_id, text, created_at) VALUES (?, ?, ?)"
)
# Params per row: entity id, tag.
_SQL_TAG_INSERT = "INSERT INTO graph_tag (entity_id, name) VALUES (?, ?)"
# Params per row: accesses to add, time of the last one (twice), id. Leaves updated_at alone
# (a read is not a write); never moves last_accessed_at backwards.
_SQL_ADD_ACCESSES = """
UPDATE graph_entity
SET access_count = access_count + ?,
    last_accessed_at = CASE WHEN last_accessed_at IS NULL OR last_accessed_at < ? THEN ?
                            ELSE last_accessed_at END
WHERE id = ?
"""

# Params: ids. Result: those of the ids that are entities (any status).
_SQL_EXISTING_IDS = "SELECT id FROM graph_entity WHERE id IN ({ids})"
# Params per row: hits to add, misses to add (negative when a miss became a hit), id. Leaves
# updated_at and last_accessed_at alone: feedback is neither a write of content nor a read.
_SQL_ADD_IMPACT = """
UPDATE graph_entity
SET recall_hits = recall_hits + ?, recall_misses = max(0, recall_misses + ?)
WHERE id = ?
"""


class DocumentQueries(models.Manager):
    """The entity-table half of Entity.objects."""

    # The statements in SQLite's dialect (graph/storage/postgres/documents.py has PostgreSQL's).
    _sql_entity_fields = _SQL_ENTITY_FIELDS
    _sql_add_impact = _SQL_ADD_IMPACT

    def embedding_texts(self, entity_ids: Sequence[int]) -> dict[int, str]:
        """The text each of these entities' vector is built from (active entities only)."""
        ids = sorted(set(entity_ids))
        if not ids:
            return {}
        marks = placeholders(len(ids))
        with cursor() as cur:
            cur.execute(SQL_ENTITY_STATES.format(ids=marks), ids)
            entities = [row for row in cur.fetchall() if row[3] == "active"]
            cur.execute(SQL_OBSERVATIONS_OF.format(ids=marks), ids)
            bodies: dict[int, list[str]] = {}
            for entity_id, text in cur.fetchall():
                bodies.setdefault(entity_id, []).append(text)
        return {
            entity_id: embedding_text(name, title, bodies.get(entity_id, []))
            for entity_id, name, title, _ in entities
        }

    # --- hot-path reads (raw SQL: the ORM costs more than the queries themselves) ---------

    def documents(self, entity_ids: Sequence[int]) -> list[EntityDocument]:
        """Full recall documents of these entities, in the order given."""
        ids = list(entity_ids)
        docs: dict[int, EntityDocument] = {}
        # A whole-graph read (GET /v1/graph) asks for every entity: in chunks, as one
        # statement binds at most 32,766 values (SQLITE_MAX_VARIABLE_NUMBER,
        # https://sqlite.org/limits.html#max_variable_number).
        for start in range(0, len(ids), DOCUMENTS_CHUNK):
            self._documents_into(docs, ids[start : start + DOCUMENTS_CHUNK])
        return [docs[i] for i in ids if i in docs]

    def _documents_into(self, docs: dict[int, EntityDocument], ids: list[int]) -> None:
        marks = placeholders(len(ids))
        with cursor() as cur:
            cur.execute(self._sql_entity_fields.format(ids=marks), ids)
            rows = cur.fetchall()
            # One parse for every row's metadata: a json.loads call per entity cost a fifth of
            # a whole-graph read.
            metadata = json.loads("[" + ",".join(row[9] or "{}" for row in rows) + "]")
            for row, meta in zip(rows, metadata, strict=True):
                entity_id, name, title, type_, namespace, status, confidence, created, updated = (
                    row[:9]
                )
                docs[entity_id] = EntityDocument(
                    entity_id,
                    name,
                    title,
                    type_,
                    namespace,
                    status,
                    confidence,
                    created,
                    updated,
                    metadata=meta,
                    trust=row[10],
                    source=row[11],
                    invalidation_tag=row[12],
                    invalidation_condition=row[13],
                    kind=row[14],
                    parent_id=row[15],
                    hop_count=row[16],
                    last_observed_at=row[17],
                    expires_at=row[18],
                )
            cur.execute(SQL_OBSERVATIONS_OF.format(ids=marks), ids)
            for entity_id, body in cur.fetchall():
                docs[entity_id].observations.append(body)
            cur.execute(SQL_TAGS_OF.format(ids=marks), ids)
            for entity_id, name in cur.fetchall():
                docs[entity_id].tags.append(name)
            cur.execute(_SQL_RELATIONS_FROM.format(ids=marks), ids)
            for from_id, from_name, to_id, to_name, rel_type in cur.fetchall():
                docs[from_id].relations.append((from_name, to_id, to_name, rel_type))

    def ids_marked(self, key: str) -> list[int]:
        """Ids of the entities whose metadata holds `key: true` — JSON true only, not 1 or
        "true" (the ORM's `metadata__key=True` matches 1 as well)."""
        with cursor() as cur:
            cur.execute(_SQL_IDS_MARKED, [json.dumps(key)])
            return [row[0] for row in cur.fetchall()]

    # --- hot-path writes (the ORM compiles more SQL than remember spends in SQLite) ------

    def id_for_name(self, name: str) -> int | None:
        with cursor() as cur:
            cur.execute("SELECT id FROM graph_entity WHERE name = ?", [name])
            row = cur.fetchone()
        return row[0] if row else None

    def insert_new(self, entity: Any) -> None:
        """INSERT an unsaved entity and give it its id, as `save()` would (~5x cheaper).

        Values go through each field's own get_db_prep_save, so they are stored exactly as
        the ORM stores them (JSON text, naive UTC times).
        """
        # The connection itself, resolved once: each attribute of the `connection` proxy is a
        # lookup through asgiref's thread-local, and every field's preparation reads several.
        db = connections[self.db]
        fields, sql = _insert_statement(self.model, db)
        values = [f.get_db_prep_save(f.pre_save(entity, True), db) for f in fields]
        with cursor() as cur:
            entity.pk = self._insert_row(cur, sql, values)
        entity._state.adding = False
        entity._state.db = self.db

    def _insert_row(self, cur: Any, sql: str, values: list[Any]) -> int:
        """Run the INSERT `sql` and return the new row's id."""
        cur.execute(sql, values)
        return int(cur.lastrowid)

    def observations_append(self, entity_id: int, texts: Sequence[str], when: datetime) -> None:
        if texts:
            with cursor() as cur:
                at = db_time(when)
                cur.executemany(_SQL_OBSERVATION_INSERT, [(entity_id, t, at) for t in texts])

    def tags_append(self, entity_id: int, names: Sequence[str]) -> None:
        if names:
            with cursor() as cur:
                cur.executemany(_SQL_TAG_INSERT, [(entity_id, name) for name in names])

    def accesses_add(self, counts: dict[int, int], last_seen: dict[int, datetime]) -> None:
        """Add recall accesses: id -> how many, id -> when the last one happened."""
        rows = []
        for entity_id, n in counts.items():
            at = db_time(last_seen[entity_id])
            rows.append((n, at, at, entity_id))
        with cursor() as cur:
            cur.executemany(_SQL_ADD_ACCESSES, rows)

    def existing_ids(self, entity_ids: Sequence[int]) -> set[int]:
        """Those of these ids that are entities (active or archived)."""
        ids = sorted(set(entity_ids))
        if not ids:
            return set()
        with cursor() as cur:
            cur.execute(_SQL_EXISTING_IDS.format(ids=placeholders(len(ids))), ids)
            return {row[0] for row in cur.fetchall()}

    def impact_add(self, deltas: dict[int, tuple[int, int]]) -> None:
        """Add to recall_hits / recall_misses: id -> (hits, misses); misses may be negative
        (a miss that a later citation in the same session turned into a hit)."""
        rows = [(hits, misses, entity_id) for entity_id, (hits, misses) in deltas.items()]
        if rows:
            with cursor() as cur:
                cur.executemany(self._sql_add_impact, rows)


@dataclass(slots=True)
class EntityDocument:
    id: int
    name: str
    title: str | None
    type: str
    namespace: str
    status: str
    confidence: float
    created_at: str  # ISO 8601, UTC
    updated_at: str
    metadata: dict[str, Any]
    observations: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    # (from name, to id, to name, type)
    relations: list[tuple[str, int, str, str]] = field(default_factory=list)
    # Provenance and trust (graph/ops/kit/trust/ reads them; times as ISO 8601 text, UTC).
    trust: str = "hypothesis"
    source: str | None = None
    invalidation_tag: str = ""
    invalidation_condition: str = ""
    kind: str = "semantic"
    parent_id: int | None = None
    hop_count: int = 0
    last_observed_at: str | None = None
    expires_at: str | None = None


_INSERT_STATEMENTS: dict[tuple[type[models.Model], str], tuple[list[Any], str]] = {}


def _insert_statement(model: type[models.Model], db: Any) -> tuple[list[Any], str]:
    """The fields insert_new writes and its INSERT, built once per model and database."""
    key = (model, db.alias)
    statement = _INSERT_STATEMENTS.get(key)
    if statement is None:
        fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        sql = "INSERT INTO {table} ({columns}) VALUES ({marks})".format(
            table=model._meta.db_table,
            columns=", ".join(db.ops.quote_name(f.column) for f in fields),
            marks=placeholders(len(fields)),
        )
        statement = _INSERT_STATEMENTS[key] = (fields, sql)
    return statement
