"""Acceptance: two OS processes writing one database file at once lose nothing.

DESIGN §8: many processes share one DB file (MCP stdio per agent, the server, CLI, workers);
that must never lose a write or surface "database is locked". Both writers are released at
the same moment (a start file), each remembers 2,000 entities through the remember operation,
and a third process then finds every one of the 4,000 by its unique token.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.processes import PROCESS_DEADLINE, PROCS, ROOT, memesh_env, run_python

PER_PROCESS = 2_000
WRITERS = ("0", "1")


@pytest.mark.slow
def test_two_processes_remembering_at_once_end_with_every_entity_findable(tmp_path):
    env = memesh_env(tmp_path, MEMESH_DB_PATH=str(tmp_path / "kg.db"), PYTHONPATH=str(ROOT))
    migrated = run_python(["manage.py", "migrate", "--verbosity", "0"], env)
    assert migrated.returncode == 0, migrated.stderr

    start_file = tmp_path / "go"
    writers: list[subprocess.Popen[str]] = []
    outputs: list[tuple[int, str, str]] = []
    try:
        for proc in WRITERS:
            writers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        str(PROCS / "remember_many.py"),
                        proc,
                        str(PER_PROCESS),
                        str(start_file),
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        start_file.touch()
        for writer in writers:
            stdout, stderr = writer.communicate(timeout=PROCESS_DEADLINE)
            outputs.append((writer.returncode, stdout, stderr))
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()

    for returncode, stdout, stderr in outputs:
        assert returncode == 0, stderr
        assert stderr == ""
        assert stdout == f"remembered {PER_PROCESS}\n"

    checked = run_python([str(PROCS / "recall_each.py"), str(PER_PROCESS), *WRITERS], env)
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    # writer_switches (how often consecutive ids change writer) is reported for diagnosis
    # only: how finely SQLite interleaves two writers is up to its lock scheduling.
    total = PER_PROCESS * len(WRITERS)
    assert report["entities"] == total, report
    assert report["fts_rows"] == total, report
    assert report["checked"] == total, report
    assert report["missed"] == 0, report
    assert report["ambiguous"] == 0, report
