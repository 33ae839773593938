"""The first command on a fresh MEMESH_HOME: every CLI command that uses the database migrates
it first (core/db/schema.py, called from api/cli/base.py's MemeshCommand), as `memesh serve`
and `memesh mcp` do, instead of dying on "no such table"; commands started at the same moment
take turns to migrate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.processes import PROCESS_DEADLINE, ROOT, memesh, memesh_env, run_python

pytestmark = pytest.mark.slow


def env(home: Path) -> dict[str, str]:
    return memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false")


def remember_args(name: str) -> list[str]:
    payload = {"name": name, "type": "note", "observations": [f"{name} was remembered first"]}
    return ["remember", "--input", json.dumps(payload), "--json"]


def stored_names(home: Path) -> set[str]:
    done = run_python(["-m", "memesh_site.cli", "export"], env(home))
    assert done.returncode == 0, done.stderr
    return {e["name"] for e in json.loads(done.stdout)["entities"]}


def test_remember_on_a_fresh_home_migrates_and_stores(tmp_path: Path) -> None:
    home = tmp_path / "fresh"

    done = run_python(["-m", "memesh_site.cli", *remember_args("first-memory")], env(home))

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] is True
    assert stored_names(home) == {"first-memory"}


def test_dream_accept_on_a_fresh_home_says_there_is_no_such_proposal(tmp_path: Path) -> None:
    home = tmp_path / "fresh"

    text = run_python(["-m", "memesh_site.cli", "dream", "accept", "1"], env(home))
    as_json = run_python(["-m", "memesh_site.cli", "dream", "accept", "1", "--json"], env(home))

    assert text.returncode == 1 and "Traceback" not in text.stderr
    assert text.stderr.strip() == "CommandError: No proposal with id 1 (resource.not-found)"
    assert as_json.returncode == 1 and as_json.stdout == ""
    assert json.loads(as_json.stderr)["errorCode"] == "resource.not-found"


def test_commands_started_together_on_a_fresh_home_all_succeed(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    names = [f"together-{i}" for i in range(4)]

    procs = [
        subprocess.Popen(
            memesh(*remember_args(name)),
            cwd=ROOT,
            env=env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    outcomes = [proc.communicate(timeout=PROCESS_DEADLINE) for proc in procs]

    for proc, (_, stderr) in zip(procs, outcomes, strict=True):
        assert proc.returncode == 0, stderr
    assert stored_names(home) == set(names)
