"""Recall's term document frequencies are kept in the process until the keyword index changes
(graph/storage/term_frequencies.py): every write to the index, by this connection or another,
is seen by the next recall; writes to other tables keep what was counted."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest
from django.db import connection, connections
from django.utils import timezone

from graph.models import Entity, EntityVector
from graph.search import text
from graph.storage import term_frequencies
from graph.storage.postgres import keyword_frequencies
from tests.helpers import forget, recall, remember

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    term_frequencies.forget()
    yield
    term_frequencies.forget()


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The terms each lookup of the database was asked for (fts5vocab, or PostgreSQL's
    posting table; the real lookup still answers)."""
    asked: list[list[str]] = []
    module = keyword_frequencies if connection.vendor == "postgresql" else term_frequencies
    real = module.lookup

    def counted(vocab: str, terms: Sequence[str]) -> dict[str, int]:
        asked.append(list(terms))
        return real(vocab, terms)

    monkeypatch.setattr(module, "lookup", counted)
    return asked


def _walrus() -> tuple[dict[str, int], int]:
    return Entity.objects.term_stats(["walrus", "tusk"])


def test_an_unchanged_index_answers_from_what_was_counted(lookups: list[list[str]]) -> None:
    assert not connection.in_atomic_block
    remember("a", "walrus notes")
    remember("b", "walrus and tusk")

    assert _walrus() == ({"walrus": 2, "tusk": 1}, 2)
    assert _walrus() == ({"walrus": 2, "tusk": 1}, 2)
    assert Entity.objects.term_stats(["tusk", "narwhal"]) == ({"tusk": 1, "narwhal": 0}, 2)

    assert lookups == [["walrus", "tusk"], ["narwhal"]]


def test_every_write_to_the_index_is_counted_by_the_next_call() -> None:
    remember("a", "walrus notes")
    assert _walrus() == ({"walrus": 1, "tusk": 0}, 1)

    remember("b", "walrus and tusk")  # a new row
    assert _walrus() == ({"walrus": 2, "tusk": 1}, 2)

    remember("a", "tusk only", replace=True)  # a row's text replaced
    assert _walrus() == ({"walrus": 1, "tusk": 2}, 2)

    forget("b")  # archived: out of the live index
    assert _walrus() == ({"walrus": 0, "tusk": 1}, 1)
    assert Entity.objects.term_stats(["walrus"], archived=True) == ({"walrus": 1}, 1)


def test_a_write_by_another_connection_is_counted() -> None:
    remember("a", "walrus notes")
    assert _walrus() == ({"walrus": 1, "tusk": 0}, 1)

    def elsewhere() -> None:
        try:
            remember("b", "walrus and tusk")
        finally:
            connections.close_all()

    other = threading.Thread(target=elsewhere)
    other.start()
    other.join()

    assert _walrus() == ({"walrus": 2, "tusk": 1}, 2)


def test_writes_to_other_tables_keep_what_was_counted(lookups: list[list[str]]) -> None:
    remember("a", "walrus notes")
    assert _walrus()[0] == {"walrus": 1, "tusk": 0}
    recall("walrus")  # counts an access (written in a batch) and reads the index again
    Entity.objects.filter(name="a").update(access_count=7)
    EntityVector.objects.filter(entity_id__in=[]).delete()

    assert _walrus()[0] == {"walrus": 1, "tusk": 0}
    assert lookups == [["walrus", "tusk"]]


def test_inside_an_atomic_block_nothing_is_kept(lookups: list[list[str]]) -> None:
    from django.db import transaction

    remember("a", "walrus notes")
    with transaction.atomic():
        assert _walrus()[0] == {"walrus": 1, "tusk": 0}
    assert _walrus()[0] == {"walrus": 1, "tusk": 0}

    assert len(lookups) == 2


def test_recall_ranks_with_the_counts_of_the_current_index() -> None:
    # With the counts of an older index a term that became common would still be searched
    # (or a new one dropped as absent): recall must see every write at once.
    for i in range(30):
        remember(f"filler-{i}", f"ordinary note {i}")
    assert recall("zebra")["entities"] == []
    remember("zebra-notes", "the zebra crossing")

    assert [e["name"] for e in recall("zebra")["entities"]] == ["zebra-notes"]
    terms = text.query_terms("zebra crossing")
    assert Entity.objects.term_stats(terms)[0] == {"zebra": 1, "cross": 1}
    assert Entity.objects.fts_candidates(text.match_expression(terms), limit=5, now=timezone.now())
