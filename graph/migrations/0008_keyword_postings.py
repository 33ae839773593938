"""PostgreSQL's keyword index: posting tables built from memesh's own tokens (nothing on SQLite,
whose keyword index is FTS5: migration 0002).

- `graph_keyword_doc`: one row per indexed entity — which index it is in (`archived`), its
  token count over both columns (bm25's document length) and the head and body text stored
  (`index_text` output, as FTS5 stores it: the consistency checker compares it).
- `graph_keyword_posting`: one row per (index, term, entity) with the term's count in head and
  body. The primary key leads with (archived, term), so a term's document frequency is an
  index-only count and a recall's matches one range per term; the tfs ride in the index.
- `graph_keyword_totals`: rows and tokens per index, kept in the write's transaction, split over
  a few slots (a writer updates the slot of its connection) so concurrent writers do not queue
  on one row; `writes` counts the writes per slot, the change key of the per-process term
  statistics (graph/storage/postgres/keyword_frequencies.py).

No foreign keys: like FTS5's tables, the index is kept equal to the entity tables by the writes
(graph/storage/keyword/writes.py) and checked by the consistency checker.
"""

from django.db import migrations

TOTALS_SLOTS = 16

CREATE = [
    """CREATE TABLE graph_keyword_doc (
        entity_id bigint PRIMARY KEY,
        archived boolean NOT NULL,
        tokens integer NOT NULL,
        head text NOT NULL,
        body text NOT NULL)""",
    """CREATE TABLE graph_keyword_posting (
        archived boolean NOT NULL,
        term text NOT NULL,
        entity_id bigint NOT NULL,
        head_tf integer NOT NULL,
        body_tf integer NOT NULL,
        PRIMARY KEY (archived, term, entity_id) INCLUDE (head_tf, body_tf))""",
    "CREATE INDEX graph_keyword_posting_entity ON graph_keyword_posting (entity_id)",
    """CREATE TABLE graph_keyword_totals (
        slot smallint PRIMARY KEY,
        live_rows bigint NOT NULL DEFAULT 0,
        live_tokens bigint NOT NULL DEFAULT 0,
        archived_rows bigint NOT NULL DEFAULT 0,
        archived_tokens bigint NOT NULL DEFAULT 0,
        writes bigint NOT NULL DEFAULT 0)""",
    f"INSERT INTO graph_keyword_totals (slot) SELECT generate_series(0, {TOTALS_SLOTS - 1})",
]
DROP = [
    "DROP TABLE graph_keyword_totals",
    "DROP TABLE graph_keyword_posting",
    "DROP TABLE graph_keyword_doc",
]


def create_posting_tables(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in CREATE:
            schema_editor.execute(sql)


def drop_posting_tables(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in DROP:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("graph", "0007_vector_pieces")]

    operations = [migrations.RunPython(create_posting_tables, drop_posting_tables)]
