"""The keyword index is kept in step with every write, and rolls back with a failed one.

`graph_entity_fts` must hold exactly the active entities and `graph_entity_fts_archived`
exactly the archived ones, each with its current text, as `Entity.objects.index_rebuild()`
would write them (DESIGN §4). On PostgreSQL the same holds of the document rows and postings
(graph/storage/postgres/keyword_postings.py): the helpers below read whichever the database has.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connection
from django.utils import timezone

from graph.models import Entity, Observation, Relation, Tag
from graph.search import text
from graph.storage.cursor import cursor
from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS, VOCAB
from graph.storage.postgres.keyword_postings import posting_term
from tests.helpers import remember
from tests.scenarios import CURRENT_WORDS, REMOVED_WORDS, run_scenario

QUERIES = [
    "quokkaline",
    "yarrowmere",
    "zebracorn word",
    "betakeep",
    "gammaword remains",
    "deltaword epsilonword",
    "zetareturn zetafirst",
    "uniqtag",
    "word",
    "xylograph marmotwise",
]


def on_postgres() -> bool:
    return connection.vendor == "postgresql"


def rowids(table: str) -> set[int]:
    with connection.cursor() as cur:
        if on_postgres():
            cur.execute(
                "SELECT entity_id FROM graph_keyword_doc WHERE archived = %s",
                [table == ARCHIVED_FTS],
            )
        else:
            cur.execute(f"SELECT rowid FROM {table}")
        return {row[0] for row in cur.fetchall()}


def matching(table: str, words: str) -> set[int]:
    terms = text.query_terms(words)
    with connection.cursor() as cur:
        if on_postgres():
            cur.execute(
                "SELECT entity_id FROM graph_keyword_posting WHERE archived = %s"
                " AND term = ANY(%s)",
                [table == ARCHIVED_FTS, [posting_term(t) for t in terms]],
            )
        else:
            expression = text.match_expression(terms)
            cur.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH %s", [expression])
        return {row[0] for row in cur.fetchall()}


def ids_with_status(status: str) -> set[int]:
    return set(Entity.objects.filter(status=status).values_list("id", flat=True))


def search_snapshot() -> dict[str, object]:
    """Everything recall reads from the index, without recall's access counting."""
    with connection.cursor() as cur:
        if on_postgres():
            cur.execute(
                "SELECT term, count(*), sum(head_tf + body_tf) FROM graph_keyword_posting"
                " WHERE NOT archived GROUP BY term ORDER BY term"
            )
        else:
            cur.execute(f"SELECT term, doc, cnt FROM {VOCAB} ORDER BY term")
        vocabulary = [tuple(row) for row in cur.fetchall()]
    hits = {}
    for query in QUERIES:
        expression = text.match_expression(text.query_terms(query))
        found = Entity.objects.fts_candidates(
            expression, limit=100, now=timezone.now(), include_archived=True
        )
        hits[query] = [(h.entity_id, round(h.bm25, 9)) for h in found]
    return {
        "vocabulary": vocabulary,
        "rows": (
            Entity.objects.indexed_row_count(),
            Entity.objects.indexed_row_count(archived=True),
        ),
        "hits": hits,
    }


# --- after a sequence of writes ---------------------------------------------------------------


@pytest.mark.django_db
def test_the_live_table_holds_exactly_the_active_entities() -> None:
    run_scenario()

    assert rowids(LIVE_FTS) == ids_with_status("active")
    assert {e.name for e in Entity.objects.filter(pk__in=rowids(LIVE_FTS))} == {
        "alpha",
        "gamma",
        "epsilon",
        "zeta",
        "eta",
    }


@pytest.mark.django_db
def test_the_archived_table_holds_exactly_the_archived_entities() -> None:
    run_scenario()

    assert rowids(ARCHIVED_FTS) == ids_with_status("archived")
    assert {e.name for e in Entity.objects.filter(pk__in=rowids(ARCHIVED_FTS))} == {
        "beta",
        "delta",
    }


