"""The OpenClaw memory plugin (integrations/openclaw, TypeScript) built with its pinned
toolchain and its own tests run by Node against a real `memesh serve`: a loopback one for
the round trip, and one listening beyond loopback for the remote token.

The Node side (integrations/openclaw/test/) loads the plugin as OpenClaw does — the entry's
`register(api)` with an API that keeps the capability, tools and hooks — and calls them;
this module installs the locked dependencies (`npm ci`, when node_modules is missing or older
than the lock file), builds (`tsc`), starts the server and runs `npm test`.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hosts import HOSTS
from tests.processes import PROCESS_DEADLINE, ROOT, Served, serving

pytestmark = pytest.mark.slow

PLUGIN = ROOT / "integrations" / "openclaw"
REMOTE_TOKEN = "openclaw-remote-token-456"
NO_NODE = (
    "node and npm are needed to build and test integrations/openclaw: `python3 scripts/dev.py "
    "test` installs them as root (Debian's nodejs and npm); otherwise sudo apt-get install -y "
    "nodejs npm"
)


def npm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    npm_path = shutil.which("npm")
    if npm_path is None or shutil.which("node") is None:
        pytest.fail(NO_NODE)
    quiet = {"npm_config_update_notifier": "false", "npm_config_fund": "false"}
    return subprocess.run(
        [npm_path, *args],
        cwd=PLUGIN,
        env={**os.environ, **quiet, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )


def installed_is_current() -> bool:
    """node_modules holds what package-lock.json locks (npm writes its own copy of the lock
    into node_modules/.package-lock.json on every install)."""
    marker = PLUGIN / "node_modules" / ".package-lock.json"
    lock = PLUGIN / "package-lock.json"
    return marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime


@pytest.fixture(scope="module")
def built() -> Path:
    # This module and tests/e2e/test_host_openclaw.py both build, maybe in two test workers at
    # once: `npm ci` empties node_modules, so one build at a time.
    HOSTS.mkdir(exist_ok=True)
    with open(HOSTS / "openclaw-plugin-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not installed_is_current():
            installed = npm("ci", "--no-audit")
            assert installed.returncode == 0, installed.stdout + installed.stderr
        compiled = npm("run", "build")
        assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return PLUGIN / "dist"


def node_tests_passed(result: subprocess.CompletedProcess[str], count: int) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"# pass {count}\n" in output, output
    assert "# fail 0\n" in output, output


def test_the_plugin_remembers_and_recalls_through_a_real_memesh_serve(
    built: Path, server: Served, home: Path
) -> None:
    result = npm("test", env={"MEMESH_URL": server.base, "MEMESH_HOME": str(home)})
    node_tests_passed(result, 8)


def test_the_plugin_sends_the_remote_token_when_set(built: Path, tmp_path: Path) -> None:
    with serving(
        tmp_path / "remote-home",
        tmp_path / "remote.log",
        "--no-worker",
        "--host",
        "0.0.0.0",
        "--allow-remote",
        bearer=REMOTE_TOKEN,
        MEMESH_EMBEDDER="none",
        MEMESH_REMOTE_TOKEN=REMOTE_TOKEN,
    ) as base:
        result = npm(
            "run",
            "test:remote",
            env={"MEMESH_URL": base, "MEMESH_TOKEN": REMOTE_TOKEN, "MEMESH_HOME": str(tmp_path)},
        )
    node_tests_passed(result, 3)


def test_the_lock_file_names_no_registry(built: Path) -> None:
    """The repository records what is installed (name, version, integrity), never where from:
    .npmrc's omit-lockfile-registry-resolved keeps `resolved` URLs out of the lock file."""
    lock = (PLUGIN / "package-lock.json").read_text()
    assert '"resolved"' not in lock
    assert "://" not in lock
    assert "omit-lockfile-registry-resolved=true" in (PLUGIN / ".npmrc").read_text()
