"""`memesh reindex` (graph/indexing/reindex.py's transport): its flags (--namespace, --fts,
--discard-generation, the retired --vectors, --json), its output, its exit codes — 0 for a
complete run, 1 otherwise — and a refusal as a command error naming the way out; and the command
as a process without sqlite-vec. The rebuild itself: tests/services/test_reindex.py.
"""

from __future__ import annotations

import json
import sqlite3
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from graph.indexing import generations
from graph.indexing.generations import LIVE_KEY, STAGING_KEY
from graph.indexing.reindex import BATCH
from graph.models import EntityVector, MetaEntry
from graph.search.text import text_hash
from tests.fakes.embedding_server import FakeEmbeddingServer, Reply
from tests.helpers import recall, remember
from tests.processes import PROCS, memesh_env, run_python
from tests.reindexing import (
    REFUSE,
    WIDTH,
    build_live,
    entity_id,
    interrupted_run,
    live_state,
    marker,
    seed,
    staging,
    text_of,
    use_deterministic,
    use_openai,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_query_cache")]


def run_cli(*args: str) -> tuple[int, str]:
    """`memesh reindex ARGS`: (exit code, stdout). A refusal raises CommandError."""
    out = StringIO()
    try:
        call_command("reindex", *args, stdout=out, stderr=StringIO())
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_a_refusal_is_a_command_error_naming_the_way_out_which_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(10)
    build_live()
    before = live_state()
    MetaEntry.objects.update_or_create(key=STAGING_KEY, defaults={"value": "garbage"})

    with pytest.raises(CommandError, match="--discard-generation"):
        run_cli()

    assert marker(STAGING_KEY) == "garbage"
    assert run_cli("--discard-generation")[0] == 0
    assert marker(STAGING_KEY) is None
    assert live_state() == before


def test_a_refused_namespace_run_is_a_command_error_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_deterministic(monkeypatch)
    seed(5, "a", namespace="personal")
    build_live()
    before = live_state()
    use_openai(monkeypatch, embedding_server)  # the live index is another embedder's

    with pytest.raises(CommandError):
        run_cli("--namespace", "personal")

    assert live_state() == before
    assert marker(STAGING_KEY) is None
    assert set(embedding_server.texts_sent()) <= {generations.PROBE_TEXT}


def test_a_namespace_run_exits_0_once_its_own_memories_are_embedded_though_others_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_deterministic(monkeypatch)
    seed(5, "a", namespace="personal")
    seed(5, "b", namespace="team")
    live = build_live()
    remember("a1", "another alpha edit")
    remember("b-new", "beta newcomer", namespace="team")

    code, out = run_cli("--namespace", "personal", "--json")

    data = json.loads(out)
    assert code == 0, out
    assert data["complete"] is True and data["embedded"] == 1
    assert data["reindex_needed"] is True
    hashes = EntityVector.objects.hashes(live.generation)
    assert hashes[entity_id("a1")] == text_hash(text_of("a1"))
    assert entity_id("b-new") not in hashes


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


def test_vectors_flag_is_rejected_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    use_deterministic(monkeypatch)
    seed(5)
    build_live()
    before = live_state()
    present = EntityVector.objects.generations_present()

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
    assert EntityVector.objects.generations_present() == present


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


def test_discard_generation_reports_what_it_dropped_as_json(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    use_openai(monkeypatch, embedding_server)
    seed(BATCH * 3)
    build_live()
    interrupted_run(embedding_server, batches_ok=2)
    half = staging()
    rows = EntityVector.objects.row_count(half.generation)

    code, out = run_cli("--discard-generation", "--json")

    assert code == 0
    assert rows > 0
    assert json.loads(out) == {
        "discarded": True,
        "generations": [half.generation],
        "rows": rows,
        "markerUnreadable": False,
    }
    assert list(json.loads(out)) == ["discarded", "generations", "rows", "markerUnreadable"]


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
    assert generations.live_generation() is None  # nothing was swapped in


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