@pytest.mark.django_db
def test_each_entity_is_found_by_its_current_words_in_its_own_table_only() -> None:
    run_scenario()

    for key, (word, table) in CURRENT_WORDS.items():
        entity_id = Entity.objects.get(name=key.removesuffix("-title")).pk
        other = ARCHIVED_FTS if table == LIVE_FTS else LIVE_FTS
        assert matching(table, word) == {entity_id}, key
        assert matching(other, word) == set(), key


@pytest.mark.django_db
def test_words_that_were_replaced_or_removed_are_gone_from_both_tables() -> None:
    run_scenario()

    for word in REMOVED_WORDS:
        assert matching(LIVE_FTS, word) == set(), word
        assert matching(ARCHIVED_FTS, word) == set(), word


@pytest.mark.django_db
def test_a_full_rebuild_changes_no_search_result() -> None:
    run_scenario()
    before = search_snapshot()

    rebuilt = Entity.objects.index_rebuild()

    assert rebuilt == Entity.objects.count()
    assert search_snapshot() == before
    assert all(before["hits"][q] for q in QUERIES[:-1])
    assert before["hits"]["xylograph marmotwise"] == []


# --- a failed write leaves nothing behind -----------------------------------------------------


@pytest.fixture
def relation_insert_fails_once_indexed() -> Iterator[None]:
    """Make inserting a relation fail, but only once its source entity is in the live index.

    The condition proves the failure comes after remember wrote the entity and its index row,
    so the test can only pass if both are rolled back. A TEMP trigger lives on this connection
    only and is dropped however the test ends.
    """
    if on_postgres():
        # No temporary triggers there: a function and a trigger, dropped however it ends.
        create = [
            "CREATE FUNCTION inject_relation_failure() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN IF EXISTS (SELECT 1 FROM graph_keyword_doc"
            " WHERE entity_id = NEW.from_entity_id AND NOT archived)"
            " THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$",
            "CREATE TRIGGER inject_relation_failure BEFORE INSERT ON graph_relation"
            " FOR EACH ROW EXECUTE FUNCTION inject_relation_failure()",
        ]
        drop = ["DROP FUNCTION IF EXISTS inject_relation_failure() CASCADE"]
    else:
        create = [
            "CREATE TEMP TRIGGER inject_relation_failure BEFORE INSERT ON main.graph_relation "
            f"WHEN EXISTS (SELECT 1 FROM main.{LIVE_FTS} WHERE rowid = NEW.from_entity_id) "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        ]
        drop = ["DROP TRIGGER IF EXISTS temp.inject_relation_failure"]
    with connection.cursor() as cur:
        for sql in create:
            cur.execute(sql)
    try:
        yield
    finally:
        with connection.cursor() as cur:
            for sql in drop:
                cur.execute(sql)


@pytest.fixture
def clean_indexes() -> Iterator[None]:
    """transaction=True tests commit for real, and the flush after them empties only the model
    tables: clear the index tables too, so later tests do not see stale rows."""
    yield
    with cursor() as cur:
        Entity.objects._index_clear(cur)


