"""`memesh reindex`: generations, resume, abort, refusals, and the exit-code rules.

The reference's "memesh reindex" section is the spec. Vectors come from the deterministic
provider (instant, no server) or from FakeEmbeddingServer over real HTTP when a test needs the
provider to fail or needs to see what was sent. Writes inside pytest-django's transaction fire
no on_commit hook, so each test builds the live index explicitly with `embed_pending()`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from graph.embedding.deterministic import DeterministicEmbedder
from graph.indexing import reindex, vectors
from graph.indexing.reindex import BATCH, MAX_CONSECUTIVE_FAILURES, ReindexRefused, ReindexResult
from graph.indexing.vectors import LIVE_KEY, STAGING_KEY
from graph.models import Entity, EntityVector, MetaEntry, Status
from graph.ops.recall.vector_side import plan_vector_side
from graph.search.text import text_hash
from graph.storage.vector_index import table_name
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.helpers import forget, recall, remember
from tests.processes import PROCS, memesh_env, run_python

pytestmark = pytest.mark.django_db

WIDTH = 16  # small vectors keep every run fast; vec0 bit tables need a multiple of 8
FAKE_MODEL = "fake-embed"  # not a known OpenAI model, so the width is learnt from the probe
# Fails at once: 401 is configuration, never retried, so a failing batch is one request.
REFUSE = Reply(status=401)
# Weather with Retry-After: 0, so the three attempts of a batch cost no sleep.
OVERLOADED = Reply(status=503, headers={"Retry-After": "0"})


# --- fixtures and helpers ---------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_query_cache() -> Iterator[None]:
    """Query vectors are cached per process; one test's cache must not answer another's."""
    vectors.query_cache_clear()
    yield
    vectors.query_cache_clear()


@pytest.fixture
def embedding_server(embedding_server: FakeEmbeddingServer) -> FakeEmbeddingServer:
    """The suite's fake embedding server, answering vectors of this module's WIDTH."""
    embedding_server.width = WIDTH
    return embedding_server


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


def seed(count: int, prefix: str = "m", **fields: Any) -> list[str]:
    """`count` memories, each with a word only it carries (`<prefix>tok<i>`)."""
    names = [f"{prefix}{i}" for i in range(count)]
    for i, name in enumerate(names):
        remember(name, f"{prefix}tok{i} remembered detail number {i}", **fields)
    return names


def build_live() -> vectors.Generation:
    """The live index for the configured embedder, every active memory in it."""
    report = vectors.embed_pending()
    assert report.error is None and report.skipped is None, report
    live = vectors.live_generation()
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
    with connection.cursor() as cur:
        cur.execute(f"SELECT rowid FROM {table_name(generation)} ORDER BY rowid")
        return [row[0] for row in cur.fetchall()]


def marker(key: str) -> Any:
    return MetaEntry.objects.filter(key=key).values_list("value", flat=True).first()


def live_state() -> tuple[Any, list[tuple[int, str, bytes]], list[int]]:
    """The live marker, rows and bit-table rows: what "the live index is untouched" compares."""
    live = vectors.live_generation()
    assert live is not None
    return marker(LIVE_KEY), rows(live.generation), bit_rowids(live.generation)


def staging() -> vectors.Generation:
    gen = vectors.read_marker(STAGING_KEY)
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


def run_cli(*args: str) -> tuple[int, str]:
    """`memesh reindex ARGS`: (exit code, stdout). A refusal raises CommandError."""
    out = StringIO()
    try:
        call_command("reindex", *args, stdout=out, stderr=StringIO())
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def sent_since(server: FakeEmbeddingServer, start: int) -> list[str]:
    return server.texts_sent()[start:]


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
        seen.append((vectors.live_generation(), vectors.read_marker(STAGING_KEY)))

    result = reindex.reindex_all(progress=watch)

    assert result.complete and result.swapped, result
    assert seen, "the rebuild reported no progress"
    new_gen = result.generation
    assert new_gen is not None and new_gen != old.generation
    for live_then, staging_then in seen:
        assert live_then == old
        assert staging_then is not None and staging_then.generation == new_gen
    live = vectors.live_generation()
    assert live is not None and live.generation == new_gen
    assert marker(STAGING_KEY) is None
    # The old generation is gone, table and rows.
    assert not EntityVector.objects.table_exists(old.generation)
    assert EntityVector.objects.row_count(old.generation) == 0
    assert EntityVector.objects.generations_present() == [new_gen]
    # Every active memory has a vector of its current text.
    assert EntityVector.objects.hashes(new_gen) == current_hashes()
    assert set(bit_rowids(new_gen)) == active_ids()
    assert run_cli()[0] == 0


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
        answer = recall("mtok7")
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
    assert vectors.live_generation() == old
    after = recall("mtok7")
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
    assert set(sent) - {vectors.PROBE_TEXT} == expected
    assert sent.count(vectors.PROBE_TEXT) <= 1
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
    live = vectors.live_generation()
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

    code, out = run_cli("--json")

    assert code == 1
    data = json.loads(out)
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
    assert len(set(sent_since(embedding_server, mark)) - {vectors.PROBE_TEXT}) == 6 * BATCH
    assert not EntityVector.objects.table_exists(old_live.generation)


# --- 7. refused up front ------------------------------------------------------------------------


def test_probe_failure_is_refused_before_any_batch(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_deterministic(monkeypatch)
    seed(10)
    build_live()
    before = live_state()
    generations = EntityVector.objects.generations_present()
    use_openai(monkeypatch, embedding_server)
    embedding_server.api_key = "the-right-key"  # the configured key "k" gets a 401

    with pytest.raises(ReindexRefused, match="401"):
        reindex.reindex_all()
    with pytest.raises(CommandError, match="test embedding"):
        run_cli()

    assert len(embedding_server.requests) == 2  # one probe per run, no batch
    assert live_state() == before
    assert marker(STAGING_KEY) is None
    assert EntityVector.objects.generations_present() == generations


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
    with pytest.raises(CommandError, match="--discard-generation"):
        run_cli()

    # Neither resumed nor silently discarded.
    assert marker(STAGING_KEY) == "garbage"
    assert live_state() == before
    # The way out the message names works, and a rebuild follows.
    assert run_cli("--discard-generation")[0] == 0
    assert marker(STAGING_KEY) is None
    assert live_state() == before
    assert reindex.reindex_all().complete


def test_reindex_without_sqlite_vec_is_refused_and_leaves_the_live_index(tmp_path: Path) -> None:
    db = tmp_path / "kg.db"
    env = memesh_env(
        tmp_path,
        MEMESH_DB_PATH=str(db),
        MEMESH_EMBEDDER="deterministic",
        MEMESH_EMBEDDER_DIMENSIONS=str(WIDTH),
        MEMESH_CELERY_EAGER="true",
        MEMESH_EMBED_DEBOUNCE_SECONDS="0",
    )
    setup = (
        ["manage.py", "migrate", "--verbosity", "0"],
        [str(PROCS / "remember_many.py"), "k", "5"],
    )
    for args in setup:
        done = run_python(args, env)
        assert done.returncode == 0, done.stderr

    def state() -> tuple[Any, Any, list[tuple[Any, ...]]]:
        con = sqlite3.connect(db)
        try:
            meta = dict(con.execute("SELECT key, value FROM graph_metaentry"))
            vecs = con.execute(
                "SELECT generation, entity_id, text_hash, embedding FROM graph_entityvector"
                " ORDER BY generation, entity_id"
            ).fetchall()
        finally:
            con.close()
        return meta.get(LIVE_KEY), meta.get(STAGING_KEY), vecs

    before = state()
    assert before[0] is not None and len(before[2]) == 5, "the live index was not built"

    refused = run_python(
        ["manage.py", "reindex"], {**env, "MEMESH_SQLITE_VEC_PATH": "/nonexistent/vec0"}
    )

    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "sqlite-vec" in refused.stderr
    assert state() == before


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
        vectors.embed_pending()  # the worker writes the live generation

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
    ordinary_pass = vectors.embed_pending

    def pass_with_a_writer_beside_it() -> vectors.EmbedReport:
        report = ordinary_pass()
        remember("late", "written while the rebuild's last pass ran")  # after its read
        return report

    monkeypatch.setattr(vectors, "embed_pending", pass_with_a_writer_beside_it)
    result = reindex.reindex_all()

    assert result.complete and result.swapped and not result.reindex_needed, result
    assert result.missing == 0
    live = vectors.live_generation()
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
    generations = EntityVector.objects.generations_present()
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
    assert vectors.live_generation() == live
    assert EntityVector.objects.generations_present() == generations
    assert EntityVector.objects.pending_count(live.generation, "personal") == 0
    assert EntityVector.objects.pending_count(live.generation, "team") == 1
    # The command's verdict is scoped the same way.
    remember("a1", "another alpha edit")
    code, out = run_cli("--namespace", "personal", "--json")
    data = json.loads(out)
    assert code == 0, out
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
    with pytest.raises(CommandError):
        run_cli("--namespace", "personal")

    assert live_state() == before
    assert marker(STAGING_KEY) is None
    # At most the probes: no memory was sent.
    assert set(embedding_server.texts_sent()) <= {vectors.PROBE_TEXT}


# --- 10. the other flags -------------------------------------------------------------------------


def test_vectors_flag_is_rejected_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    use_deterministic(monkeypatch)
    seed(5)
    build_live()
    before = live_state()
    generations = EntityVector.objects.generations_present()

    with pytest.raises(CommandError, match="--vectors"):
        run_cli("--vectors")
    err = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("reindex", "--vectors", "--json", stdout=StringIO(), stderr=err)

    assert exit_info.value.code != 0
    # --json errors are the failure envelope, on stderr (api/cli/base.py).
    assert json.loads(err.getvalue())["success"] is False
    assert live_state() == before
    assert marker(STAGING_KEY) is None
    assert EntityVector.objects.generations_present() == generations


def test_discard_generation_drops_staging_only_and_is_a_no_op_without_one(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    seed(BATCH * 3)
    live = build_live()
    before = live_state()
    interrupted_run(embedding_server, batches_ok=2)
    half = staging()

    code, out = run_cli("--discard-generation")

    assert code == 0
    assert str(half.generation) in out
    assert marker(STAGING_KEY) is None
    assert not EntityVector.objects.table_exists(half.generation)
    assert EntityVector.objects.row_count(half.generation) == 0
    assert live_state() == before
    assert EntityVector.objects.generations_present() == [live.generation]

    code, out = run_cli("--discard-generation")

    assert code == 0
    assert "Nothing to discard" in out
    assert live_state() == before


def test_fts_rebuilds_the_keyword_index(monkeypatch: pytest.MonkeyPatch) -> None:
    use_deterministic(monkeypatch)
    seed(5)
    build_live()
    before = live_state()
    # Lose the keyword index, as a downgrade can leave it.
    with connection.cursor() as cur:
        cur.execute("DELETE FROM graph_entity_fts")
    monkeypatch.setattr(
        settings, "MEMESH_EMBEDDER", "none"
    )  # keyword-only recall: only FTS can find it
    assert recall("mtok3")["entities"] == []

    code, out = run_cli("--fts", "--json")

    assert code == 0
    assert json.loads(out)["entities"] == 5
    assert [e["name"] for e in recall("mtok3")["entities"]] == ["m3"]
    use_deterministic(monkeypatch)
    assert live_state() == before  # the vector index is not what --fts rebuilds


def test_json_output_carries_the_documented_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    use_deterministic(monkeypatch)
    seed(7)

    code, out = run_cli("--json")

    assert code == 0
    data = json.loads(out)
    assert {"embedded", "already_staged", "abortedAfter", "complete"} <= data.keys()
    assert data["embedded"] == 7
    assert data["already_staged"] == 0
    assert data["abortedAfter"] is None
    assert data["complete"] is True


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


# --- 12. exit codes -----------------------------------------------------------------------------


def test_exit_0_for_a_complete_run_and_for_a_run_with_nothing_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    assert run_cli()[0] == 0  # no memories: nothing owned, nothing attempted
    seed(BATCH + 1)
    code, out = run_cli()
    assert code == 0
    assert "Reindex complete" in out


def test_exit_1_when_every_write_was_refused_though_every_memory_has_a_vector(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    # The provider switch the command exists for: the stale live index is "complete", but
    # none of it could be regenerated.
    use_deterministic(monkeypatch)
    seed(BATCH * 2)
    build_live()
    before = live_state()
    use_openai(monkeypatch, embedding_server)
    embedding_server.script = [Reply()] + [REFUSE] * 2  # the probe answers, both batches fail

    code, out = run_cli()

    assert code == 1
    assert "Could not be regenerated: " + str(BATCH * 2) in out
    assert live_state() == before
    code, out = run_cli("--json")  # the server is healthy again: the run resumes and finishes
    assert code == 0, out


def test_exit_1_when_one_attempt_failed_even_if_the_rest_succeeded(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    seed(BATCH * 3)
    embedding_server.script = [
        Reply(),
        Reply(),
        REFUSE,
    ]  # probe, batch 1, batch 2 fails, batch 3 ok

    code, out = run_cli("--json")

    data = json.loads(out)
    assert code == 1
    assert data["complete"] is False
    assert data["failed"] == BATCH
    assert data["embedded"] == 2 * BATCH
    assert data["reindex_needed"] is True
    assert vectors.live_generation() is None  # nothing was swapped in


def test_namespace_exit_1_when_its_own_memories_could_not_be_embedded(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    seed(3, "a", namespace="personal")
    seed(3, "b", namespace="team")
    live = build_live()
    remember("a-new", "alpha newcomer", namespace="personal")
    embedding_server.script = [Reply(), REFUSE]  # the probe answers, the only batch fails

    code, out = run_cli("--namespace", "personal", "--json")

    data = json.loads(out)
    assert code == 1
    assert data["complete"] is False
    assert data["failed"] == 1
    assert EntityVector.objects.pending_count(live.generation, "personal") == 1


@pytest.mark.parametrize("stored", ['"garbage"', "[1, 2]", '{"generation": 0}'])
def test_an_unreadable_live_marker_turns_vector_search_off_instead_of_failing(
    stored: str,
) -> None:
    MetaEntry.objects.update_or_create(key=LIVE_KEY, defaults={"value": {}})
    with connection.cursor() as cur:  # as another program, or a damaged file, could leave it
        cur.execute("UPDATE graph_metaentry SET value = %s WHERE key = %s", [stored, LIVE_KEY])

    with pytest.raises(vectors.UnreadableMarker):
        vectors.read_marker(LIVE_KEY)
    assert vectors.live_generation() is None
