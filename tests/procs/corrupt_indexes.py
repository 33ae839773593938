"""Break the keyword and vector indexes on purpose, one way per entity.

Imported by tests/services/test_consistency.py (in-process, on the test database) and run as a
script (`corrupt_indexes.py`) against the database named by MEMESH_HOME / MEMESH_DB_PATH: the script
seeds one entity per corruption through the remember operation, builds the live vector index
with the configured embedder, applies every corruption of COMBINABLE and prints
{"expected": {kind: [entity id, ...]}, "words": {name: word}} as JSON.

Each corruption is raw SQL, as a bug or a hand edit would leave the database: nothing here goes
through the managers that keep the indexes in step.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
MISSING_ID = 10**9  # an entity id that does not exist
# Corruptions that can all be applied to one database (each touches its own entity); dropping
# the live vec0 table would hide every bit-level one.
COMBINABLE = [
    "delete-fts-row",
    "change-fts-text",
    "live-row-for-archived",
    "vector-for-archived",
    "vector-for-missing",
    "wrong-width-vector",
    "bits-missing",
    "bits-disagree",
    "bits-orphan",
    "stray-generation",
]
ALL = [*COMBINABLE, "live-table-dropped"]
# The issue kind graph.indexing.consistency must report for each corruption.
EXPECTED_KIND = {
    "delete-fts-row": "fts.missing",
    "change-fts-text": "fts.stale_text",
    "live-row-for-archived": "fts.archived_in_live",
    "vector-for-archived": "vectors.orphan",
    "vector-for-missing": "vectors.orphan",
    "wrong-width-vector": "vectors.wrong_width",
    "bits-missing": "vectors.bits_missing",
    "bits-disagree": "vectors.bits_disagree",
    "bits-orphan": "vectors.bits_orphan",
    "stray-generation": "vectors.stray_generation",
    "live-table-dropped": "vectors.table_missing",
}
# Corruptions whose entity is archived first (through forget, as a user would).
ARCHIVED = {"live-row-for-archived", "vector-for-archived"}
# The keyword corruptions on PostgreSQL (graph/storage/postgres/keyword_postings.py), each
# statement taking the entity id. An entity's row is in one index there: "live row for an
# archived entity" moves it to the live one; "change-fts-text" changes a posting, so the
# postings no longer hold the stored text (which the checker reports as stale text).
KEYWORD_ON_POSTGRES = {
    "delete-fts-row": [
        "DELETE FROM graph_keyword_doc WHERE entity_id = %s",
        "DELETE FROM graph_keyword_posting WHERE entity_id = %s",
    ],
    "change-fts-text": [
        "UPDATE graph_keyword_posting SET body_tf = body_tf + 1 WHERE entity_id = %s"
        " AND term = 'second'"
    ],
    "live-row-for-archived": [
        "UPDATE graph_keyword_doc SET archived = FALSE WHERE entity_id = %s",
        "UPDATE graph_keyword_posting SET archived = FALSE WHERE entity_id = %s",
    ],
}


def entity_name(corruption: str) -> str:
    return f"c-{corruption}"


def unique_word(corruption: str) -> str:
    """A word only this corruption's entity carries (letters only: the stemmer keeps it)."""
    return "zq" + "".join(chr(ord("a") + (ord(c) % 26)) for c in corruption if c.isalpha())


def seed(corruptions: list[str]) -> None:
    """One entity per corruption (archived where the corruption needs it), plus bystanders."""
    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS

    ctx = CallContext(source_host="test")
    for i in range(5):
        OPERATIONS["remember"].run(
            {"name": f"bystander-{i}", "type": "note", "observations": [f"ordinary memory {i}"]},
            ctx,
        )
    for corruption in corruptions:
        OPERATIONS["remember"].run(
            {
                "name": entity_name(corruption),
                "type": "note",
                "title": f"Title of {corruption}",
                "observations": [f"{unique_word(corruption)} detail", "a second observation"],
                "tags": ["corruption-test"],
            },
            ctx,
        )


def archive_where_needed(corruptions: list[str]) -> None:
    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS

    ctx = CallContext(source_host="test")
    for corruption in corruptions:
        if corruption in ARCHIVED:
            OPERATIONS["forget"].run({"name": entity_name(corruption)}, ctx)