# transaction=True: the service's atomic block is the outermost transaction, as in production,
# rather than a savepoint inside the test's wrapping transaction.
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("clean_indexes")
def test_a_new_entity_whose_relation_fails_leaves_no_row_and_no_index_entry(
    relation_insert_fails_once_indexed: None,
) -> None:
    anchor = Entity.objects.get(pk=remember("anchor", "anchor text")["entityId"])

    with pytest.raises(DatabaseError, match="injected failure"):
        remember(
            "newcomer",
            "rollbackword observation",
            title="Rollback title",
            tags=["rollbacktag"],
            relations=[{"to": "anchor", "type": "related-to"}],
        )

    assert list(Entity.objects.values_list("name", flat=True)) == ["anchor"]
    assert not Observation.objects.filter(text="rollbackword observation").exists()
    assert not Tag.objects.filter(name="rollbacktag").exists()
    assert not Relation.objects.exists()
    assert rowids(LIVE_FTS) == {anchor.pk}
    assert rowids(ARCHIVED_FTS) == set()
    for word in ("rollbackword", "rollback", "rollbacktag", "newcomer"):
        assert matching(LIVE_FTS, word) == set(), word


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("clean_indexes")
def test_a_failed_append_leaves_the_entity_and_its_index_entry_unchanged(
    relation_insert_fails_once_indexed: None,
) -> None:
    remember("anchor", "anchor text")
    remember("keeper", "original keepword", title="Keeper title", tags=["keeptag"])
    before = Entity.objects.get(name="keeper")

    with pytest.raises(DatabaseError, match="injected failure"):
        remember(
            "keeper",
            "appendword observation",
            title="Renamed differently",
            tags=["appendtag"],
            namespace="team",
            relations=[{"to": "anchor", "type": "related-to"}],
        )

    after = Entity.objects.get(name="keeper")
    assert list(after.observations.values_list("text", flat=True)) == ["original keepword"]
    assert list(after.tags.values_list("name", flat=True)) == ["keeptag"]
    assert (after.title, after.namespace, after.confidence, after.updated_at) == (
        before.title,
        before.namespace,
        before.confidence,
        before.updated_at,
    )
    assert not Relation.objects.exists()
    for word in ("keepword", "keeper title", "keeptag"):
        assert matching(LIVE_FTS, word) == {after.pk}, word
    for word in ("appendword", "renamed differently", "appendtag"):
        assert matching(LIVE_FTS, word) == set(), word


# --- remember's create path writes what a rewrite from the stored rows writes ------------------


def index_rows(entity_id: int) -> tuple[object, ...]:
    with connection.cursor() as cur:
        if on_postgres():
            # The document row's text and, beside it, its postings.
            cur.execute(
                "SELECT d.head, d.body, d.tokens, array_agg(ARRAY[p.term, p.head_tf::text,"
                " p.body_tf::text] ORDER BY p.term) FROM graph_keyword_doc AS d"
                " JOIN graph_keyword_posting AS p ON p.entity_id = d.entity_id"
                " WHERE d.entity_id = %s AND NOT d.archived GROUP BY d.entity_id",
                [entity_id],
            )
            live = [tuple(row) for row in cur.fetchall()]
            cur.execute(
                "SELECT count(*) FROM graph_keyword_doc WHERE entity_id = %s AND archived",
                [entity_id],
            )
        else:
            cur.execute(f"SELECT head, body FROM {LIVE_FTS} WHERE rowid = %s", [entity_id])
            live = cur.fetchall()
            cur.execute(f"SELECT count(*) FROM {ARCHIVED_FTS} WHERE rowid = %s", [entity_id])
        archived = cur.fetchone()[0]
    stamp = Entity.objects.filter(pk=entity_id).values_list("embedding_hash", flat=True).get()
    return live, archived, stamp


@pytest.mark.django_db
def test_a_new_memory_is_indexed_as_a_rewrite_from_its_stored_rows_would_index_it() -> None:
    # Created from what the call held (index_new), not read back: repeated and blank-padded
    # observations, a repeated tag, a title, mixed scripts and a word long enough to bypass
    # the tokenizer's cache must come out as index_sync writes them from the tables.
    created = remember(
        "Fresh-Memory",
        "Déjà vu: Graduating students graduate 資料庫",
        "  Déjà   vu: Graduating students graduate 資料庫 ",
        "x" * 70 + " tail",
        title="Naïve Title",
        tags=["topic:fresh", "project:p1", "topic:fresh"],
    )
    entity_id = created["entityId"]
    written = index_rows(entity_id)

    Entity.objects.index_sync([entity_id])

    assert index_rows(entity_id) == written
    live, archived, stamp = written
    assert len(live) == 1 and archived == 0 and stamp
    assert matching(LIVE_FTS, "naive graduates") == {entity_id}
