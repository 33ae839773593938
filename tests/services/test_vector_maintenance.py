"""Vector maintenance: every write leaves the entity's vector current, pending, or gone.

A committed write queues the embedding task (eager Celery in the suite), which embeds the
entity's new text; archiving drops its vectors inside the write's own transaction. The fake
OpenAI server stands in for the provider, so each test can count what was embedded.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import transaction

from graph import doctor
from graph.indexing import embedding_pass
from graph.models import Entity, EntityVector
from graph.search.text import embedding_text
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.helpers import forget, names, recall, remember
from tests.vector_support import (
    bit_rowids,
    entity_id,
    expected_hash,
    last_embedding_error,
    live,
    live_hashes,
    use_fake_openai,
)

pytestmark = pytest.mark.clean_indexes  # conftest's _clean_indexes


@pytest.fixture
def embedding_server(
    embedding_server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> FakeEmbeddingServer:
    """The suite's fake embedding server, made the openai provider for every test here."""
    use_fake_openai(monkeypatch, embedding_server)
    return embedding_server


def stored_vector(name: str) -> np.ndarray:
    gen = live().generation
    return EntityVector.objects.floats(gen, [entity_id(name)])[entity_id(name)]


def served_vector(server: FakeEmbeddingServer, name: str) -> np.ndarray:
    """What the server answers for the entity's current embedding text, normalised."""
    entity = Entity.objects.get(name=name)
    observations = list(entity.observations.order_by("id").values_list("text", flat=True))
    raw = server.vector_for(embedding_text(entity.name, entity.title, observations))
    return (raw / np.linalg.norm(raw)).astype(np.float32)


def assert_current(server: FakeEmbeddingServer, name: str) -> None:
    """The entity's live vector is built from its current text, in both halves of the index."""
    eid = entity_id(name)
    assert (
        live_hashes().get(eid) == expected_hash(name) == Entity.objects.get(pk=eid).embedding_hash
    )
    assert eid in bit_rowids(live().generation)
    np.testing.assert_allclose(stored_vector(name), served_vector(server, name), atol=1e-5)


def assert_no_vector(name: str) -> None:
    eid = entity_id(name)
    assert eid not in live_hashes()
    assert eid not in bit_rowids(live().generation)


# --- the write path: committed writes queue the embedding --------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_committed_remember_gets_a_vector_of_its_text(
    embedding_server: FakeEmbeddingServer,
) -> None:
    remember("walrus-note", "walruses haul out on the ice", title="Walrus habits")

    assert_current(embedding_server, "walrus-note")
    assert (
        "walrus-note\nWalrus habits\nwalruses haul out on the ice" in embedding_server.texts_sent()
    )
    assert EntityVector.objects.pending_count(live().generation) == 0


@pytest.mark.django_db(transaction=True)
def test_an_unchanged_re_remember_does_not_re_embed(embedding_server: FakeEmbeddingServer) -> None:
    remember("walrus-note", "walruses haul out on the ice")
    before = len(embedding_server.requests)

    remember("walrus-note", "walruses haul out on the ice")
    remember("walrus-note", "  walruses haul out on the ice  ")  # same text, once stripped

    assert len(embedding_server.requests) == before
    assert_current(embedding_server, "walrus-note")


@pytest.mark.django_db(transaction=True)
def test_an_appended_observation_re_embeds(embedding_server: FakeEmbeddingServer) -> None:
    remember("walrus-note", "walruses haul out on the ice")
    old = stored_vector("walrus-note")
    before = len(embedding_server.requests)

    remember("walrus-note", "they dive for clams")

    assert embedding_server.texts_sent()[before:] == [
        "walrus-note\nwalruses haul out on the ice\nthey dive for clams"
    ]
    assert_current(embedding_server, "walrus-note")
    assert not np.allclose(stored_vector("walrus-note"), old)


@pytest.mark.django_db(transaction=True)
def test_removing_one_observation_re_embeds(embedding_server: FakeEmbeddingServer) -> None:
    remember("walrus-note", "walruses haul out on the ice", "they dive for clams")
    before = len(embedding_server.requests)

    forget("walrus-note", observation="they dive for clams")

    assert embedding_server.texts_sent()[before:] == ["walrus-note\nwalruses haul out on the ice"]
    assert_current(embedding_server, "walrus-note")


@pytest.mark.django_db(transaction=True)
def test_a_provider_failure_after_commit_keeps_the_write(
    embedding_server: FakeEmbeddingServer,
) -> None:
    remember("first", "the index exists")  # bootstraps the live generation
    embedding_server.fail_always = Reply(status=401)

    result = remember("walrus-note", "walruses haul out on the ice")

    assert result["stored"] is True
    assert names(recall("walruses")) == ["walrus-note"]
    assert entity_id("walrus-note") not in live_hashes()
    error = last_embedding_error()
    assert error is not None and error["kind"] == "auth"


# --- archiving drops vectors inside the write's transaction ------------------------------


