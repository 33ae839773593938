"""`memesh status`: the one-screen summary — memories by project and type, the vector index,
waiting work, the last dream, and whether the server runs (its record checked against the
process and the port) — with --json, and its exit codes (docs/operations.md)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from core import serve_record
from graph.indexing import embedding_pass, generations
from graph.models import Entity
from proposals.models import Proposal, TaskRun, TaskStatus
from tests.helpers import remember
from tests.processes import free_port, memesh_env, run_python
from tests.vector_support import use_embedder

# conftest's _clean_indexes; a home of each test's own (its serve.json and config.json).
pytestmark = [pytest.mark.clean_indexes, pytest.mark.usefixtures("home")]


@pytest.fixture(autouse=True)
def _nothing_on_the_configured_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """A configured port where nothing listens, so no server of the machine's answers for
    this one."""
    monkeypatch.setattr(settings, "MEMESH_HTTP_PORT", free_port())


def status_json() -> dict[str, Any]:
    out = StringIO()
    call_command("status", "--json", stdout=out, stderr=StringIO())
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def status_text() -> str:
    out = StringIO()
    call_command("status", stdout=out, stderr=StringIO())
    return out.getvalue()


# --- memories ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_memories_are_counted_by_project_and_type() -> None:
    for i in range(3):
        remember(f"commit-{i}", f"commit {i}", type="commit", tags=["project:acme/app"])
    remember("choice", "we use SQLite", type="decision", tags=["project:acme/app"])
    remember("both", "shared fact", tags=["project:acme/app", "project:other/repo"])
    remember("loose", "a preference of mine")
    remember("gone", "archived fact", tags=["project:acme/app"])
    Entity.objects.filter(name="gone").update(status="archived")

    memories = status_json()["memories"]

    assert (memories["active"], memories["archived"]) == (6, 1)
    assert memories["types"] == {"commit": 3, "note": 2, "decision": 1}
    assert memories["projects"] == [
        {"project": "acme/app", "count": 5, "types": {"commit": 3, "decision": 1, "note": 1}},
        {"project": "other/repo", "count": 1, "types": {"note": 1}},
        {"project": None, "count": 1, "types": {"note": 1}},
    ]
    text = status_text()
    assert "memories    6 active, 1 archived" in text
    assert any(
        line.split() == ["acme/app", "5", "commit", "3,", "decision", "1,", "note", "1"]
        for line in text.splitlines()
    )
    assert any(line.split()[:3] == ["(no", "project)", "1"] for line in text.splitlines())


@pytest.mark.django_db
def test_past_eight_projects_the_screen_says_how_many_more_and_json_lists_them_all() -> None:
    for i in range(11):
        remember(f"fact-{i}", f"fact {i}", tags=[f"project:p{i:02d}"])

    text = status_text()

    assert "… 3 more projects (3 memories): --json lists them all" in text
    assert len(status_json()["memories"]["projects"]) == 11


# --- vectors and waiting work -------------------------------------------------------------------


@pytest.mark.django_db
def test_without_an_embedder_recall_is_keyword_only_and_nothing_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "none")
    remember("a", "some memory")

    report = status_json()

    assert report["vectors"]["embedder"] is None and report["waiting"]["embeddings"] == 0
    assert "no embedder configured: recall is keyword-only" in status_text()


@pytest.mark.django_db
def test_memories_waiting_for_a_vector_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic")
    for i in range(3):
        remember(f"embedded-{i}", f"embedded memory {i}")
    assert status_json()["waiting"]["embeddings"] == 3  # no generation yet: every memory waits
    assert embedding_pass.embed_pending().embedded == 3
    remember("waiting", "memory still waiting")

    report = status_json()

    live = generations.live_generation()
    assert live is not None
    assert report["vectors"]["live"]["generation"] == live.generation
    assert (report["vectors"]["vectors"], report["waiting"]["embeddings"]) == (3, 1)
    assert f"generation {live.generation}: 3 vectors, 1 waiting" in status_text()


@pytest.mark.django_db
def test_an_index_of_another_embedder_needs_a_reindex_and_waits_for_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("a", "some memory")
    assert embedding_pass.embed_pending().embedded == 1
    use_embedder(monkeypatch, "deterministic", dimensions="256")
    remember("b", "another memory")

    report = status_json()

    assert report["vectors"]["reindexNeeded"] is True
    assert report["waiting"]["embeddings"] == 0
    assert "until `memesh reindex` completes" in status_text()


@pytest.mark.django_db
def test_queued_tasks_proposals_to_review_and_the_last_dream_are_reported() -> None:
    earlier = timezone.now() - timedelta(hours=5)
    TaskRun.objects.create(kind="dream_run", status=TaskStatus.FAILED, created_at=earlier)
    TaskRun.objects.create(
        kind="dream_patterns",
        status=TaskStatus.SUCCEEDED,
        created_at=earlier + timedelta(hours=2),
        finished_at=earlier + timedelta(hours=2),
    )
    TaskRun.objects.create(kind="reindex", status=TaskStatus.QUEUED)
    TaskRun.objects.create(kind="reindex", status=TaskStatus.RUNNING)
    Proposal.objects.create(kind="digest", fingerprint="a", created_at=earlier)
    Proposal.objects.create(kind="digest", fingerprint="b", status="rejected")

    report = status_json()

    assert report["waiting"]["tasks"] == {"queued": 1, "running": 1}
    assert report["waiting"]["proposals"] == 1
    last = report["lastDream"]["task"]
    assert (last["kind"], last["status"]) == ("dream_patterns", "succeeded")
    assert report["lastDream"]["lastProposalAt"] is not None
    text = status_text()
    assert "tasks: 1 queued, 1 running · 1 proposals to review" in text
    assert "last dream  dream_patterns succeeded 3 h ago · last proposal staged just now" in text


@pytest.mark.django_db
def test_a_dream_queued_automatically_shows_its_trigger_and_whether_the_next_is_due(
    llm: Any,
) -> None:
    TaskRun.objects.create(
        kind="dream_run",
        params={"trigger": "stop-hook"},
        status=TaskStatus.SUCCEEDED,
        created_at=timezone.now() - timedelta(hours=2),
        finished_at=timezone.now() - timedelta(hours=2),
        result={"proposalsCreated": 1},
    )

    report = status_json()

    assert report["lastDream"]["task"]["trigger"] == "stop-hook"
    auto = report["automaticDreams"]
    assert (auto["llmConfigured"], auto["due"], auto["checkEverySeconds"]) == (True, False, 3600)
    assert auto["reason"].startswith("the last dream was 2.0 h ago")
    assert [r["trigger"] for r in auto["recent"]] == ["stop-hook"]
    text = status_text()
    assert "last dream  dream_run succeeded 2 h ago (queued by the stop-hook)" in text
    assert (
        "auto dream  asked by the Stop hook and the worker every 1 h · not due: the last dream "
        "was 2.0 h ago" in text
    )


@pytest.mark.django_db
def test_automatic_dreams_are_off_without_an_llm() -> None:
    assert status_json()["automaticDreams"]["llmConfigured"] is False
    assert "auto dream  off: no LLM is configured" in status_text()


@pytest.mark.django_db
def test_an_empty_home_reports_zeros_and_no_dream() -> None:
    report = status_json()

    assert report["memories"] == {"active": 0, "archived": 0, "types": {}, "projects": []}
    assert report["lastDream"] == {"task": None, "lastProposalAt": None}
    assert report["database"]["path"] == str(settings.DATABASES["default"]["NAME"])
    assert "none recorded" in status_text()


# --- the server ---------------------------------------------------------------------------------


class _Answering(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def answering() -> Iterator[tuple[int, type[_Answering]]]:
    """A loopback HTTP server answering every GET with its handler's `body`."""

    class Handler(_Answering):
        pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], Handler
    finally:
        server.shutdown()
        server.server_close()


