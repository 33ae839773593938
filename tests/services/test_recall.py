"""Recall behaviour on the real SQLite FTS5 index (keyword path)."""

from __future__ import annotations

import unicodedata

import pytest
from django.utils import timezone

from core.errors import InvalidInput
from graph.models import Entity
from graph.ops.kit.scope import UNBOUND
from graph.ops.recall.access import flush_accesses
from graph.ops.recall.schema import RecallInput
from graph.ops.recall.selector import _keyword_candidates, recall_filters
from graph.search import text
from tests.helpers import forget, names, recall, remember

pytestmark = pytest.mark.django_db


def test_a_question_in_the_users_own_words_finds_the_note() -> None:
    remember("grad", "I graduated with a degree in Business Administration")
    remember("oven", "The oven runs ten degrees hot, so bake at 170")
    remember("yoga", "I did yoga with my sister on Sunday")
    result = recall("What degree did I graduate with?")
    assert names(result)[0] == "grad"
    assert "oven" in names(result)  # shares one incidental word: found, but ranked below
    assert "yoga" not in names(result)  # shares only function words


def test_punctuation_inside_a_word_splits_it() -> None:
    remember("kitchen", "Renovate the kitchen before summer")
    assert names(recall("kitchen's")) == ["kitchen"]


def test_nfc_and_nfd_spellings_match_each_other() -> None:
    remember("nfc", unicodedata.normalize("NFC", "A naïve cache invalidation bug"))
    remember("nfd", unicodedata.normalize("NFD", "Another naïve retry loop"))
    for spelling in ("NFC", "NFD"):
        found = names(recall(unicodedata.normalize(spelling, "naïve")))
        assert sorted(found) == ["nfc", "nfd"]
    assert sorted(names(recall("naive"))) == ["nfc", "nfd"]


def test_a_query_with_nothing_searchable_returns_nothing_but_no_query_lists_recent() -> None:
    remember("one", "first memory")
    remember("two", "second memory")
    assert recall("???")["entities"] == []
    assert recall("@#$%")["entities"] == []
    assert names(recall()) == ["two", "one"]
    assert names(recall("")) == ["two", "one"]
    assert names(recall("   ")) == ["two", "one"]


def test_cjk_text_is_found_by_any_word_inside_it() -> None:
    remember("backup", "資料庫遷移前一定要先備份")
    remember("other", "今天天氣很好")
    assert names(recall("資料庫遷移")) == ["backup"]
    assert names(recall("備份")) == ["backup"]


def test_only_the_first_32_surviving_terms_are_used() -> None:
    fillers = [f"filler{i}" for i in range(40)]
    for i, word in enumerate(fillers):
        remember(f"filler-note-{i}", f"an entry about {word}")
    remember("target", "zebrafish husbandry notes")
    rare_last = recall(" ".join([*fillers, "zebrafish"]), limit=100)
    assert "target" not in names(rare_last)
    assert len(names(rare_last)) == 32
    rare_first = recall(" ".join(["zebrafish", *fillers]), limit=100)
    assert names(rare_first)[0] == "target"


def test_identical_notes_come_back_newest_first() -> None:
    for i in range(30):
        remember(f"note-{i:02d}", "Rotate the signing keys every quarter")
    result = recall("signing keys", limit=5)
    assert names(result) == ["note-29", "note-28", "note-27", "note-26", "note-25"]
    assert result["retrieval"]["truncated"] is True


def test_terms_in_more_than_half_the_rows_are_dropped() -> None:
    for i in range(40):
        remember(f"svc-{i}", f"the service handles batch job {i}")
    remember("k8s", "the kubernetes service runs the cluster autoscaler")
    assert names(recall("the kubernetes")) == ["k8s"]
    assert names(recall("service kubernetes")) == ["k8s"]
    common_only = recall("the service")
    assert len(common_only["entities"]) == 20
    assert common_only["retrieval"]["truncated"] is True


