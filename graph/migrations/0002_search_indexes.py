"""Keyword and vector indexes as virtual tables (see graph/storage/keyword/ for how they are used).

The FTS5 tables store their (already tokenized) text rather than being contentless: a
`contentless_delete=1` table deletes a row without knowing its tokens and never takes it out
of the bm25 statistics (row total, per-column token totals), so with memesh rewriting a row on
every write, IDF and average lengths would drift with edit history and rankings would differ
from a rebuilt index. The `ascii` tokenizer splits only on ASCII separators: memesh has
already tokenized the text (graph/search/text.py). Each table has an fts5vocab companion giving
per-term document counts for the query guard.

The vec0 table needs the sqlite-vec extension. Where it cannot load, the migration skips it and
memesh runs keyword-only (the system check says so) and the table is created once the
extension loads and the vector index is rebuilt.

On PostgreSQL (a team server, docs/team-server-design.md) the keyword index is not a virtual
table: its full-text tables come with the storage interface's Postgres implementation, in a
migration of their own. Here the database only gets pgvector, which the vector index needs; a
database that lacks it and cannot have it is refused with `storage.no-pgvector`.
"""

from django.db import migrations

from core.db.postgres.extensions import ensure_pgvector

# Two columns, not one per field: bm25() does per-column work for every row it scores, and
# with four columns (name, title, observations, tags) a broad query at 100k rows took 38 %
# longer. `head` holds what labels a memory (name, title); `body` what it says (observations,
# tags).
FTS_COLUMNS = "head, body"
FTS_OPTIONS = "tokenize='ascii'"

CREATE = [
    f"CREATE VIRTUAL TABLE graph_entity_fts USING fts5({FTS_COLUMNS}, {FTS_OPTIONS})",
    f"CREATE VIRTUAL TABLE graph_entity_fts_archived USING fts5({FTS_COLUMNS}, {FTS_OPTIONS})",
    "CREATE VIRTUAL TABLE graph_entity_fts_vocab USING fts5vocab(graph_entity_fts, 'row')",
    "CREATE VIRTUAL TABLE graph_entity_fts_archived_vocab "
    "USING fts5vocab(graph_entity_fts_archived, 'row')",
]
DROP = [
    "DROP TABLE graph_entity_fts_archived_vocab",
    "DROP TABLE graph_entity_fts_vocab",
    "DROP TABLE graph_entity_fts_archived",
    "DROP TABLE graph_entity_fts",
]

VEC_CREATE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS graph_entity_vec "
    "USING vec0(embedding float[384] distance_metric=cosine)"
)


def create_keyword_tables(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in CREATE:
            schema_editor.execute(sql)
    elif schema_editor.connection.vendor == "postgresql":
        ensure_pgvector(schema_editor.connection)


def drop_keyword_tables(apps, schema_editor):
    # pgvector stays: other tables of the database may use it.
    if schema_editor.connection.vendor == "sqlite":
        for sql in DROP:
            schema_editor.execute(sql)


def create_vector_table(apps, schema_editor):
    if getattr(schema_editor.connection, "vec_error", "not loaded") is None:
        schema_editor.execute(VEC_CREATE)


def drop_vector_table(apps, schema_editor):
    if getattr(schema_editor.connection, "vec_error", "not loaded") is None:
        schema_editor.execute("DROP TABLE IF EXISTS graph_entity_vec")


class Migration(migrations.Migration):
    dependencies = [("graph", "0001_initial")]

    operations = [
        migrations.RunPython(create_keyword_tables, drop_keyword_tables),
        migrations.RunPython(create_vector_table, drop_vector_table),
    ]