def write_record(home: Path, **record: Any) -> None:
    (home / serve_record.RECORD_FILENAME).write_text(json.dumps(record))


def test_no_record_and_nothing_on_the_port_is_not_running() -> None:
    state = serve_record.server_state("127.0.0.1", free_port())

    assert (state.running, state.state) == (False, "not-running")


def test_a_record_whose_process_is_gone_is_stale(home: Path) -> None:
    finished = subprocess.Popen(["true"])
    finished.wait()  # reaped: no process has this id now
    write_record(home, pid=finished.pid, host="127.0.0.1", port=free_port(), worker=True)

    state = serve_record.server_state("127.0.0.1", free_port())

    assert (state.running, state.state, state.pid) == (False, "stale", finished.pid)
    assert "is gone without removing its record" in state.detail
    assert (home / serve_record.RECORD_FILENAME).exists()  # reported, not removed


def test_a_live_process_whose_port_does_not_answer_is_not_running(home: Path) -> None:
    write_record(home, pid=os.getpid(), host="127.0.0.1", port=free_port(), worker=False)

    state = serve_record.server_state("127.0.0.1", free_port())

    assert (state.running, state.state) == (False, "not-answering")


def test_a_live_process_answering_as_memesh_is_running(
    home: Path, answering: tuple[int, type[_Answering]]
) -> None:
    port, handler = answering
    handler.body = json.dumps({"success": True, "data": {"version": "9.9.9"}}).encode()
    write_record(home, pid=os.getpid(), host="0.0.0.0", port=port, worker=True)

    state = serve_record.server_state("127.0.0.1", free_port())

    assert (state.running, state.state, state.version) == (True, "running", "9.9.9")
    assert state.url == f"http://0.0.0.0:{port}" and state.worker is True


def test_no_record_but_memesh_on_the_configured_port_is_reported_not_claimed(
    answering: tuple[int, type[_Answering]],
) -> None:
    port, handler = answering
    handler.body = json.dumps({"success": True, "data": {"version": "9.9.9"}}).encode()

    state = serve_record.server_state("127.0.0.1", port)

    assert (state.running, state.state) == (False, "unrecorded")
    assert "another MEMESH_HOME's" in state.detail


def test_something_else_on_the_port_is_not_memesh(
    home: Path, answering: tuple[int, type[_Answering]]
) -> None:
    port, handler = answering
    handler.body = b"<html>not memesh</html>"
    write_record(home, pid=os.getpid(), host="127.0.0.1", port=port, worker=True)

    assert serve_record.server_state("127.0.0.1", port).state == "not-answering"


# --- the command in its own process: exit codes ---------------------------------------------------


def test_in_its_own_process_it_exits_0_and_1_when_the_database_cannot_be_opened(
    tmp_path: Path,
) -> None:
    env = memesh_env(tmp_path / "home", MEMESH_HTTP_PORT=str(free_port()))
    done = run_python(["-m", "memesh_site.cli", "status", "--json"], env)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["server"]["state"] == "not-running"
    assert report["home"] == str(tmp_path / "home")

    unopenable = tmp_path / "not-a-database"
    unopenable.mkdir()  # a directory where the database file should be
    broken = memesh_env(tmp_path / "home", MEMESH_DB_PATH=str(unopenable))
    failed = run_python(["-m", "memesh_site.cli", "status", "--json"], broken)
    assert failed.returncode == 1 and failed.stdout == ""
    assert json.loads(failed.stderr)["errorCode"] == "storage.cannot-open"
