"""The raw SQL behind recall (graph/storage/keyword/retrieval.py) returns what the ranking needs."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from graph.models import Entity
from graph.search import text
from graph.storage.keyword.tables import index_columns
from tests.helpers import forget, remember

pytestmark = pytest.mark.django_db


def _candidates(query: str, **filters: object) -> dict[str, object]:
    hits = Entity.objects.fts_candidates(
        text.match_expression(text.query_terms(query)),
        limit=60,
        now=timezone.now(),
        **filters,  # type: ignore[arg-type]
    )
    names = dict(Entity.objects.values_list("id", "name"))
    return {names[h.entity_id]: h for h in hits}


def test_days_count_from_the_later_of_last_write_and_last_access() -> None:
    remember("written", "aardvark notes")
    remember("accessed", "aardvark notes")
    remember("fresh", "aardvark notes")
    now = timezone.now()
    Entity.objects.filter(name="written").update(updated_at=now - timedelta(days=60))
    Entity.objects.filter(name="accessed").update(
        updated_at=now - timedelta(days=60), last_accessed_at=now - timedelta(days=1)
    )
    hits = _candidates("aardvark")
    assert hits["written"].days_since_touch == pytest.approx(60, abs=0.01)
    assert hits["accessed"].days_since_touch == pytest.approx(1, abs=0.01)
    assert hits["fresh"].days_since_touch == pytest.approx(0, abs=0.01)


def test_candidates_carry_the_usage_counters() -> None:
    remember("a", "aardvark notes")
    Entity.objects.filter(name="a").update(
        access_count=7, confidence=0.9, recall_hits=3, recall_misses=2
    )
    hit = _candidates("aardvark")["a"]
    assert (hit.access_count, hit.confidence, hit.recall_hits, hit.recall_misses) == (7, 0.9, 3, 2)


def _ranked(query: str, newest: int | None, **filters: object) -> list[str]:
    hits = Entity.objects.fts_candidates(
        text.match_expression(text.query_terms(query)),
        limit=3,
        now=timezone.now(),
        newest=newest,
        **filters,  # type: ignore[arg-type]
    )
    names = dict(Entity.objects.values_list("id", "name"))
    return [names[h.entity_id] for h in hits]


def _dense_first() -> None:
    """Six memories of one word, the oldest holding it most densely (the best bm25)."""
    for i in range(6):
        remember(f"m{i}", " ".join(["walrus"] * (6 - i)) + " notes and more notes", tags=["t"])


def test_newest_ranks_only_that_many_of_the_newest_matches() -> None:
    _dense_first()
    assert _ranked("walrus", None) == ["m0", "m1", "m2"]
    assert _ranked("walrus", 4) == ["m2", "m3", "m4"]  # m0 and m1 are outside the window
    assert _ranked("walrus", 100) == ["m0", "m1", "m2"]


def test_the_window_counts_the_matches_the_filters_keep() -> None:
    _dense_first()
    for i in range(3):  # newer matches a tag filter leaves out must not fill the window
        remember(f"other{i}", "walrus walrus walrus walrus walrus walrus walrus", tags=["u"])
    assert _ranked("walrus", 4, tag="t") == ["m2", "m3", "m4"]
    assert _ranked("walrus", 4) == ["other2", "other1", "other0"]  # ties: newest first


def test_with_archived_rows_each_index_has_its_own_window() -> None:
    _dense_first()
    forget("m0")
    forget("m5")
    # Live: m1..m4, window of 2 -> m3, m4. Archived: m0, m5, window of 2 -> both.
    assert _ranked("walrus", 2, include_archived=True) == ["m0", "m3", "m4"]


# FTS5 writes its row total when a transaction commits, so this reads after real commits.
@pytest.mark.django_db(transaction=True)
def test_the_indexed_row_count_matches_the_active_and_archived_entities() -> None:
    for i in range(300):  # past 127: the count is stored as a multi-byte varint
        remember(f"n{i}", f"note {i}")
    for i in range(0, 300, 3):
        forget(f"n{i}")
    assert Entity.objects.indexed_row_count() == 200
    assert Entity.objects.indexed_row_count(archived=True) == 100
    # The count is kept apart from the rows (FTS5's averages record; PostgreSQL's totals):
    # the rows themselves agree.
    rows = (
        "SELECT count(*) FROM graph_keyword_doc WHERE NOT archived"
        if connection.vendor == "postgresql"
        else "SELECT count(*) FROM graph_entity_fts_docsize"
    )
    with connection.cursor() as cur:
        cur.execute(rows)
        assert cur.fetchone()[0] == 200


def test_the_indexed_row_count_of_an_empty_index_is_zero() -> None:
    assert Entity.objects.indexed_row_count() == 0
    assert Entity.objects.indexed_row_count(archived=True) == 0


def test_term_frequencies_count_documents_per_index() -> None:
    remember("a", "walrus walrus walrus")
    remember("b", "walrus tusk")
    forget("b")
    assert Entity.objects.term_stats(["walrus", "tusk", "absent"])[0] == {
        "walrus": 1,
        "tusk": 0,
        "absent": 0,
    }
    assert Entity.objects.term_stats(["walrus", "tusk"], archived=True)[0] == {
        "walrus": 1,
        "tusk": 1,
    }


def test_terms_present_tests_whole_index_terms_in_the_head_and_the_body() -> None:
    remember("migration-notes", "the rollback of a schema failed")
    remember("other", "postmortem of the outage")
    ids = dict(Entity.objects.values_list("name", "id"))
    terms = text.query_terms("migration rollback postmortem schema outag")
    present = Entity.objects.terms_present([ids["migration-notes"], ids["other"]], terms)

    # The name is in the head, the observation in the body; "outag" is the stem of "outage",
    # and "post" would not count for "postmortem" (a whole term, not a prefix).
    assert present[ids["migration-notes"]] == {
        text.query_terms("migration")[0],
        text.query_terms("rollback")[0],
        text.query_terms("schema")[0],
    }
    assert present[ids["other"]] == {text.query_terms("postmortem")[0], "outag"}
    assert Entity.objects.terms_present([ids["other"]], ["post"]) == {ids["other"]: set()}


def test_terms_present_reads_archived_rows_only_when_asked() -> None:
    remember("kept", "aardvark notes")
    remember("gone", "aardvark notes")
    forget("gone")
    ids = dict(Entity.objects.values_list("name", "id"))
    both = [ids["kept"], ids["gone"]]

    assert set(Entity.objects.terms_present(both, ["aardvark"])) == {ids["kept"]}
    assert Entity.objects.terms_present(both, ["aardvark"], include_archived=True) == {
        ids["kept"]: {"aardvark"},
        ids["gone"]: {"aardvark"},
    }


def test_session_neighbours_are_the_adjacent_memories_with_exactly_the_same_tags() -> None:
    remember("t1", "first turn", tags=["conv:a"])
    remember("t2", "second turn", tags=["conv:a"])
    remember("t3", "third turn", tags=["conv:a", "extra"])
    remember("t4", "fourth turn", tags=["conv:a"])
    remember("t5", "fifth turn")
    remember("t6", "sixth turn")
    ids = dict(Entity.objects.values_list("name", "id"))

    got = Entity.objects.session_neighbours([ids[f"t{i}"] for i in range(1, 7)])

    assert got[ids["t1"]] == [ids["t2"]]
    assert got[ids["t2"]] == [ids["t1"]]  # t3's tags differ
    assert got[ids["t3"]] == [] and got[ids["t4"]] == []
    assert ids["t5"] not in got and ids["t6"] not in got  # untagged: no session to follow


def test_a_forgotten_memory_is_no_session_neighbour() -> None:
    for name in ("a", "b", "c"):
        remember(name, f"turn {name}", tags=["conv:a"])
    forget("b")
    ids = dict(Entity.objects.values_list("name", "id"))

    assert Entity.objects.session_neighbours([ids["a"], ids["b"], ids["c"]]) == {
        ids["a"]: [],
        ids["c"]: [],
    }


def test_session_neighbours_are_looked_for_among_the_given_entities_only() -> None:
    for name in ("a", "b", "c"):
        remember(name, f"turn {name}", tags=["conv:a"])
    ids = dict(Entity.objects.values_list("name", "id"))

    assert Entity.objects.session_neighbours([ids["a"], ids["c"]]) == {
        ids["a"]: [],
        ids["c"]: [],
    }
    assert Entity.objects.session_neighbours([ids["a"], ids["b"]]) == {
        ids["a"]: [ids["b"]],
        ids["b"]: [ids["a"]],
    }


def test_beyond_the_given_entities_the_adjacent_ones_with_the_same_tags_are_found() -> None:
    remember("a", "turn a", tags=["conv:a"])
    remember("b", "turn b", tags=["conv:a"])
    remember("c", "turn c", tags=["conv:a"])
    remember("d", "turn d", tags=["conv:b"])
    remember("e", "turn e", tags=["conv:b"])
    forget("e")
    ids = dict(Entity.objects.values_list("name", "id"))

    got = Entity.objects.session_neighbours([ids["b"], ids["d"]], beyond=True)

    assert got == {ids["b"]: [ids["a"], ids["c"]], ids["d"]: []}  # other tags, forgotten


def test_a_reach_of_two_follows_the_run_of_the_same_tags_through_memories_not_given() -> None:
    for name in ("a", "b", "c", "d", "e"):
        remember(name, f"turn {name}", tags=["conv:a"])
    ids = dict(Entity.objects.values_list("name", "id"))

    # "b" and "d" are not given, yet the run through them joins "a", "c" and "e".
    got = Entity.objects.session_neighbours([ids["a"], ids["c"], ids["e"]], reach=2)

    assert got == {ids["a"]: [ids["c"]], ids["c"]: [ids["a"], ids["e"]], ids["e"]: [ids["c"]]}
    assert Entity.objects.session_neighbours([ids["c"]], reach=2, beyond=True) == {
        ids["c"]: [ids["a"], ids["b"], ids["d"], ids["e"]]
    }
    # The default reach is the adjacent memory only.
    assert Entity.objects.session_neighbours([ids["a"], ids["c"]]) == {ids["a"]: [], ids["c"]: []}


def test_a_memory_with_other_tags_or_forgotten_ends_the_run() -> None:
    remember("a", "turn a", tags=["conv:a"])
    remember("b", "turn b", tags=["conv:a", "extra"])
    remember("c", "turn c", tags=["conv:a"])
    remember("d", "turn d", tags=["conv:a"])
    remember("e", "turn e", tags=["conv:a"])
    forget("d")
    ids = dict(Entity.objects.values_list("name", "id"))

    got = Entity.objects.session_neighbours([ids["c"]], reach=2, beyond=True)

    # "b" has other tags and "d" is forgotten: nothing is within reach of "c".
    assert got == {ids["c"]: []}


def _fts5_bm25(query_terms: list[str], names: list[str]) -> dict[str, float]:
    """FTS5's bm25() with BM25_WEIGHTS, by hand (https://sqlite.org/fts5.html#the_bm25_function:
    fts5Bm25Function in ext/fts5/fts5_aux.c), over the active memories' index columns."""
    rows = {}
    for entity in Entity.objects.filter(status="active").prefetch_related("observations", "tags"):
        head, body = index_columns(
            entity.name,
            entity.title,
            [o.text for o in entity.observations.order_by("id")],
            [t.name for t in entity.tags.order_by("id")],
        )
        rows[entity.name] = (head.split(), body.split())
    n_rows = len(rows)
    avgdl = sum(len(h) + len(b) for h, b in rows.values()) / n_rows
    scores = {}
    for name in names:
        head, body = rows[name]
        score = 0.0
        for term in query_terms:
            held = sum(term in h or term in b for h, b in rows.values())
            idf = math.log((n_rows - held + 0.5) / (held + 0.5))
            idf = idf if idf > 0 else 1e-6
            f = 2.5 * head.count(term) + 1.0 * body.count(term)
            score += idf * (f * 2.2) / (f + 1.2 * (0.25 + 0.75 * (len(head) + len(body)) / avgdl))
        scores[name] = -score
    return scores