def test_a_word_in_most_memories_is_ranked_among_its_newest_matches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The window is its floor of 5 x 40 candidates here (COMMON_MATCH_WINDOW lowered to 0).
    monkeypatch.setattr(text, "COMMON_MATCH_WINDOW", 0)
    for i in range(30):  # the oldest hold the word most densely: the best bm25 of all
        remember(f"dense-{i}", "walrus walrus walrus", tags=["tusk"])
    for i in range(200):
        remember(f"plain-{i}", f"a walrus swam past the pier on day {i} of the long summer")

    common = names(recall("walrus", limit=10))
    assert len(common) == 10
    assert all(name.startswith("plain-") for name in common)
    # A query holding a term in at most half of the rows ranks every match, as before.
    assert all(name.startswith("dense-") for name in names(recall("walrus tusk", limit=10)))


@pytest.mark.parametrize(
    "query",
    [
        "redis or postgres",
        "redis OR postgres",
        "NOT",
        "NOT redis",
        "AND",
        '"unbalanced quote',
        '"quoted phrase"',
        "(parens",
        "a) b (c",
        "prefix*",
        "*",
        "col:value",
        "name:redis",
        "NEAR(redis postgres)",
        "^start",
        "redis + postgres - mysql",
        "'single' quotes",
        "\x00 nul",
    ],
)
def test_fts_syntax_in_a_query_never_raises(query: str) -> None:
    remember("redis", "redis is the cache; postgres is the store")
    result = recall(query)
    assert isinstance(result["entities"], list)


def test_a_query_matching_nothing_returns_an_empty_list() -> None:
    remember("redis", "redis is the cache")
    result = recall("zzzunknownword")
    assert result["entities"] == []
    assert result["retrieval"] == {"mode": "fts", "degraded": False, "truncated": False}


def test_tag_and_namespace_filters_combine() -> None:
    remember("a", "deploy checklist", tags=["project:x"], namespace="team")
    remember("b", "deploy checklist", tags=["project:x"], namespace="personal")
    remember("c", "deploy checklist", tags=["project:y"], namespace="team")
    assert names(recall("deploy", tag="project:x", namespace="team")) == ["a"]
    assert sorted(names(recall("deploy", tag="project:x"))) == ["a", "b"]
    assert sorted(names(recall("deploy", namespace="team"))) == ["a", "c"]
    assert names(recall(tag="project:x", namespace="team")) == ["a"]


def test_cross_project_lifts_the_namespace_filter() -> None:
    remember("a", "deploy checklist", namespace="team")
    remember("b", "deploy checklist", namespace="global")
    assert sorted(names(recall("deploy", namespace="team", cross_project=True))) == ["a", "b"]


def test_archived_entities_are_hidden_unless_asked_for() -> None:
    remember("old", "legacy deploy script")
    remember("new", "current deploy script")
    forget("old")
    assert names(recall("deploy")) == ["new"]
    assert sorted(names(recall("deploy", include_archived=True))) == ["new", "old"]
    assert names(recall()) == ["new"]
    assert sorted(names(recall(include_archived=True))) == ["new", "old"]


def test_query_results_carry_match_provenance_and_listings_do_not() -> None:
    remember("a", "deploy checklist for the api")
    remember("b", "deploy")
    for entity in recall("deploy checklist")["entities"]:
        assert entity["match"]["source"] == "keyword"
        assert 0 < entity["match"]["relevance"] <= 1
    assert recall("deploy checklist")["entities"][0]["match"]["relevance"] == 1.0
    assert all("match" not in e for e in recall()["entities"])


def test_results_carry_the_entity_fields() -> None:
    remember("a", "deploy checklist", title="How we deploy", tags=["ops"])
    remember("b", "rollback plan", relations=[{"to": "a", "type": "related-to"}])
    entity = recall("rollback")["entities"][0]
    assert entity["name"] == "b"
    assert entity["title"] is None
    assert entity["relations"] == [{"from": "b", "to": "a", "type": "related-to"}]
    assert entity["metadata"]["provenance"]["source_host"] == "test"
    assert entity["created_at"].endswith("Z")
    other = recall("deploy")["entities"][0]
    assert other["title"] == "How we deploy"
    assert other["tags"] == ["ops"]


