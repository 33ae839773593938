"""Notes written by the real basic-memory (PyPI `basic-memory`), for the basic-memory reader's
tests: its own `write_note` tool (the one behind `basic-memory tool write-note` and its MCP
server) run in its own process, offline, with its config and database in a folder of the
test's.

basic-memory needs Python 3.12 or newer, so it gets a virtual environment of its own, made
with the newest such interpreter found (on PATH, or among pyenv's versions), in
`.hosts/basic-memory@<version>/` (tests/hosts.py's pattern: a marker written last, a file
lock against two workers). Its first install takes minutes (it brings its MCP and embedding
stack); later runs reuse it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hosts import HOSTS, INSTALLED_MARKER
from tests.processes import ROOT

VERSION = "0.24.1"
NEEDS = (3, 12)
# The install downloads and unpacks some 600 MB of wheels; one write imports its whole
# stack (~30 s of imports) before it writes.
INSTALL_DEADLINE = 1200
WRITE_DEADLINE = 600
NO_PYTHON = (
    "basic-memory needs Python 3.12 or newer, and none was found (python3.12 or python3.13 on "
    "PATH, or a pyenv version): install one to run the basic-memory import test"
)

# Run by basic-memory's interpreter: the notes (JSON on stdin) through its write_note tool
# in one event loop, the results as JSON on stdout.
_WRITE = """
import asyncio, json, sys
from basic_memory.cli.commands.command_utils import run_with_cleanup
from basic_memory.mcp.tools import write_note

async def write_all(notes):
    return [await write_note(output_format="json", **note) for note in notes]

print(json.dumps(run_with_cleanup(write_all(json.load(sys.stdin))), default=str))
"""


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError:
        return None
    parts = done.stdout.split()
    return (int(parts[0]), int(parts[1])) if done.returncode == 0 and len(parts) == 2 else None


def _pyenv_pythons() -> list[str]:
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        return []
    root = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
    versions = Path(root.stdout.strip()) / "versions"
    if root.returncode != 0 or not versions.is_dir():
        return []
    found = [v for v in versions.iterdir() if re.fullmatch(r"3\.\d+\.\d+", v.name)]
    found.sort(key=lambda v: tuple(int(p) for p in v.name.split(".")), reverse=True)
    return [str(v / "bin" / "python3") for v in found]


def newer_python() -> str:
    """An interpreter of Python 3.12 or newer."""
    candidates = [p for p in (shutil.which(n) for n in ("python3.13", "python3.12")) if p]
    for python in [*candidates, *_pyenv_pythons()]:
        version = _version(python)
        if version is not None and version >= NEEDS:
            return python
    pytest.fail(NO_PYTHON)


def basic_memory_python() -> Path:
    """The python of a virtual environment holding basic-memory==VERSION, made and installed
    first when no earlier run has."""
    folder = HOSTS / f"basic-memory@{VERSION}"
    HOSTS.mkdir(exist_ok=True)
    with open(HOSTS / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (folder / INSTALLED_MARKER).exists():
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([newer_python(), "-m", "venv", str(folder)], check=True, timeout=300)
            installed = subprocess.run(
                [str(folder / "bin" / "python"), "-m", "pip", "install", "-q",
                 "--disable-pip-version-check", f"basic-memory=={VERSION}"],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=INSTALL_DEADLINE,
                check=False,
            )  # fmt: skip
            assert installed.returncode == 0, installed.stdout + installed.stderr
            (folder / INSTALLED_MARKER).write_text(f"basic-memory=={VERSION}\n")
    return folder / "bin" / "python"


def write_notes(home: Path, notes: list[dict[str, object]]) -> list[dict[str, object]]:
    """Write `notes` (write_note's arguments: title, directory, content, tags, note_type...)
    with the real basic-memory into its default project `main`, kept in `home/notes`, its
    config and database in `home/config`. Returns what write_note answered for each."""
    python = basic_memory_python()
    env = {
        **os.environ,
        "HOME": str(home),
        "BASIC_MEMORY_CONFIG_DIR": str(home / "config"),
        "BASIC_MEMORY_HOME": str(home / "notes"),
        "LOGFIRE_IGNORE_NO_CONFIG": "1",
    }
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        [str(python), "-c", _WRITE],
        input=json.dumps(notes),
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=WRITE_DEADLINE,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results: list[dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results
