"""The vec0 table follows entity writes: a vector describing old text never survives."""

from __future__ import annotations

import struct

import pytest
from django.db import connection

from graph.models import Entity
from tests.helpers import forget, remember

pytestmark = pytest.mark.django_db


def _store_vector(entity_id: int) -> None:
    blob = struct.pack("384f", *([0.0] * 383 + [1.0]))
    with connection.cursor() as cur:
        cur.execute(
            "INSERT INTO graph_entity_vec (rowid, embedding) VALUES (%s, %s)", [entity_id, blob]
        )


def _has_vector(entity_id: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM graph_entity_vec WHERE rowid = %s", [entity_id])
        return cur.fetchone()[0] == 1


def test_the_vector_table_exists_with_sqlite_vec_loaded() -> None:
    assert connection.vec_available
    with connection.cursor() as cur:
        cur.execute("SELECT vec_version()")
        assert cur.fetchone()[0].startswith("v")


def test_archiving_drops_the_vector() -> None:
    entity_id = remember("a", "some text")["entityId"]
    _store_vector(entity_id)
    forget("a")
    assert not _has_vector(entity_id)


def test_new_text_drops_the_stale_vector() -> None:
    entity_id = remember("a", "some text")["entityId"]
    _store_vector(entity_id)
    remember("a", "more text")
    assert not _has_vector(entity_id)


def test_a_remember_that_changes_nothing_keeps_the_vector() -> None:
    entity_id = remember("a", "some text")["entityId"]
    _store_vector(entity_id)
    remember("a", "some text")
    assert _has_vector(entity_id)


def test_supersedes_drops_the_targets_vector() -> None:
    old_id = remember("old", "v1 design")["entityId"]
    _store_vector(old_id)
    remember("new", "v2 design", relations=[{"to": "old", "type": "supersedes"}])
    assert Entity.objects.get(pk=old_id).status == "archived"
    assert not _has_vector(old_id)
