"""What every level of the suite shares: per-test hygiene of the in-memory state recall and the
indexes keep, and the fake servers tests at several levels point memesh at.

Each level has its own conftest.py for what only it uses: unit/ (no database), services/ (the
real SQLite with FTS5 and vec0 from migrations), transports/ (REST, MCP handlers and commands in
process), e2e/ (real OS processes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.ops.recall.access import discard_pending_accesses
from tests.fakes.embedding_server import FakeEmbeddingServer
from tests.fakes.llm_servers import FakeLLMServer
from tests.postgres import postgres_server  # noqa: F401  (a fixture for every level)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "clean_indexes: empty the keyword index and the vec0 tables around each database test",
    )


@pytest.fixture(autouse=True)
def _no_accesses_across_tests() -> Iterator[None]:
    """Recall batches access counts in memory; a test's database does not outlive it."""
    discard_pending_accesses()
    yield
    discard_pending_accesses()


@pytest.fixture(autouse=True)
def _no_index_rows_across_committing_tests(
    request: pytest.FixtureRequest, django_db_blocker: Any
) -> Iterator[None]:
    """A transaction=True test commits; Django's flush then empties the model tables only, so
    the keyword index rows and vec0 tables it wrote would leak into later tests."""
    yield
    marker = request.node.get_closest_marker("django_db")
    if marker is not None and marker.kwargs.get("transaction"):
        from tests.vector_support import reset_index_tables

        with django_db_blocker.unblock():
            reset_index_tables()


@pytest.fixture(autouse=True)
def _clean_indexes(request: pytest.FixtureRequest) -> Iterator[None]:
    """For the database tests of a module marked `clean_indexes`: no keyword index row and no
    vec0 table of an earlier test, and none left for a later one (tests that build vector
    generations count rows and reuse generation numbers).

    Autouse, switched on by the mark, rather than `usefixtures`: an autouse fixture of this
    conftest runs before every fixture a module defines or a test asks for, so a fixture that
    remembers and embeds a corpus is never emptied after it ran.
    """
    if request.node.get_closest_marker("clean_indexes") is None:
        yield
        return
    if request.node.get_closest_marker("django_db") is None:
        yield
        return
    from tests.vector_support import reset_index_tables

    reset_index_tables()
    yield
    reset_index_tables()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A MEMESH_HOME of the test's own for memesh in this process (its config.json, serve
    record and tokens are nobody else's): the test's tmp_path. A module whose every test needs
    one marks itself `pytest.mark.usefixtures("home")`; e2e/ has its own `home`, a folder for
    memesh processes."""
    from django.conf import settings

    monkeypatch.setattr(settings, "MEMESH_HOME", tmp_path)
    return tmp_path


@pytest.fixture
def fresh_query_cache() -> Iterator[None]:
    """Query vectors are cached per process; one test's cache must not answer another's. A
    module whose tests embed queries under one embedder identity asks for this."""
    from graph.indexing import query_cache

    query_cache.query_cache_clear()
    yield
    query_cache.query_cache_clear()


@pytest.fixture
def embedding_server() -> Iterator[FakeEmbeddingServer]:
    """A fake embedding server on loopback (OpenAI and Ollama formats), 384-wide vectors.

    A module that needs it set up another way overrides this fixture by name, asking for it.
    """
    with FakeEmbeddingServer() as fake:
        yield fake


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    """A fake OpenAI-compatible server configured as the `llm` provider (config.json),
    answering tests.dreams.DIGEST unless told otherwise."""
    from tests.dreams import DIGEST, llm_provider

    with (
        FakeLLMServer(kind="openai", default_text=DIGEST) as server,
        llm_provider(server, model="fake-openai-large"),
    ):
        yield server


@pytest.fixture
def transcript_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project folder (not a repository), a Claude folder (CLAUDE_CONFIG_DIR), a Codex
    folder (CODEX_HOME) and a Gemini CLI folder (GEMINI_CLI_HOME's `.gemini`) of the test's own
    at `<project>/../claude`, `<project>/../codex` and `<project>/../gemini`, with no
    transcript installed yet (tests/transcripts.py installs them) and no mining state before or
    after."""
    from django.conf import settings

    from dream.mining.state import state_path

    project = (tmp_path / "project").resolve()
    project.mkdir()
    monkeypatch.setattr(settings, "CLAUDE_CONFIG_DIR", tmp_path / "claude")
    monkeypatch.setattr(settings, "CODEX_HOME", tmp_path / "codex")
    monkeypatch.setattr(settings, "GEMINI_DIR", tmp_path / "gemini")
    monkeypatch.setattr(settings, "MEMESH_TRANSCRIPT_MINING", None)
    state_path().unlink(missing_ok=True)
    yield project
    state_path().unlink(missing_ok=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """schemathesis names each operation's test `test_…[GET /v1/health]` but gives all of them
    one node id; pytest-xdist tells tests apart by node id and would run only one of them.
    Every item's node id carries its own name's parameter part.

    On PostgreSQL (MEMESH_TEST_BACKEND=postgresql: tests/services/test_storage_on_postgres.py)
    the tests of SQLite's own machinery (`sqlite_only`) are deselected, not skipped: they have
    no PostgreSQL meaning, and the SQLite run of the same suite runs them."""
    from _pytest.nodeid import NodeId  # pytest 9 keeps the node id structured, in Node._id

    for item in items:
        name = item.name
        if "[" in name and not item.nodeid.endswith("]"):
            item._id = NodeId.parse(item.nodeid + name[name.index("[") :])  # type: ignore[attr-defined]
    if os.environ.get("MEMESH_TEST_BACKEND") == "postgresql":
        sqlite_only = [item for item in items if item.get_closest_marker("sqlite_only")]
        if sqlite_only:
            config.hook.pytest_deselected(items=sqlite_only)
            items[:] = [item for item in items if not item.get_closest_marker("sqlite_only")]
