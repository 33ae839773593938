"""Automatic dreams in real processes: `memesh worker` runs the dream schedule in a thread
(dream/beat.py), here every second (MEMESH_DREAM_CHECK_SECONDS=1). Without an LLM
it queues nothing and records nothing; once config.json gains one — while the worker runs —
the next tick queues a dream TaskRun with the trigger "schedule", which the worker runs against
a fake OpenAI-compatible server. And `memesh dream run --from-transcripts` as a process: its
exit statuses (docs/operations.md).

The outcome is read from the database file, as any other process would read it.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.llm_servers import FakeLLMServer
from tests.processes import ROOT, memesh, memesh_env, read_rows, run_python, stop
from tests.transcripts import SESSION_IDS, install

pytestmark = pytest.mark.slow

DEADLINE = 60.0
DIGEST = json.dumps({"name": "scheduled-week", "observations": ["the schedule dreamed this"]})

# Ten commits of one project: enough episodic memories for a dream to be due.
COMMITS = """
import django
django.setup()
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
for i in range(10):
    OPERATIONS["remember"].run(
        {"name": f"commit-{i}", "type": "commit", "observations": [f"commit {i}: fixed a test"],
         "tags": ["project:alpha"]},
        CallContext(source_host="cli"),
    )
"""


# What the worker logs at each tick of the schedule (dream/beat.py): held back while no LLM is
# configured (a debug line), and once one is, the answer of the tick's due check.
HELD_TICK = "scheduled dream check not sent: no LLM is configured"
CHECKED_TICK = "scheduled dream check: "


def ticks(log: Path, line: str) -> int:
    return log.read_text(errors="replace").count(line)


def wait_for(what: str, condition: Callable[[], bool], log: Path) -> None:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}; worker log:\n{log.read_text()}")


def test_the_worker_schedule_dreams_once_an_llm_is_configured(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_DREAM_CHECK_SECONDS="1")
    migrated = run_python(["-m", "memesh_site.cli", "migrate", "--verbosity", "0"], env)
    assert migrated.returncode == 0, migrated.stderr
    produced = run_python(["-c", COMMITS], env)
    assert produced.returncode == 0, produced.stderr
    db = home / "knowledge-graph.db"
    runs_sql = "SELECT params, status, error_code, error FROM proposals_taskrun"

    log = tmp_path / "worker.log"
    with (
        FakeLLMServer(kind="openai", default_text=DIGEST) as llm,
        log.open("wb") as out,
    ):
        worker = subprocess.Popen(
            # At debug, each tick held back for want of an LLM shows in the log.
            memesh("worker", "--log-level", "debug"),
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for("the worker", lambda: "dream check every 1 s" in log.read_text(), log)
            # Several ticks pass without an LLM: nothing is queued, nothing recorded.
            wait_for("three ticks", lambda: ticks(log, HELD_TICK) >= 3, log)
            assert read_rows(db, runs_sql) == []
            assert worker.poll() is None

            (home / "config.json").write_text(json.dumps({"llm": llm.llm_config()}))

            def finished() -> bool:
                rows = read_rows(db, runs_sql)
                return bool(rows) and rows[0][1] in ("succeeded", "failed")

            wait_for("the scheduled dream", finished, log)
            [(params, status, error_code, error)] = read_rows(db, runs_sql)
            assert json.loads(params) == {"trigger": "schedule"}
            assert status == "succeeded", (error_code, error, log.read_text())
            assert read_rows(db, "SELECT kind, status FROM proposals_proposal") == [
                ("digest", "pending")
            ]
            assert len(llm.chat_requests()) == 1
            # Later ticks find the dream throttled: still one run. Each tick logs its answer
            # once its check is done, so two more lines are two more checks that queued nothing.
            checked = ticks(log, CHECKED_TICK)
            wait_for("two later ticks", lambda: ticks(log, CHECKED_TICK) >= checked + 2, log)
            assert len(read_rows(db, runs_sql)) == 1
        finally:
            stop(worker)
    # Beat's record of its ticks lives under MEMESH_HOME.
    assert list((home / "celery").glob("beat-schedule*"))


def test_mining_from_the_command_line_exits_0_done_or_not_due_and_2_on_bad_flags(
    tmp_path: Path,
) -> None:
    home, claude, project = tmp_path / "home", tmp_path / "claude", tmp_path / "project"
    project.mkdir()
    install(claude, project.resolve())
    env = memesh_env(home, MEMESH_EMBEDDER="none", CLAUDE_CONFIG_DIR=str(claude))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            memesh("dream", "run", *args),
            cwd=project,
            env={**env, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    listed = run("--from-transcripts", "--dry-run", "--json")
    not_due = run("--from-transcripts", "--if-due")
    bad = run("--if-due")

    assert listed.returncode == 0, listed.stderr
    assert [s["sessionId"] for s in json.loads(listed.stdout)["sessions"]] == list(
        SESSION_IDS.values()
    )
    assert not_due.returncode == 0, not_due.stderr
    assert not_due.stdout.startswith("Not due: scheduled transcript mining is not enabled")
    assert bad.returncode == 2
    assert "--if-due goes with --from-transcripts" in bad.stderr