def test_only_returned_results_count_as_accesses() -> None:
    for i in range(5):
        remember(f"n{i}", "shared topic words")
    recall("shared", limit=2)
    flush_accesses()
    counts = dict(Entity.objects.values_list("name", "access_count"))
    assert sorted(counts.values()) == [0, 0, 0, 1, 1]
    recall()  # a listing is not a match
    recall(limit=5)
    flush_accesses()
    assert sum(Entity.objects.values_list("access_count", flat=True)) == 2
    assert Entity.objects.get(name="n4").last_accessed_at is not None


def test_reads_do_not_change_the_write_time() -> None:
    remember("a", "shared topic words")
    before = Entity.objects.get(name="a").updated_at
    recall("shared")
    assert Entity.objects.get(name="a").updated_at == before


def test_repeated_recalls_of_one_memory_do_not_crowd_out_a_better_match() -> None:
    remember("pool", "postgres connection pool tuning for the api")
    for _ in range(30):
        recall("postgres pool")
    remember("vacuum", "postgres vacuum schedule for the analytics warehouse")
    assert names(recall("vacuum schedule for the analytics warehouse in postgres"))[0] == ("vacuum")


def test_the_same_query_over_the_same_memories_returns_the_same_list() -> None:
    for i in range(12):
        remember(f"n{i}", f"release notes for version {i % 3}")
    first = names(recall("release version", limit=100))
    assert names(recall("release version", limit=100)) == first


def test_limit_defaults_to_20_and_is_capped_at_100() -> None:
    for i in range(25):
        remember(f"n{i}", "common words here")
    assert len(recall()["entities"]) == 20
    assert len(recall(limit=100)["entities"]) == 25
    with pytest.raises(InvalidInput, match="limit"):
        recall(limit=101)
    with pytest.raises(InvalidInput, match="limit"):
        recall(limit=0)


def test_the_recent_listing_puts_the_last_write_first() -> None:
    remember("a", "first")
    remember("b", "second")
    remember("a", "appended later")
    assert names(recall()) == ["a", "b"]


def test_title_and_name_words_are_searchable() -> None:
    remember("jwt-rotation", "keys live in the vault", title="Signing key schedule")
    assert names(recall("rotation")) == ["jwt-rotation"]
    assert names(recall("schedule")) == ["jwt-rotation"]


def _walrus_notes() -> None:
    remember("walrus-head", "nothing of that kind here")  # the word in the name only
    remember("tusks", "the walrus keeps its tusks clean")
    remember("walrus-archived", "an old walrus note")
    forget("walrus-archived")
    for i in range(3):
        remember(f"other{i}", "an unrelated note about ice")


def _covered(query: str, include_archived: bool = False) -> dict[str, float]:
    data = RecallInput(query=query, include_archived=include_archived)
    scored = _keyword_candidates(
        data,
        text.query_terms(query),
        recall_filters(data, UNBOUND),
        40,
        timezone.now(),
        for_fusion=True,
    )
    ids = dict(Entity.objects.values_list("id", "name"))
    return {ids[c.hit.entity_id]: c.covered for c in scored}


@pytest.mark.parametrize(
    ("query", "include_archived"),
    [("walrus", False), ("walrus", True), ("walrus zqxjkvbwy", False)],
)
def test_a_one_term_search_credits_every_candidate_with_that_term(
    query: str, include_archived: bool
) -> None:
    # Such a search does not look up which terms each candidate holds (every hit matched the
    # term, and the query's other words are in no memory): the lookup must agree.
    _walrus_notes()
    covered = _covered(query, include_archived)
    ids = list(Entity.objects.filter(name__in=covered).values_list("id", flat=True))
    terms = text.query_terms(query)

    held = Entity.objects.terms_present(ids, terms, include_archived=include_archived)

    assert held == {i: {"walrus"} for i in ids}
    assert len(set(covered.values())) == 1
    expected = {"walrus-head", "tusks"} | ({"walrus-archived"} if include_archived else set())
    assert set(covered) == expected


def test_with_two_terms_searched_each_candidate_covers_what_it_holds() -> None:
    _walrus_notes()
    covered = _covered("walrus tusks")
    assert covered["tusks"] == pytest.approx(1.0)
    assert 0.0 < covered["walrus-head"] < covered["tusks"]
