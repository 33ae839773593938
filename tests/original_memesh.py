"""The original MeMesh (4.6, TypeScript), run for real, for the tests of a home the two
products share and of importing its memory.

It is not published to a registry this project installs from: its runner
(`../shared/tools/peer-memesh`, beside the repository, which installs the packed release and a
Node 22 from the npm registry) is used, with its cache under `.hosts/memesh-peer` (ignored by
git) so a later run reuses it. An exclusive file lock keeps two test workers from installing
it at once. The runner's absence fails the test with a sentence saying where it belongs.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hosts import HOSTS, NO_NODE
from tests.processes import PROCESS_DEADLINE, ROOT

RUNNER_SHOWN = "../shared/tools/peer-memesh"
RUNNER = (ROOT / RUNNER_SHOWN).resolve()
CACHE = HOSTS / "memesh-peer"
# Where the original keeps its memory: ~/.memesh under the HOME it runs with.
DB_RELATIVE = Path(".memesh") / "knowledge-graph.db"
CONFIG_RELATIVE = Path(".memesh") / "config.json"


def _environment(home: Path) -> dict[str, str]:
    # The original reads MEMESH_DB_PATH and MEMESH_DIR too (memesh's variables share the
    # prefix): none of the test run's may reach it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(MEMESH_PEER_CACHE=str(CACHE), MEMESH_PEER_HOME=str(home))
    return env


@functools.cache
def _installed() -> None:
    if not os.access(RUNNER, os.X_OK):
        pytest.fail(
            f"the original MeMesh's runner is not at {RUNNER_SHOWN} (relative to the "
            "repository): it installs and runs MeMesh 4.6 for the tests of a shared home"
        )
    if shutil.which("npm") is None:
        pytest.fail(NO_NODE)
    HOSTS.mkdir(exist_ok=True)
    with open(HOSTS / "memesh-peer.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = subprocess.run(
            [str(RUNNER), "setup"],
            env=_environment(CACHE),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROCESS_DEADLINE,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def original_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The original's `memesh ARGS` with HOME at `home` (its database is `home`/DB_RELATIVE);
    fails the test when it fails."""
    _installed()
    done = subprocess.run(
        [str(RUNNER), "cli", *args],
        env=_environment(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )
    assert done.returncode == 0, f"original MeMesh {args}: {done.stdout}{done.stderr}"
    return done
