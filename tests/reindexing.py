"""What the reindex tests share — the services' (tests/services/test_reindex.py) and the
command's (tests/transports/test_reindex_cli.py): the embedder configured either way, a seeded
graph and its live index, the state compared to show that the live index is untouched, and a
rebuild interrupted on purpose.

Vectors come from the deterministic provider (instant, no server) or from FakeEmbeddingServer
over real HTTP when a test needs the provider to fail or needs to see what was sent. Writes
inside pytest-django's transaction fire no on_commit hook, so each test builds the live index
explicitly with `build_live()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from graph.indexing import embedding_pass, generations, reindex
from graph.indexing.generations import LIVE_KEY, STAGING_KEY
from graph.indexing.reindex import ReindexResult
from graph.models import Entity, EntityVector, MetaEntry, Status
from graph.storage import backend
from graph.storage.postgres.vector_tables import table_name as postgres_table_name
from graph.storage.vector_index import table_name
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.helpers import remember

WIDTH = 16  # small vectors keep every run fast; vec0 bit tables need a multiple of 8
FAKE_MODEL = "fake-embed"  # not a known OpenAI model, so the width is learnt from the probe
# Fails at once: 401 is configuration, never retried, so a failing batch is one request.
REFUSE = Reply(status=401)
# Weather with Retry-After: 0, so the three attempts of a batch cost no sleep.
OVERLOADED = Reply(status=503, headers={"Retry-After": "0"})


def use_deterministic(mp: pytest.MonkeyPatch, width: int = WIDTH) -> None:
    mp.setattr(settings, "MEMESH_EMBEDDER", "deterministic")
    mp.setattr(settings, "MEMESH_EMBEDDER_DIMENSIONS", width)
    for name in ("MEMESH_EMBEDDER_BASE_URL", "MEMESH_EMBEDDER_MODEL", "MEMESH_EMBEDDER_API_KEY"):
        mp.setattr(settings, name, "")


def use_openai(
    mp: pytest.MonkeyPatch,
    server: FakeEmbeddingServer,
    *,
    model: str = FAKE_MODEL,
    width: int | None = None,
) -> None:
    mp.setattr(settings, "MEMESH_EMBEDDER", "openai")
    mp.setattr(settings, "MEMESH_EMBEDDER_BASE_URL", server.base_url_openai)
    mp.setattr(settings, "MEMESH_EMBEDDER_API_KEY", "k")
    mp.setattr(settings, "MEMESH_EMBEDDER_MODEL", model)
    mp.setattr(settings, "MEMESH_EMBEDDER_TIMEOUT", 5.0)
    mp.setattr(settings, "MEMESH_EMBEDDER_DIMENSIONS", width)
    server.width = WIDTH  # the width of the vectors it answers when none is asked for


def seed(count: int, prefix: str = "m", **fields: Any) -> list[str]:
    """`count` memories, each with a word only it carries (`<prefix>tok<i>`)."""
    names = [f"{prefix}{i}" for i in range(count)]
    for i, name in enumerate(names):
        remember(name, f"{prefix}tok{i} remembered detail number {i}", **fields)
    return names


def build_live() -> generations.Generation:
    """The live index for the configured embedder, every active memory in it."""
    report = embedding_pass.embed_pending()
    assert report.error is None and report.skipped is None, report
    live = generations.live_generation()
    assert live is not None
    assert EntityVector.objects.pending_count(live.generation) == 0
    return live


def entity_id(name: str) -> int:
    return Entity.objects.get(name=name).id


def text_of(name: str) -> str:
    eid = entity_id(name)
    return Entity.objects.embedding_texts([eid])[eid]


def rows(generation: int) -> list[tuple[int, str, bytes]]:
    """Every vector row of a generation, byte for byte."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT entity_id, text_hash, embedding FROM graph_entityvector"
            " WHERE generation = %s ORDER BY entity_id",
            [generation],
        )
        return [tuple(row) for row in cur.fetchall()]


def bit_rowids(generation: int) -> list[int]:
    """The ids in a generation's index table: vec0 rowids on SQLite, the pgvector table's
    entity ids on PostgreSQL."""
    with connection.cursor() as cur:
        if backend.on_postgres():
            table = postgres_table_name(generation)
            cur.execute(f"SELECT entity_id FROM {table} ORDER BY entity_id")
            return [row[0] for row in cur.fetchall()]
        cur.execute(f"SELECT rowid FROM {table_name(generation)} ORDER BY rowid")
        return [row[0] for row in cur.fetchall()]


def marker(key: str) -> Any:
    return MetaEntry.objects.filter(key=key).values_list("value", flat=True).first()


def live_state() -> tuple[Any, list[tuple[int, str, bytes]], list[int]]:
    """The live marker, rows and bit-table rows: what "the live index is untouched" compares."""
    live = generations.live_generation()
    assert live is not None
    return marker(LIVE_KEY), rows(live.generation), bit_rowids(live.generation)


def staging() -> generations.Generation:
    gen = generations.read_marker(STAGING_KEY)
    assert gen is not None, "no staging generation"
    return gen


def active_ids() -> set[int]:
    return set(Entity.objects.filter(status=Status.ACTIVE).values_list("id", flat=True))


def current_hashes() -> dict[int, str]:
    return dict(Entity.objects.filter(status=Status.ACTIVE).values_list("id", "embedding_hash"))


def after_batches(count: int, action: Callable[[], None]) -> Callable[[int], None]:
    """A progress callback that runs `action` once, after the `count`-th batch."""
    done = 0

    def progress(_: int) -> None:
        nonlocal done
        done += 1
        if done == count:
            action()

    return progress


def interrupted_run(server: FakeEmbeddingServer, batches_ok: int) -> ReindexResult:
    """A full rebuild whose provider starts refusing after `batches_ok` batches (fewer than
    MAX_CONSECUTIVE_FAILURES batches remain, so this is a failure, not an abort)."""

    def fail() -> None:
        server.fail_always = REFUSE

    result = reindex.reindex_all(progress=after_batches(batches_ok, fail))
    server.fail_always = None
    assert not result.complete and not result.swapped, result
    assert result.aborted_after is None, result
    return result


def sent_since(server: FakeEmbeddingServer, start: int) -> list[str]:
    return server.texts_sent()[start:]
