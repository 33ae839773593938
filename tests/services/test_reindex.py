"""Reindexing (graph/indexing/reindex.py): generations, resume, abort, refusals, writes during a
rebuild, a namespace in place, recall during a width change.

The reference's "memesh reindex" section is the spec; the command's flags, output and exit
codes are tests/transports/test_reindex_cli.py's. What both share: tests/reindexing.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from django.db import connection

from graph.embedding.deterministic import DeterministicEmbedder
from graph.indexing import embedding_pass, generations, reindex
from graph.indexing.generations import LIVE_KEY, STAGING_KEY
from graph.indexing.reindex import BATCH, MAX_CONSECUTIVE_FAILURES, ReindexRefused
from graph.models import Entity, EntityVector, MetaEntry
from graph.ops.recall.vector_side import plan_vector_side
from graph.search.text import text_hash
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.helpers import forget, recall, remember
from tests.reindexing import (
    OVERLOADED,
    REFUSE,
    WIDTH,
    active_ids,
    after_batches,
    bit_rowids,
    build_live,
    current_hashes,
    entity_id,
    interrupted_run,
    live_state,
    marker,
    rows,
    seed,
    sent_since,
    staging,
    text_of,
    use_deterministic,
    use_openai,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_query_cache")]


# --- 1. the swap --------------------------------------------------------------------------------


def test_full_rebuild_builds_staging_and_swaps_it_in_only_when_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(BATCH * 2 + 5)
    old = build_live()
    seen: list[tuple[Any, Any]] = []

    def watch(_: int) -> None:
        # Mid-run the new generation is staging only; the old one is still the live one.
        seen.append((generations.live_generation(), generations.read_marker(STAGING_KEY)))

    result = reindex.reindex_all(progress=watch)

    assert result.complete and result.swapped, result
    assert seen, "the rebuild reported no progress"
    new_gen = result.generation
    assert new_gen is not None and new_gen != old.generation
    for live_then, staging_then in seen:
        assert live_then == old
        assert staging_then is not None and staging_then.generation == new_gen
    live = generations.live_generation()
    assert live is not None and live.generation == new_gen
    assert marker(STAGING_KEY) is None
    # The old generation is gone, table and rows.
    assert not EntityVector.objects.table_exists(old.generation)
    assert EntityVector.objects.row_count(old.generation) == 0
    assert EntityVector.objects.generations_present() == [new_gen]
    # Every active memory has a vector of its current text.
    assert EntityVector.objects.hashes(new_gen) == current_hashes()
    assert set(bit_rowids(new_gen)) == active_ids()
    assert reindex.reindex_all().complete  # a run with nothing to do: the command exits 0


# --- 2. the live index answers during a same-width rebuild --------------------------------------


def test_live_index_keeps_answering_while_a_same_width_rebuild_fails_part_way(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    seed(BATCH * 3)
    old = build_live()
    before = live_state()
    during: list[tuple[str, bool, int | None]] = []

    def check_then_fail() -> None:
        answer = recall("mtok7 detail")
        side = plan_vector_side("mtok7 detail").resolve()
        during.append(
            (answer["retrieval"]["mode"], answer["retrieval"]["degraded"], side.generation)
        )
        embedding_server.fail_always = REFUSE

    result = reindex.reindex_all(progress=after_batches(2, check_then_fail))
    embedding_server.fail_always = None

    assert not result.complete and not result.swapped
    assert result.failed == BATCH
    assert during == [("hybrid", False, old.generation)]
    # The failed run changed nothing live, and recall still runs on the old generation.
    assert live_state() == before
    assert generations.live_generation() == old
    after = recall("mtok7 detail")
    assert after["retrieval"]["mode"] == "hybrid"
    assert after["retrieval"]["degraded"] is False
    assert plan_vector_side("mtok7").resolve().generation == old.generation
    # What was embedded is kept in staging.
    assert EntityVector.objects.row_count(staging().generation) == 2 * BATCH == result.embedded


# --- 3 and 4. resume by text hash ---------------------------------------------------------------


def test_resume_sends_only_the_memories_the_interrupted_run_did_not_reach(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    names = seed(BATCH * 3)
    first = interrupted_run(embedding_server, batches_ok=2)
    staged_gen = staging().generation
    staged = EntityVector.objects.hashes(staged_gen)
    assert first.embedded == len(staged) == 2 * BATCH
    mark = len(embedding_server.texts_sent())

    second = reindex.reindex_all()

    assert second.complete and second.swapped, second
    assert second.generation == staged_gen  # resumed, not restarted
    sent = sent_since(embedding_server, mark)
    staged_texts = {text_of(n) for n in names if entity_id(n) in staged}
    assert not staged_texts & set(sent), "a staged memory was sent to the provider again"
    expected = {text_of(n) for n in names if entity_id(n) not in staged}
    assert set(sent) - {generations.PROBE_TEXT} == expected
    assert sent.count(generations.PROBE_TEXT) <= 1
    assert second.already_staged == 2 * BATCH
    assert second.embedded == BATCH  # counts only what this run wrote
    assert EntityVector.objects.hashes(staged_gen) == current_hashes()


def test_memory_edited_between_interrupted_run_and_resume_is_re_embedded(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    seed(BATCH * 3)
    interrupted_run(embedding_server, batches_ok=2)
    gen = staging().generation
    edited = "m3"  # staged by the first batch
    assert entity_id(edited) in EntityVector.objects.hashes(gen)
    remember(edited, "an observation added after the interruption")
    new_text = text_of(edited)
    mark = len(embedding_server.texts_sent())

    result = reindex.reindex_all()

    assert result.complete and result.swapped, result
    assert new_text in sent_since(embedding_server, mark)
    assert result.already_staged == 2 * BATCH - 1
    assert result.embedded == BATCH + 1
    assert EntityVector.objects.hashes(gen)[entity_id(edited)] == text_hash(new_text)


# --- 5. a half-built generation of another space is discarded -----------------------------------


@pytest.mark.parametrize("change", ["provider", "width"])
def test_provider_or_width_change_discards_the_half_built_generation(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer, change: str
) -> None:
    if change == "provider":
        use_openai(monkeypatch, embedding_server)
    else:
        # Same identity (openai/text-embedding-3-small), width chosen by `dimensions`.
        use_openai(monkeypatch, embedding_server, model="text-embedding-3-small", width=WIDTH)
    names = seed(BATCH * 3)
    interrupted_run(embedding_server, batches_ok=2)
    old = staging()
    assert EntityVector.objects.row_count(old.generation) == 2 * BATCH
    if change == "provider":
        use_deterministic(monkeypatch, WIDTH)  # another provider at the same width
    else:
        use_openai(monkeypatch, embedding_server, model="text-embedding-3-small", width=WIDTH * 2)
    mark = len(embedding_server.texts_sent())

    result = reindex.reindex_all()

    assert result.discarded is not None
    assert result.discarded["generation"] == old.generation
    assert result.discarded["identity"] == old.identity
    assert result.complete and result.swapped, result
    assert result.already_staged == 0 and result.embedded == len(names)
    # Only the new generation remains (its number may be reused), all of it the new space's.
    assert EntityVector.objects.generations_present() == [result.generation]
    live = generations.live_generation()
    assert live is not None and live.generation == result.generation
    assert live.identity != old.identity or live.dimensions != old.dimensions
    new_rows = rows(live.generation)
    assert {eid for eid, _, _ in new_rows} == active_ids()
    if change == "provider":
        fresh = DeterministicEmbedder(WIDTH)
        for eid, _, blob in new_rows:
            expected = fresh.embed([Entity.objects.embedding_texts([eid])[eid]])[0]
            assert np.frombuffer(blob, dtype=np.float32).tolist() == expected.tolist()
    else:
        assert {len(blob) for _, _, blob in new_rows} == {4 * WIDTH * 2}
    if change == "width":
        # Every memory went to the provider again at the new width.
        assert {text_of(n) for n in names} <= set(sent_since(embedding_server, mark))


# --- 6. abort after consecutive failures --------------------------------------------------------


def test_abort_after_five_consecutive_failures_keeps_staging_and_the_next_run_continues(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_deterministic(monkeypatch)
    seed(BATCH * 8)
    old_live = build_live()
    before = live_state()
    use_openai(monkeypatch, embedding_server)
    # Probe and two batches answer; the next five batches fail every attempt (503, three
    # attempts each). A run that did not stop would find the server healthy again after.
    embedding_server.script = [Reply()] * 3 + [OVERLOADED] * (3 * MAX_CONSECUTIVE_FAILURES)

    aborted = reindex.reindex_all()

    assert not aborted.complete  # the command exits 1
    data = aborted.as_json()  # what `memesh reindex --json` prints
    assert data["abortedAfter"] == 5
    assert data["complete"] is False
    assert data["embedded"] == 2 * BATCH
    # It stopped: the last three batches were never sent.
    assert len(embedding_server.requests) == 3 + 3 * MAX_CONSECUTIVE_FAILURES
    gen = staging().generation
    assert EntityVector.objects.row_count(gen) == 2 * BATCH
    assert live_state() == before

    mark = len(embedding_server.texts_sent())
    result = reindex.reindex_all()

    assert result.complete and result.swapped, result
    assert result.generation == gen
    assert result.already_staged == 2 * BATCH
    assert result.embedded == 6 * BATCH
    assert len(set(sent_since(embedding_server, mark)) - {generations.PROBE_TEXT}) == 6 * BATCH
    assert not EntityVector.objects.table_exists(old_live.generation)


# --- 7. refused up front ------------------------------------------------------------------------


def test_probe_failure_is_refused_before_any_batch(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_deterministic(monkeypatch)
    seed(10)
    build_live()
    before = live_state()
    present = EntityVector.objects.generations_present()
    use_openai(monkeypatch, embedding_server)
    embedding_server.api_key = "the-right-key"  # the configured key "k" gets a 401

    with pytest.raises(ReindexRefused, match="401"):
        reindex.reindex_all()
    with pytest.raises(ReindexRefused, match="test embedding"):
        reindex.reindex_all()

    assert len(embedding_server.requests) == 2  # one probe per run, no batch
    assert live_state() == before
    assert marker(STAGING_KEY) is None
    assert EntityVector.objects.generations_present() == present


def test_probe_width_other_than_the_declared_width_is_refused(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_deterministic(monkeypatch)
    seed(10)
    build_live()
    before = live_state()
    # text-embedding-3-small declares 1536; this server answers WIDTH.
    use_openai(monkeypatch, embedding_server, model="text-embedding-3-small")

    with pytest.raises(ReindexRefused, match="width"):
        reindex.reindex_all()

    assert len(embedding_server.requests) == 1
    assert live_state() == before
    assert marker(STAGING_KEY) is None


def test_unreadable_staging_marker_is_refused_with_the_discard_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(10)
    build_live()
    before = live_state()
    MetaEntry.objects.update_or_create(key=STAGING_KEY, defaults={"value": "garbage"})

    with pytest.raises(ReindexRefused, match="--discard-generation"):
        reindex.reindex_all()

    # Neither resumed nor silently discarded.
    assert marker(STAGING_KEY) == "garbage"
    assert live_state() == before
    # The way out the message names works, and a rebuild follows.
    reindex.discard_generation()
    assert marker(STAGING_KEY) is None
    assert live_state() == before
    assert reindex.reindex_all().complete


# --- 8. writes during a same-width rebuild ------------------------------------------------------


def test_writes_during_a_rebuild_keep_their_vectors_and_forgotten_stay_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(BATCH * 3)
    build_live()
    staged_early, staged_later = "m1", f"m{BATCH * 3 - 1}"  # batch one / batch three
    edited = "m2"

    def live_writers() -> None:
        remember("newcomer", "captured while the rebuild ran")
        remember(edited, "edited while the rebuild ran")
        forget(staged_early)
        forget(staged_later)
        embedding_pass.embed_pending()  # the worker writes the live generation

    result = reindex.reindex_all(progress=after_batches(1, live_writers))

    assert result.complete and result.swapped, result
    gen = result.generation
    assert gen is not None
    hashes = EntityVector.objects.hashes(gen)
    assert hashes[entity_id("newcomer")] == text_hash(text_of("newcomer"))
    assert hashes[entity_id(edited)] == text_hash(text_of(edited))
    for name in (staged_early, staged_later):
        eid = entity_id(name)
        assert eid not in hashes, f"forgotten {name} came back with a vector"
        assert eid not in bit_rowids(gen)
    assert hashes == current_hashes()
    assert set(bit_rowids(gen)) == active_ids()
    # The forgotten stay out of semantic recall too.
    found = {e["name"] for e in recall("mtok1 remembered detail")["entities"]}
    assert staged_early not in found


def test_a_write_once_the_last_pass_has_begun_is_the_workers_and_the_run_is_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(5)
    build_live()
    ordinary_pass = embedding_pass.embed_pending

    def pass_with_a_writer_beside_it() -> embedding_pass.EmbedReport:
        report = ordinary_pass()
        remember("late", "written while the rebuild's last pass ran")  # after its read
        return report

    monkeypatch.setattr(embedding_pass, "embed_pending", pass_with_a_writer_beside_it)
    result = reindex.reindex_all()

    assert result.complete and result.swapped and not result.reindex_needed, result
    assert result.missing == 0
    live = generations.live_generation()
    assert live is not None and live.generation == result.generation
    # The late memory waits for the worker in the new live index, as any new write does.
    assert EntityVector.objects.pending_count(live.generation) == 1


# --- 9. --namespace ------------------------------------------------------------------------------


def test_namespace_run_writes_in_place_and_is_judged_on_its_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(5, "a", namespace="personal")
    seed(5, "b", namespace="team")
    live = build_live()
    present = EntityVector.objects.generations_present()
    # personal: one memory edited, one new; team: one new. None of them embedded yet.
    remember("a0", "alpha edit")
    remember("a-new", "alpha newcomer", namespace="personal")
    remember("b-new", "beta newcomer", namespace="team")
    staged_during: list[Any] = []

    result = reindex.reindex_namespace(
        "personal", progress=lambda _: staged_during.append(marker(STAGING_KEY))
    )

    assert result.complete, result
    assert result.embedded == 2
    assert result.reindex_needed  # team is still behind, and the flag says so
    assert staged_during == [None]  # in place: no staging generation at any point
    assert generations.live_generation() == live
    assert EntityVector.objects.generations_present() == present
    assert EntityVector.objects.pending_count(live.generation, "personal") == 0
    assert EntityVector.objects.pending_count(live.generation, "team") == 1
    # The verdict is scoped the same way.
    remember("a1", "another alpha edit")
    again = reindex.reindex_namespace("personal")
    data = again.as_json()
    assert again.complete, data  # the command exits 0
    assert data["complete"] is True and data["embedded"] == 1
    assert data["reindex_needed"] is True
    hashes = EntityVector.objects.hashes(live.generation)
    assert hashes[entity_id("a0")] == text_hash(text_of("a0"))
    assert entity_id("b-new") not in hashes


def test_namespace_run_is_refused_when_the_live_index_is_another_embedders(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_deterministic(monkeypatch)
    seed(5, "a", namespace="personal")
    build_live()
    before = live_state()
    use_openai(monkeypatch, embedding_server)

    with pytest.raises(ReindexRefused):
        reindex.reindex_namespace("personal")

    assert live_state() == before
    assert marker(STAGING_KEY) is None
    # At most the probes: no memory was sent.
    assert set(embedding_server.texts_sent()) <= {generations.PROBE_TEXT}


# --- 11. recall during a width change -----------------------------------------------------------


@pytest.mark.parametrize("same_identity", [False, True], ids=["new-provider", "same-model"])
def test_recall_is_keyword_only_and_degraded_during_a_width_change(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer, same_identity: bool
) -> None:
    def configure(width: int) -> None:
        if same_identity:
            use_openai(monkeypatch, embedding_server, model="text-embedding-3-small", width=width)
        else:
            use_deterministic(monkeypatch, width)

    configure(WIDTH)
    seed(BATCH + 3)
    build_live()
    query = "mtok4 remembered"
    assert recall(query)["retrieval"]["mode"] == "hybrid"
    configure(WIDTH * 2)
    during: list[dict[str, Any]] = []

    def retrieval() -> dict[str, Any]:
        answer = recall(query)
        return {k: answer["retrieval"][k] for k in ("mode", "degraded")}

    assert retrieval() == {"mode": "fts", "degraded": True}
    result = reindex.reindex_all(progress=after_batches(1, lambda: during.append(retrieval())))

    assert during == [{"mode": "fts", "degraded": True}]
    assert result.complete and result.swapped, result
    assert retrieval() == {"mode": "hybrid", "degraded": False}
    assert "m4" in {e["name"] for e in recall(query)["entities"]}


@pytest.mark.parametrize("stored", ['"garbage"', "[1, 2]", '{"generation": 0}'])
def test_an_unreadable_live_marker_turns_vector_search_off_instead_of_failing(
    stored: str,
) -> None:
    MetaEntry.objects.update_or_create(key=LIVE_KEY, defaults={"value": {}})
    with connection.cursor() as cur:  # as another program, or a damaged file, could leave it
        cur.execute("UPDATE graph_metaentry SET value = %s WHERE key = %s", [stored, LIVE_KEY])

    with pytest.raises(generations.UnreadableMarker):
        generations.read_marker(LIVE_KEY)
    assert generations.live_generation() is None
