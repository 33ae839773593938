"""import, chunk by chunk: every entry validated before its chunk is written, each chunk all or
nothing, a chunk that fails as it is written redone entry by entry, and a full database
stopping the import with the chunks before it kept (graph/ops/bundle/importer.py).

A write fails for real here: SQLite's `max_page_count` caps how far the database may grow,
and a write past it gets SQLITE_FULL ("database or disk is full"), the code a full disk
gives. tests/e2e/test_storage_conditions.py does the same on a real full file system. The
tests commit (transaction=True) so that each chunk is its own top-level transaction, as it
is in a server.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from graph.errors import StorageFull
from graph.models import Entity
from graph.ops.bundle.entry import MAX_HISTORY_DEPTH
from graph.ops.bundle.importer import IMPORT_CHUNK
from tests.bundles import assert_index_in_step, entry, export, import_
from tests.helpers import observations_of

pytestmark = pytest.mark.django_db(transaction=True)

# 100 observations of ~10,000 characters: about 500 pages of 4 KiB with their index rows,
# against a few for a small entry (500 small entries take about 70).
BIG = [f"{i} " + "word " * 1990 for i in range(100)]
ROOM_FOR_SMALL_ENTRIES = 250  # pages: both chunks of small entries fit, BIG does not


@contextmanager
def database_may_grow_by(pages: int) -> Iterator[None]:
    with connection.cursor() as cur:
        cur.execute("PRAGMA page_count")
        used = cur.fetchone()[0]
        cur.execute(f"PRAGMA max_page_count = {used + pages}")
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute("PRAGMA max_page_count = 4294967294")  # SQLite's default


def small_entries(start: int, stop: int) -> list[dict[str, Any]]:
    return [entry(f"e{i}", f"fact {i}") for i in range(start, stop)]


def stored_names() -> set[str]:
    return set(Entity.objects.values_list("name", flat=True))


@pytest.mark.sqlite_only  # a full SQLite file (PRAGMA max_page_count)
def test_an_entry_that_does_not_fit_is_reported_and_the_rest_of_its_chunk_imports() -> None:
    # Chunk two: three small entries, the big one, three more.
    second = [*small_entries(IMPORT_CHUNK, IMPORT_CHUNK + 3), entry("big", *BIG)]
    second += small_entries(IMPORT_CHUNK + 3, IMPORT_CHUNK + 6)
    bundle = small_entries(0, IMPORT_CHUNK) + second

    with database_may_grow_by(ROOM_FOR_SMALL_ENTRIES):
        result = import_(bundle)

    assert result["imported"] == IMPORT_CHUNK + 6
    [error] = result["errors"]
    assert error == (
        f'entities[{IMPORT_CHUNK + 3}] "big": could not be stored: database or disk is full '
        "(storage.full)"
    )
    assert stored_names() == {f"e{i}" for i in range(IMPORT_CHUNK + 6)}
    assert observations_of("big") == []
    assert_index_in_step()


@pytest.mark.sqlite_only  # a full SQLite file (PRAGMA max_page_count)
def test_a_chunk_of_which_nothing_fits_stops_the_import_and_the_chunks_before_it_stay() -> None:
    bundle = [*small_entries(0, IMPORT_CHUNK), entry("big", *BIG), entry("bigger", *BIG, "!")]

    with database_may_grow_by(ROOM_FOR_SMALL_ENTRIES), pytest.raises(StorageFull):
        import_(bundle)

    # Chunk one is whole; chunk two, neither of whose entries fits, left nothing behind.
    assert stored_names() == {f"e{i}" for i in range(IMPORT_CHUNK)}
    assert_index_in_step()
    # Once there is room, the same import with skip carries on where it stopped.
    result = import_(bundle)
    assert (result["imported"], result["skipped"], result["errors"]) == (2, IMPORT_CHUNK, [])
    assert len(observations_of("big")) == len(BIG)


def deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("history", "why"),
    [
        ([{"at": "2026-01-01", "observations": ["bad \ud800 text"]}], "valid Unicode"),
        ([{"at": "2026-01-01", "score": math.nan}], "finite numbers"),
        ([deep(5_000)], f"at most {MAX_HISTORY_DEPTH} levels"),
    ],
    ids=["lone-surrogate", "nan", "too-deep"],
)
def test_a_version_history_that_cannot_be_stored_and_exported_again_is_refused_before_writing(
    history: list[dict[str, Any]], why: str
) -> None:
    # Unchecked, the surrogate was stored and broke every export after it, NaN failed the
    # metadata's JSON check at write time and the deep one crashed the encoder mid-import.
    bundle = small_entries(0, IMPORT_CHUNK + 2)
    bundle[IMPORT_CHUNK + 1]["replaced_history"] = history

    result = import_(bundle)

    [error] = result["errors"]
    assert error.startswith(f'entities[{IMPORT_CHUNK + 1}] "e{IMPORT_CHUNK + 1}": ')
    assert "replaced_history" in error and why in error
    assert stored_names() == {f"e{i}" for i in range(IMPORT_CHUNK + 1)}
    assert export()["entity_count"] == IMPORT_CHUNK + 1  # the export still works
