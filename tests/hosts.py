"""The real agent hosts (Claude Code, Codex, ...) installed from their registries at pinned
versions, for the tests that run memesh inside them.

A host's npm package is installed once into `.hosts/<package>@<version>/` at the repository's
root (ignored by git) and reused by later runs; an interrupted install is redone, since the
folder counts as installed only once its marker is written. An exclusive file lock beside it
keeps two test workers (pytest-xdist) from installing the same package at once.

Node and npm come from Debian (`python3 scripts/dev.py test` installs them as root).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.processes import PROCESS_DEADLINE, ROOT

HOSTS = ROOT / ".hosts"
NO_NODE = (
    "node and npm are needed to install the agent hosts: `python3 scripts/dev.py test` installs "
    "them as root (Debian's nodejs and npm); otherwise sudo apt-get install -y nodejs npm"
)
INSTALLED_MARKER = ".installed"


def npm_host(package: str, version: str) -> Path:
    """The folder holding `package@version` installed by npm (its `node_modules/.bin` has the
    host's commands), installing it first when no earlier run has."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail(NO_NODE)
    folder = HOSTS / f"{package.replace('/', '+')}@{version}"
    HOSTS.mkdir(exist_ok=True)
    with open(HOSTS / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (folder / INSTALLED_MARKER).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            quiet = {"npm_config_update_notifier": "false", "npm_config_fund": "false"}
            installed = subprocess.run(
                [npm, "install", "--no-audit", "--prefix", str(folder), f"{package}@{version}"],
                cwd=folder,
                env={**os.environ, **quiet},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=PROCESS_DEADLINE,
                check=False,
            )
            assert installed.returncode == 0, installed.stdout + installed.stderr
            (folder / INSTALLED_MARKER).write_text(f"{package}@{version}\n")
    return folder


def npm_host_command(package: str, version: str, command: str) -> Path:
    """The path of the host's `command` (an npm bin) from `package@version`."""
    path = npm_host(package, version) / "node_modules" / ".bin" / command
    assert path.exists(), f"{package}@{version} installed no `{command}`"
    return path