@pytest.mark.django_db
def test_forget_removes_the_vector_in_the_same_transaction(
    embedding_server: FakeEmbeddingServer, django_capture_on_commit_callbacks: Any
) -> None:
    remember("walrus-note", "walruses haul out on the ice")
    remember("keeper", "penguins nest on the rocks")
    assert embedding_pass.embed_pending().embedded == 2

    # Rolled back with the archive: the vector comes back with the active entity.
    with pytest.raises(RuntimeError), transaction.atomic():
        forget("walrus-note")
        assert_no_vector("walrus-note")
        raise RuntimeError("abort the write")
    assert Entity.objects.get(name="walrus-note").status == "active"
    assert_current(embedding_server, "walrus-note")

    # Committed: gone before any after-commit work (the worker) runs.
    with django_capture_on_commit_callbacks(execute=False):
        forget("walrus-note")
        assert_no_vector("walrus-note")
    assert_no_vector("walrus-note")
    assert_current(embedding_server, "keeper")
    assert EntityVector.objects.orphan_ids(live().generation) == []


@pytest.mark.django_db
def test_supersedes_removes_the_targets_vector(embedding_server: FakeEmbeddingServer) -> None:
    remember("old-decision", "we deploy on fridays")
    assert embedding_pass.embed_pending().embedded == 1

    result = remember(
        "new-decision",
        "we never deploy on fridays",
        relations=[{"to": "old-decision", "type": "supersedes"}],
    )

    assert result["superseded"] == ["old-decision"]
    assert_no_vector("old-decision")
    assert (
        embedding_pass.embed_pending().embedded == 1
    )  # the new one; the archived one is not pending
    assert set(live_hashes()) == {entity_id("new-decision")}


# --- recall while vectors are pending -------------------------------------------------------


@pytest.mark.django_db
def test_recall_finds_keyword_matches_while_vectors_are_pending(
    embedding_server: FakeEmbeddingServer,
) -> None:
    remember("walrus-note", "walruses haul out on the ice")
    assert embedding_pass.embed_pending().embedded == 1
    remember("fresh-note", "narwhals carry a long tusk")  # no vector yet
    remember("walrus-note", "they dive for clams")  # its vector is now stale

    assert EntityVector.objects.pending_count(live().generation) == 2
    fresh = recall("narwhals tusk")
    stale = recall("dive clams")

    assert names(fresh)[0] == "fresh-note"
    assert fresh["entities"][0]["match"]["source"] == "keyword"
    assert names(stale)[0] == "walrus-note"
    assert stale["retrieval"] == {"mode": "hybrid", "degraded": False, "truncated": False}


# --- provider failure during a pass -------------------------------------------------------------


@pytest.mark.django_db
def test_a_provider_failure_mid_pass_leaves_nothing_half_written(
    embedding_server: FakeEmbeddingServer,
) -> None:
    remember("seed", "the index exists")
    assert embedding_pass.embed_pending().embedded == 1
    batch = embedding_pass.EMBED_BATCH
    for i in range(batch + 8):
        remember(f"note-{i:02d}", f"observation number {i}")
    # The first batch is answered, the second refused.
    embedding_server.script = [
        Reply(),
        Reply(status=401, json={"error": {"message": "key revoked"}}),
    ]

    report = embedding_pass.embed_pending()

    assert (report.embedded, report.failed) == (batch, 8)
    assert report.error is not None and report.error.startswith("auth:")
    gen = live().generation
    hashes = live_hashes()
    first = {entity_id(f"note-{i:02d}") for i in range(batch)}
    rest = {entity_id(f"note-{i:02d}") for i in range(batch, batch + 8)}
    assert first <= set(hashes) and not rest & set(hashes)
    # Both halves of the index hold exactly the same rows, and every row is current.
    assert bit_rowids(gen) == set(hashes)
    assert all(hashes[e.pk] == e.embedding_hash for e in Entity.objects.filter(pk__in=hashes))
    assert EntityVector.objects.pending_count(gen) == 8
    # The failure is recorded where doctor reports it.
    checks = {c.name: c for c in doctor.run_checks(probe=False)}
    assert "auth" in checks["last embedding error"].detail
    assert "key revoked" in checks["last embedding error"].detail
    assert checks["vector index"].data is not None and checks["vector index"].data["pending"] == 8

    # The next pass catches up and clears the error.
    retry = embedding_pass.embed_pending()
    assert (retry.embedded, retry.error) == (8, None)
    assert last_embedding_error() is None
    assert EntityVector.objects.pending_count(gen) == 0


@pytest.mark.django_db
def test_a_reply_of_the_wrong_shape_writes_nothing(embedding_server: FakeEmbeddingServer) -> None:
    remember("seed", "the index exists")
    assert embedding_pass.embed_pending().embedded == 1
    remember("walrus-note", "walruses haul out on the ice")
    embedding_server.width = 128  # the provider changed width under the live index

    report = embedding_pass.embed_pending()

    assert report.embedded == 0 and report.error is not None
    assert report.error.startswith("bad_response:")
    assert entity_id("walrus-note") not in live_hashes()
    assert entity_id("walrus-note") not in bit_rowids(live().generation)
    assert last_embedding_error() is not None
