"""End-to-end tests: memesh in real OS processes (serve on loopback, MCP over stdio and HTTP,
the Celery worker, Chromium, several writers on one database file), each on a MEMESH_HOME of
its own; tests/processes.py starts, waits for and stops them.

The fixtures every module shares: the module's `home` and, when a test asks, its `server` (one
`memesh serve` on that home for the whole module: a start is seconds of a loaded machine's
time); a test's own `migrated_home`; the `user_home` its processes take for HOME; and headless
Chromium. A module configures its processes by overriding the small fixtures they read —
`memesh_embedder`, `serve_args`, `serve_env` — never by copying `home` or `server`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.processes import Served, memesh_env, run_python, serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = "/usr/bin/chromium"  # Debian's, driven by Playwright (no browser download)


def _module_name(request: pytest.FixtureRequest) -> str:
    return request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_")


@pytest.fixture(scope="module")
def home(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    serve_args: tuple[str, ...],
) -> Path:
    """The MEMESH_HOME the module's processes share (a fresh one for each variant of a module
    whose `serve_args` are parametrised, hence the argument). Neither it nor its parent folder
    exists yet: the first memesh process creates both (test_serve.py checks that it does so
    privately) and migrates the database."""
    return tmp_path_factory.mktemp(_module_name(request)) / "not-yet" / "home"


@pytest.fixture
def migrated_home(tmp_path: Path, memesh_embedder: str | None) -> Path:
    """A MEMESH_HOME of the test's own whose database is migrated already, so the processes
    the test starts meet a ready database rather than racing to migrate it."""
    home = tmp_path / "home"
    done = run_python(
        ["-m", "memesh_site.cli", "migrate", "--verbosity", "0"],
        memesh_env(home, **embedder_env(memesh_embedder)),
    )
    assert done.returncode == 0, done.stderr
    return home


@pytest.fixture(scope="module")
def user_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HOME of the module's processes that are given it: `~/.claude` and the other hosts'
    folders are the test's, never the machine's."""
    return tmp_path_factory.mktemp("user-home")


@pytest.fixture(scope="module")
def memesh_embedder() -> str | None:
    """MEMESH_EMBEDDER of the processes `server` and `migrated_home` start: none, so nothing
    needs the model or the network. A module overrides it ("deterministic", "local", or None
    for memesh's own default)."""
    return "none"


def embedder_env(embedder: str | None) -> dict[str, str]:
    """The environment that selects `embedder` (nothing for memesh's default)."""
    return {} if embedder is None else {"MEMESH_EMBEDDER": embedder}


@pytest.fixture(scope="module")
def serve_args() -> tuple[str, ...]:
    """The arguments of the module's `memesh serve` besides its port: no background worker
    unless a module overrides this (its tests do not wait for vectors)."""
    return ("--no-worker",)


@pytest.fixture(scope="module")
def serve_env() -> dict[str, str]:
    """More environment for the module's `memesh serve` (HOME, MEMESH_* settings); none unless
    a module overrides this."""
    return {}


@pytest.fixture(scope="module")
def server(
    home: Path,
    memesh_embedder: str | None,
    serve_args: tuple[str, ...],
    serve_env: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Served]:
    """`memesh serve` on the module's home and a free loopback port, once it answers
    /v1/health; stopped after the module's last test."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**embedder_env(memesh_embedder), **serve_env}
    with serving(home, log, *serve_args, **env) as base:
        yield Served(base=base, home=home, log=log)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium for the module (Playwright is imported only by the modules that ask)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-quic"],
        )  # fmt: skip
        yield chromium
        chromium.close()