def corrupt(corruption: str, float_rows: dict[int, bytes]) -> list[int]:
    """Apply one corruption; returns the entity ids the checker must name.

    `float_rows` holds every live float vector as it was before any entity was archived
    (forget removes an archived entity's vectors, which the archived corruptions put back).
    """
    from django.db import connection

    from graph.indexing import generations
    from graph.models import Entity
    from graph.storage import backend
    from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS
    from graph.storage.postgres import vector_tables
    from graph.storage.vector_index import table_name

    live = generations.live_generation()
    assert live is not None, "build the live vector index first"
    # The index half of a vector: a vec0 sign-bit row on SQLite, a pgvector row on PostgreSQL.
    postgres = backend.on_postgres()
    index_table = vector_tables.table_name if postgres else table_name
    key = "entity_id" if postgres else "rowid"
    gen, bits = live.generation, index_table(live.generation)
    eid = Entity.objects.get(name=entity_name(corruption)).pk

    def sql(query: str, params: Sequence[Any] | None = None) -> None:
        with connection.cursor() as cur:
            cur.execute(query, params or [])

    def insert_bits(entity_id: int, blob: bytes, generation: int = gen) -> None:
        if postgres:
            vector = vector_tables.vector_literal(np.frombuffer(blob, dtype=np.float32))
            sql(
                f"INSERT INTO {index_table(generation)} (entity_id, embedding)"
                " VALUES (%s, %s::vector)",
                [entity_id, vector],
            )
        else:
            sql(
                f"INSERT INTO {table_name(generation)} (rowid, coarse)"
                " VALUES (%s, vec_quantize_binary(%s))",
                [entity_id, blob],
            )

    def insert_vector(entity_id: int, blob: bytes, generation: int = gen) -> None:
        sql(
            "INSERT INTO graph_entityvector (generation, entity_id, text_hash, embedding,"
            " created_at) VALUES (%s, %s, 'somehash', %s, '2026-01-01 00:00:00')",
            [generation, entity_id, blob],
        )
        insert_bits(entity_id, blob, generation)

    if postgres and corruption in KEYWORD_ON_POSTGRES:
        # The keyword index's rows on PostgreSQL: an entity's document row and its postings.
        for query in KEYWORD_ON_POSTGRES[corruption]:
            sql(query, [eid])
    elif corruption == "delete-fts-row":
        sql(f"DELETE FROM {LIVE_FTS} WHERE rowid = %s", [eid])
    elif corruption == "change-fts-text":
        sql(f"UPDATE {LIVE_FTS} SET body = 'tamper text' WHERE rowid = %s", [eid])
    elif corruption == "live-row-for-archived":
        sql(
            f"INSERT INTO {LIVE_FTS} (rowid, head, body)"
            f" SELECT rowid, head, body FROM {ARCHIVED_FTS} WHERE rowid = %s",
            [eid],
        )
    elif corruption == "vector-for-archived":
        insert_vector(eid, float_rows[eid])
    elif corruption == "vector-for-missing":
        insert_vector(MISSING_ID, float_rows[eid])
        return [MISSING_ID]
    elif corruption == "wrong-width-vector":
        sql(
            "UPDATE graph_entityvector SET embedding = substr(embedding, 1, %s)"
            " WHERE generation = %s AND entity_id = %s",
            [live.dimensions * 2, gen, eid],
        )
    elif corruption == "bits-missing":
        sql(f"DELETE FROM {bits} WHERE {key} = %s", [eid])
    elif corruption == "bits-disagree":
        flipped = (-np.frombuffer(float_rows[eid], dtype=np.float32)).tobytes()
        sql(f"DELETE FROM {bits} WHERE {key} = %s", [eid])
        insert_bits(eid, flipped)
    elif corruption == "bits-orphan":
        insert_bits(MISSING_ID + 1, float_rows[eid])
        return [MISSING_ID + 1]
    elif corruption == "stray-generation":
        from graph.models import EntityVector

        stray = gen + 50
        EntityVector.objects.create_table(stray, live.dimensions)
        insert_vector(eid, float_rows[eid], generation=stray)
    elif corruption == "live-table-dropped":
        sql(f"DROP TABLE {bits}")
        return []
    else:
        raise ValueError(corruption)
    return [eid]


def live_float_rows() -> dict[int, bytes]:
    from django.db import connection

    from graph.indexing import generations

    live = generations.live_generation()
    assert live is not None
    with connection.cursor() as cur:
        cur.execute(
            "SELECT entity_id, embedding FROM graph_entityvector WHERE generation = %s",
            [live.generation],
        )
        return {eid: bytes(blob) for eid, blob in cur.fetchall()}


def main() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"
    import django

    django.setup()
    from graph.indexing import embedding_pass

    seed(COMBINABLE)
    report = embedding_pass.embed_pending()
    if report.error or report.skipped:
        raise SystemExit(f"embedding failed: {report}")
    floats = live_float_rows()
    archive_where_needed(COMBINABLE)
    expected: dict[str, list[int]] = {}
    for corruption in COMBINABLE:
        kind = EXPECTED_KIND[corruption]
        expected.setdefault(kind, []).extend(corrupt(corruption, floats))
    words = {entity_name(c): unique_word(c) for c in COMBINABLE}
    sys.stdout.write(json.dumps({"expected": expected, "words": words}) + "\n")


if __name__ == "__main__":
    main()
