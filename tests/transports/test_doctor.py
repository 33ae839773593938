"""`memesh doctor`: which embedder, whether it works, and the state of the vector index.

In-process runs (call_command) read the test database; the process runs check what a user
sees (stdout, stderr and the exit status) against a real MEMESH_HOME.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from core.config_sections import config_update
from dream.mining import state as mining_state
from graph.embedding import provider
from graph.indexing import embedding_pass, generations
from tests.fakes.embedding_server import FakeEmbeddingServer
from tests.helpers import remember
from tests.processes import memesh_env, run_python
from tests.transcripts import install
from tests.vector_support import FAKE_MODEL, use_embedder, use_fake_openai

pytestmark = pytest.mark.clean_indexes  # conftest's _clean_indexes

KEY = "sk-doctor-3b9f0c1d2e4a5b6c7d8e9f0a1b2c3d4e"


def doctor(*args: str) -> tuple[int, dict[str, Any]]:
    """Run `doctor --json` in-process: (exit status, report)."""
    out = StringIO()
    status = 0
    try:
        call_command("doctor", "--json", *args, stdout=out)
    except SystemExit as exc:
        status = int(exc.code or 0)
    return status, json.loads(out.getvalue())


def check(report: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [c for c in report["checks"] if c["name"] == name]
    return found


@pytest.mark.django_db
def test_doctor_reports_provider_probe_generation_pending_and_staging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic")
    for i in range(3):
        remember(f"embedded-{i}", f"embedded memory {i}")
    assert embedding_pass.embed_pending().embedded == 3
    for i in range(2):
        remember(f"waiting-{i}", f"memory still waiting {i}")
    live = generations.live_generation()
    assert live is not None
    # A half-built generation, as an interrupted reindex leaves it.
    embedder = provider.current()
    assert embedder is not None
    staging = generations.new_generation(embedder, embedder.dimensions or 384)
    generations.write_marker(generations.STAGING_KEY, staging)

    status, report = doctor()

    assert status == 0 and report["ok"] is True
    probe = check(report, "embedder")
    assert probe["status"] == "ok"
    assert probe["data"]["provider"] == "deterministic"
    assert probe["data"]["identity"] == embedder.identity
    assert probe["data"]["dimensions"] == 384  # the probe ran and measured the width
    index = check(report, "vector index")
    assert index["data"]["generation"] == live.generation
    assert index["data"]["identity"] == embedder.identity
    assert (index["data"]["vectors"], index["data"]["pending"]) == (3, 2)
    assert check(report, "staging index")["data"]["generation"] == staging.generation
    assert staging.generation != live.generation


@pytest.mark.django_db
def test_doctor_without_an_embedder_is_ok_and_says_keyword_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "none")

    status, report = doctor()

    assert status == 0 and report["ok"] is True
    assert check(report, "embedder")["data"] == {"provider": "none"}


@pytest.mark.django_db
def test_doctor_names_an_index_built_by_another_embedder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "deterministic")
    remember("a", "some memory")
    assert embedding_pass.embed_pending().embedded == 1
    use_embedder(monkeypatch, "deterministic", dimensions="256")

    _, report = doctor()

    index = check(report, "vector index")
    assert index["status"] == "warn"
    assert index["data"]["identity"] == "deterministic/word-hash-384"
    assert "reindex" in index["detail"]


@pytest.mark.django_db
def test_doctor_exits_1_when_the_embedder_fails(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    embedding_server.api_key = "the-right-key"
    use_fake_openai(monkeypatch, embedding_server, api_key=KEY)

    status, report = doctor()

    assert status == 1 and report["ok"] is False
    probe = check(report, "embedder")
    assert probe["status"] == "fail"
    assert probe["data"]["error"].startswith("auth:")
    assert len(embedding_server.requests) == 1  # the probe did reach the provider

    # The same provider answering again: exit 0.
    embedding_server.api_key = KEY
    status, report = doctor()
    assert status == 0 and check(report, "embedder")["status"] == "ok"


@pytest.mark.django_db
def test_credentials_in_the_base_url_never_appear_in_doctor_output(
    monkeypatch: pytest.MonkeyPatch, embedding_server: FakeEmbeddingServer
) -> None:
    # A base URL may carry credentials in its userinfo (graph/embedding/remote.py keeps them
    # out of its own messages); the doctor report is shared in bug reports like any output.
    password = "hunter2-doctor-userinfo"
    base_url = f"http://bob:{password}@127.0.0.1:{embedding_server.port}/v1"
    use_fake_openai(monkeypatch, embedding_server, base_url=base_url)

    status, report = doctor()
    out = StringIO()
    call_command("doctor", stdout=out)

    assert status == 0  # the provider works: only the report is under test
    assert password not in json.dumps(report)
    assert password not in out.getvalue()


# --- the real command, as a user runs it ------------------------------------------------------


@pytest.fixture(scope="module")
def migrated_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("doctor-home")
    done = run_python(["-m", "memesh_site.cli", "migrate", "--verbosity", "0"], memesh_env(home))
    assert done.returncode == 0, done.stderr
    return home


@pytest.mark.parametrize("key_from", ["env", "config-file"])
def test_the_api_key_never_appears_in_doctor_output(
    migrated_home: Path, embedding_server: FakeEmbeddingServer, key_from: str
) -> None:
    # The server refuses the key and echoes it back in its error body, as some do.
    embedding_server.api_key = "the-right-key"
    config = migrated_home / "config.json"
    if key_from == "env":
        config.unlink(missing_ok=True)
        env = memesh_env(
            migrated_home,
            MEMESH_EMBEDDER="openai",
            MEMESH_EMBEDDER_BASE_URL=embedding_server.base_url_openai,
            MEMESH_EMBEDDER_MODEL=FAKE_MODEL,
            MEMESH_EMBEDDER_API_KEY=KEY,
        )
    else:
        settings = {
            "provider": "openai",
            "baseUrl": embedding_server.base_url_openai,
            "model": FAKE_MODEL,
            "apiKey": KEY,
        }
        config.write_text(json.dumps({"embedder": settings}))
        env = memesh_env(migrated_home)
    try:
        # A failed embedding pass records its error, which doctor then reports too.
        embedded = run_python(["-m", "memesh_site.cli", "embed", "--json"], env, timeout=60)
        as_json = run_python(["-m", "memesh_site.cli", "doctor", "--json"], env, timeout=60)
        as_text = run_python(["-m", "memesh_site.cli", "doctor"], env, timeout=60)
    finally:
        config.unlink(missing_ok=True)

    # The key was sent (so the echo carried it) and the failure was recorded.
    assert {r.headers.get("authorization") for r in embedding_server.requests} == {f"Bearer {KEY}"}
    assert embedded.returncode == 1
    report = json.loads(as_json.stdout)
    assert check(report, "embedder")["status"] == "fail"
    assert check(report, "embedder")["data"]["apiKey"] == "***"
    assert "last embedding error" in {c["name"] for c in report["checks"]}
    for run in (embedded, as_json, as_text):
        assert run.returncode == 1
        assert KEY not in run.stdout + run.stderr
    assert "Incorrect API key provided" in as_text.stdout  # the echo itself is shown, redacted


def test_the_doctor_command_exits_1_when_the_embedder_is_unreachable(
    migrated_home: Path,
) -> None:
    env = memesh_env(
        migrated_home,
        MEMESH_EMBEDDER="ollama",
        MEMESH_EMBEDDER_BASE_URL="http://127.0.0.1:9",  # discard port: nothing listens
        MEMESH_EMBEDDER_TIMEOUT="2",
    )

    result = run_python(["-m", "memesh_site.cli", "doctor"], env, timeout=60)

    assert result.returncode == 1
    assert "embedder: ollama/nomic-embed-text does not work: network" in result.stdout


@pytest.mark.django_db
def test_the_cli_and_rest_doctor_mask_a_planted_key_the_same_way(client) -> None:
    from graph.models import MetaEntry

    home = str(Path.home())
    planted = (
        f"auth: Authorization: Bearer {KEY} token={KEY[3:]}; api_key='{KEY}' "
        f"in {home}/.memesh/knowledge-graph.db"
    )
    MetaEntry.objects.create(
        key=embedding_pass.LAST_ERROR_KEY, value={"error": planted, "kind": "auth", "at": "now"}
    )

    _, cli = doctor("--no-probe")
    rest = client.get("/v1/doctor").json()["data"]

    assert check(cli, "last embedding error") == check(rest, "last embedding error")
    shown = [[(c["name"], c["status"], c["detail"]) for c in r["checks"]] for r in (cli, rest)]
    assert shown[0] == shown[1]
    masked = check(cli, "last embedding error")["detail"]
    assert KEY not in masked and KEY[3:] not in masked and home not in masked
    assert masked.startswith("auth: Authorization: Bearer *** token=***")
    assert "~/.memesh/knowledge-graph.db" in masked


# --- scheduled transcript mining (dream/doctor.py) ----------------------------------------


@pytest.mark.django_db
def test_scheduled_transcript_mining_is_reported_off_with_how_to_turn_it_on(
    transcript_project: Path,
) -> None:
    _, report = doctor("--no-probe")

    mining = check(report, "Scheduled transcript mining")
    assert mining["status"] == "ok"
    assert mining["detail"].startswith("off (transcriptMining is unset): a scheduled --if-due")
    assert "memesh config set transcriptMining true" in mining["detail"]
    assert mining["data"]["enabled"] is False


@pytest.mark.django_db
def test_scheduled_transcript_mining_on_without_an_llm_is_a_warning(
    transcript_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.setattr(settings, "MEMESH_TRANSCRIPT_MINING", True)

    status, report = doctor("--no-probe")

    mining = check(report, "Scheduled transcript mining")
    assert status == 0
    assert mining["status"] == "warn"
    assert "on (MEMESH_TRANSCRIPT_MINING=1), but no LLM is configured" in mining["detail"]


@pytest.mark.django_db
def test_scheduled_transcript_mining_on_names_when_each_project_was_mined(
    transcript_project: Path, llm: Any
) -> None:

    config_update({"transcriptMining": True})
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)
    mining_state.record_run("acme/app", timezone.now())

    _, report = doctor("--no-probe")

    mining = check(report, "Scheduled transcript mining")
    assert mining["status"] == "ok"
    assert mining["detail"].startswith(
        "on (transcriptMining true); last mined: acme/app 0.0 h ago."
    )
    assert list(mining["data"]["lastMined"]) == ["acme/app"]
