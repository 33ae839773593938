"""graph.storage.cursor.read_snapshot on the suite's database: the reads in it share one
transaction, and whatever ends them — a failed statement included — ends the transaction too,
so the connection serves the next request (on PostgreSQL a failed statement leaves its
transaction refusing every later one until it is rolled back)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection

from graph.models import Entity
from graph.storage.cursor import change_token, cursor, read_snapshot
from tests.helpers import remember


@pytest.mark.django_db(transaction=True)
def test_a_failed_read_inside_a_snapshot_leaves_the_connection_usable() -> None:
    remember("kept", "still readable")

    with pytest.raises(DatabaseError), read_snapshot():
        assert Entity.objects.id_for_name("kept") is not None
        with cursor() as cur:
            cur.execute("SELECT no_such_column FROM graph_entity")

    assert not connection.in_atomic_block
    assert Entity.objects.id_for_name("kept") is not None
    assert change_token() is not None  # outside any transaction again
    remember("after", "a write works too")
    assert Entity.objects.id_for_name("after") is not None


@pytest.mark.django_db(transaction=True)
def test_the_reads_of_a_snapshot_end_with_it() -> None:
    remember("one", "first")

    with read_snapshot():
        before = Entity.objects.id_for_name("one")

    assert before is not None
    assert change_token() is not None
    remember("two", "second")
    with read_snapshot():
        assert Entity.objects.id_for_name("two") is not None
