"""Helpers for tests that turn embeddings on: choosing the embedder, reading the vector index.

The suite runs with MEMESH_EMBEDDER=none; a test picks its embedder through the settings the
same environment variables a user sets become (graph/embedding/config.py reads them on every
call).
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.db import connection

from graph.indexing import embedding_pass, generations, query_cache
from graph.models import Entity, MetaEntry
from graph.search.text import embedding_text, text_hash
from graph.storage import backend
from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS
from graph.storage.postgres.vector_tables import table_name as postgres_table_name
from graph.storage.vector_index import table_name
from tests.fakes.embedding_server import FakeEmbeddingServer

FAKE_MODEL = "fake-embed"


def use_embedder(monkeypatch: pytest.MonkeyPatch, provider: str, **env: str) -> None:
    """Configure `provider` (plus MEMESH_EMBEDDER_* settings) and forget cached query vectors.

    The query cache is per process and keyed by embedder identity, so a vector cached by an
    earlier test under the same identity would otherwise answer for this one.
    """
    unset: dict[str, str | None] = {"MODEL": "", "BASE_URL": "", "API_KEY": ""}
    unset.update(DIMENSIONS=None, TIMEOUT=None)
    for name, value in unset.items():
        monkeypatch.setattr(settings, f"MEMESH_EMBEDDER_{name}", value)
    monkeypatch.setattr(settings, "OPENAI_API_KEY", "")
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER", provider)
    for key, value in env.items():
        name = key.upper()
        typed = {"DIMENSIONS": int, "TIMEOUT": float}.get(name, str)(value)
        monkeypatch.setattr(settings, f"MEMESH_EMBEDDER_{name}", typed)
    query_cache.query_cache_clear()


def use_fake_openai(
    monkeypatch: pytest.MonkeyPatch, server: FakeEmbeddingServer, **env: str
) -> None:
    """The openai provider pointed at the fake server (timeouts short: a hang fails fast)."""
    settings = {"base_url": server.base_url_openai, "model": FAKE_MODEL, "timeout": "5", **env}
    use_embedder(monkeypatch, "openai", **settings)


def reset_index_tables() -> None:
    """Empty the keyword index and drop every vec0 table.

    The flush after a transaction=True test empties only the model tables; FTS rows and vec0
    tables of generation N would leak into a later test that reuses the ids or the number.
    """
    if backend.on_postgres():
        # Its index tables are ordinary tables outside the models: emptied and dropped
        # through the storage layer's own methods.
        from graph.models import EntityVector
        from graph.storage.cursor import cursor

        with cursor() as cur:
            Entity.objects._index_clear(cur)
        for generation in EntityVector.objects.generations_present():
            EntityVector.objects.drop_generation(generation)
        return
    with connection.cursor() as cur:
        for table in (LIVE_FTS, ARCHIVED_FTS):
            cur.execute(f"DELETE FROM {table}")
        cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        # The virtual tables only: dropping one drops its shadow tables (graph_vec_gN_*).
        tables = [name for (name,) in cur.fetchall() if re.fullmatch(r"graph_vec_g\d+", name)]
        for table in tables:
            cur.execute(f"DROP TABLE {table}")


def entity_id(name: str) -> int:
    return Entity.objects.get(name=name).pk


def live() -> generations.Generation:
    gen = generations.live_generation()
    assert gen is not None, "no live vector generation"
    return gen


def live_hashes() -> dict[int, str]:
    """entity id -> text hash of every vector row in the live generation."""
    from graph.models import EntityVector

    return EntityVector.objects.hashes(live().generation)


def bit_rowids(generation: int) -> set[int]:
    """Rowids in a generation's vec0 table (the sign-bit half of each vector); on PostgreSQL,
    the entity ids in its pgvector table (the indexed half)."""
    with connection.cursor() as cur:
        if backend.on_postgres():
            cur.execute(f"SELECT entity_id FROM {postgres_table_name(generation)}")
            return {row[0] for row in cur.fetchall()}
        cur.execute(f"SELECT rowid FROM {table_name(generation)}")
        return {row[0] for row in cur.fetchall()}


def expected_hash(name: str) -> str:
    """The hash of the text the entity's vector must be built from, computed independently."""
    entity = Entity.objects.get(name=name)
    observations = list(entity.observations.order_by("id").values_list("text", flat=True))
    return text_hash(embedding_text(entity.name, entity.title, observations))


def last_embedding_error() -> dict | None:
    return (
        MetaEntry.objects.filter(key=embedding_pass.LAST_ERROR_KEY)
        .values_list("value", flat=True)
        .first()
    )