def test_the_score_is_fts5s_bm25_with_the_head_weighted_over_the_body() -> None:
    # Both backends: FTS5's own bm25 on SQLite, the same formula in SQL on PostgreSQL.
    remember("walrus", "tusk notes", title="Walrus facts", tags=["zoo"])
    remember("long", "walrus " + "filler words " * 12 + "tusk tusk")
    remember("short", "a walrus")
    remember("tuskless", "nothing here but tusk")
    for i in range(8):
        remember(f"other-{i}", f"unrelated note {i}")
    terms = text.query_terms("walrus tusk")

    got = {name: hit.bm25 for name, hit in _candidates("walrus tusk").items()}

    assert set(got) == {"walrus", "long", "short", "tuskless"}
    expected = _fts5_bm25(terms, list(got))
    assert got == pytest.approx(expected, rel=1e-9)
    assert min(got, key=got.__getitem__) == "walrus"  # in its head, and both words


def test_a_word_longer_than_an_index_entry_is_counted_found_and_told_apart() -> None:
    # 900 four-byte letters: past what one btree entry holds (PostgreSQL keys such a term by
    # its digest), and two such words differing in their last letter stay two terms.
    long_word = "\U0001d400" * 899
    remember("long-a", f"{long_word}\U0001d401 notes")
    remember("long-b", f"{long_word}\U0001d402 notes")
    [term_a] = text.query_terms(f"{long_word}\U0001d401")

    assert Entity.objects.term_stats([term_a])[0] == {term_a: 1}
    assert list(_candidates(f"{long_word}\U0001d401")) == ["long-a"]
    ids = dict(Entity.objects.values_list("name", "id"))
    assert Entity.objects.terms_present([ids["long-a"], ids["long-b"]], [term_a]) == {
        ids["long-a"]: {term_a},
        ids["long-b"]: set(),
    }
