"""Crash consistency: SIGKILL a real memesh process mid-way, then restart (issue 8).

Each test runs memesh in its own OS processes on a database file of its own, kills one of them
with SIGKILL (no handler runs, no transaction is finished) at a moment it detects from the
database itself — never after a fixed sleep — and then checks, through `memesh doctor` as a
user would run it, that the graph, the keyword index and the vec0 tables agree, and that the
interrupted work completes when run again:

- import commits IMPORT_CHUNK entries per transaction (graph/ops/bundle/importer.py): a kill
  leaves whole chunks, each complete, and a rerun with the default `skip` finishes the rest;
- reindex keeps what it staged (the reference's `memesh reindex`): the live index is untouched
  and the rerun resumes the same generation by text hash (`already_staged`);
- a proposal accept is one transaction: the proposal is either applied or pending, never half.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graph.ops.bundle.importer import IMPORT_CHUNK
from tests.processes import PROCESS_DEADLINE, PROCS, ROOT, memesh_env, run_python

pytestmark = pytest.mark.slow

CLI = ["-m", "memesh_site.cli"]
WIDTH = 16
POLL_SECONDS = 0.005


def environment(tmp_path: Path, **extra: str) -> tuple[dict[str, str], Path]:
    db = tmp_path / "kg.db"
    env = memesh_env(
        tmp_path,
        MEMESH_DB_PATH=str(db),
        MEMESH_CELERY_EAGER="true",
        MEMESH_EMBED_DEBOUNCE_SECONDS="0",
        PYTHONPATH=str(ROOT),
        **extra,
    )
    migrated = run_python([*CLI, "migrate", "--verbosity", "0"], env)
    assert migrated.returncode == 0, migrated.stderr
    return env, db


def query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read the database from this process (plain tables only: no extension is loaded)."""
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def write_bundle(path: Path, count: int, prefix: str) -> None:
    entities = [
        {
            "name": f"{prefix}-{i}",
            "type": "note",
            "observations": [f"{prefix}tok{i} imported detail {i}", "a second observation"],
            "tags": ["crash-test"],
        }
        for i in range(count)
    ]
    path.write_text(json.dumps({"entities": entities}))


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_when(process: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    """SIGKILL `process` as soon as `ready()` holds; fail if it exits first."""
    deadline = time.monotonic() + PROCESS_DEADLINE
    try:
        while process.poll() is None and time.monotonic() < deadline:
            if ready():
                os.kill(process.pid, signal.SIGKILL)
                break
            time.sleep(POLL_SECONDS)
    finally:
        if process.poll() is None and time.monotonic() >= deadline:
            process.kill()
        _, stderr = process.communicate(timeout=PROCESS_DEADLINE)
    assert process.returncode == -signal.SIGKILL, (
        f"the process ended by itself (exit {process.returncode}) before it could be killed "
        f"mid-way: {stderr[-2000:]}"
    )


def consistency(env: dict[str, str]) -> dict[str, Any]:
    """`memesh doctor --json`'s index-consistency check; asserts doctor itself passed."""
    done = run_python([*CLI, "doctor", "--json", "--no-probe"], env)
    report = json.loads(done.stdout)
    [check] = [c for c in report["checks"] if c["name"] == "index consistency"]
    assert check["status"] == "ok", check
    assert done.returncode == 0, done.stdout + done.stderr
    data: dict[str, Any] = check["data"]
    return data


def recall_names(env: dict[str, str], *words: str, archived: bool = False) -> set[str]:
    flags = ["--include-archived"] if archived else []
    done = run_python([*CLI, "recall", *words, *flags, "--limit", "100", "--json"], env)
    assert done.returncode == 0, done.stderr
    return {e["name"] for e in json.loads(done.stdout)["entities"]}


# --- import -----------------------------------------------------------------------------------


def test_an_import_killed_mid_way_leaves_whole_chunks_and_a_rerun_finishes_it(
    tmp_path: Path,
) -> None:
    env, db = environment(tmp_path, MEMESH_EMBEDDER="none")
    total = 20 * IMPORT_CHUNK
    bundle = tmp_path / "bundle.json"
    write_bundle(bundle, total, "imp")

    def first_chunk_committed() -> bool:
        return query(db, "SELECT count(*) FROM graph_entity")[0][0] > 0

    kill_when(start([*CLI, "import", str(bundle), "--json"], env), first_chunk_committed)

    names = [row[0] for row in query(db, "SELECT name FROM graph_entity ORDER BY id")]
    assert 0 < len(names) < total
    # Chunks commit whole, in bundle order: a prefix of the bundle, each entity complete.
    assert len(names) % IMPORT_CHUNK == 0
    assert names == [f"imp-{i}" for i in range(len(names))]
    per_entity = query(
        db,
        "SELECT (SELECT count(*) FROM graph_observation o WHERE o.entity_id = e.id),"
        " (SELECT count(*) FROM graph_tag t WHERE t.entity_id = e.id)"
        " FROM graph_entity e",
    )
    assert set(per_entity) == {(2, 1)}
    after_kill = consistency(env)
    assert after_kill["entities"] == after_kill["ftsChecked"] == len(names)

    rerun = run_python([*CLI, "import", str(bundle), "--json"], env)

    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    result = json.loads(rerun.stdout)
    assert (result["imported"], result["skipped"], result["errors"]) == (
        total - len(names),
        len(names),
        [],
    )
    assert query(db, "SELECT count(*) FROM graph_entity")[0][0] == total
    assert consistency(env)["ftsChecked"] == total
    last = len(names) - 1
    assert {f"imp-{last}", f"imp-{last + 1}", f"imp-{total - 1}"} <= recall_names(
        env, f"imptok{last}", f"imptok{last + 1}", f"imptok{total - 1}"
    )


# --- reindex ----------------------------------------------------------------------------------


def live_marker(db: Path) -> dict[str, Any]:
    [(value,)] = query(db, "SELECT value FROM graph_metaentry WHERE key = 'vectors.live'")
    marker: dict[str, Any] = json.loads(value)
    return marker


def test_a_reindex_killed_mid_way_keeps_the_live_index_and_the_rerun_resumes(
    tmp_path: Path,
) -> None:
    env, db = environment(
        tmp_path, MEMESH_EMBEDDER="deterministic", MEMESH_EMBEDDER_DIMENSIONS=str(WIDTH)
    )
    total = 4_000
    bundle = tmp_path / "bundle.json"
    write_bundle(bundle, total, "rx")
    for args in (["import", str(bundle), "--json"], ["embed", "--json"]):
        done = run_python([*CLI, *args], env)
        assert done.returncode == 0, done.stdout + done.stderr
    live = live_marker(db)
    live_rows_sql = (
        "SELECT entity_id, text_hash, embedding FROM graph_entityvector"
        " WHERE generation = ? ORDER BY entity_id"
    )
    live_rows = query(db, live_rows_sql, (live["generation"],))
    assert len(live_rows) == total

    def staging_rows_written() -> bool:
        sql = "SELECT count(*) FROM graph_entityvector WHERE generation != ?"
        return query(db, sql, (live["generation"],))[0][0] > 0

    kill_when(start([*CLI, "reindex", "--json"], env), staging_rows_written)

    [(staging_value,)] = query(
        db, "SELECT value FROM graph_metaentry WHERE key = 'vectors.staging'"
    )
    staging = json.loads(staging_value)["generation"]
    staged = query(db, "SELECT count(*) FROM graph_entityvector WHERE generation = ?", (staging,))
    staged_count = staged[0][0]
    assert 0 < staged_count < total
    # The live index is exactly as it was, and everything agrees with the memories.
    assert live_marker(db) == live
    assert query(db, live_rows_sql, (live["generation"],)) == live_rows
    after_kill = consistency(env)
    assert after_kill["liveGeneration"] == live["generation"]
    assert after_kill["waitingToBeEmbedded"] == {"missing": 0, "stale": 0}

    rerun = run_python([*CLI, "reindex", "--json"], env)

    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    result = json.loads(rerun.stdout)
    assert result["complete"] and result["swapped"], result
    assert result["generation"] == staging  # resumed, not restarted
    assert result["already_staged"] == staged_count
    assert result["embedded"] == total - staged_count
    assert live_marker(db)["generation"] == staging
    assert query(db, "SELECT DISTINCT generation FROM graph_entityvector") == [(staging,)]
    final = consistency(env)
    assert final["liveGeneration"] == staging
    assert final["waitingToBeEmbedded"] == {"missing": 0, "stale": 0}
    assert f"rx-{total - 1}" in recall_names(env, f"rxtok{total - 1}")


# --- proposal accept --------------------------------------------------------------------------


def test_a_proposal_accept_killed_mid_way_is_either_applied_or_pending_never_half(
    tmp_path: Path,
) -> None:
    env, db = environment(tmp_path, MEMESH_EMBEDDER="none")
    sources = 600  # each is linked and archived in the one accept transaction
    bundle = tmp_path / "bundle.json"
    write_bundle(bundle, sources, "src")
    done = run_python([*CLI, "import", str(bundle), "--json"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    made = run_python([str(PROCS / "make_digest_proposal.py")], env)
    assert made.returncode == 0, made.stderr
    proposal_id = int(made.stdout)

    def accept_transaction_open() -> bool:
        """The accepting process holds the write lock: it is inside its transaction.
        Probed with a BEGIN IMMEDIATE that does not wait (and is rolled back at once)."""
        con = sqlite3.connect(db, timeout=0, isolation_level=None)
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            return "locked" in str(exc)
        else:
            con.execute("ROLLBACK")
            return False
        finally:
            con.close()

    kill_when(
        start([str(PROCS / "accept_proposal.py"), str(proposal_id)], env), accept_transaction_open
    )

    def state() -> tuple[str, int, int, int]:
        [(status,)] = query(
            db, "SELECT status FROM proposals_proposal WHERE id = ?", (proposal_id,)
        )
        digests = query(db, "SELECT count(*) FROM graph_entity WHERE name = 'crash-digest'")[0][0]
        archived = query(db, "SELECT count(*) FROM graph_entity WHERE status = 'archived'")[0][0]
        links = query(db, "SELECT count(*) FROM graph_relation WHERE type = 'summarizes'")[0][0]
        return status, digests, archived, links

    after_kill = state()
    assert after_kill in {("pending", 0, 0, 0), ("applied", 1, sources, sources)}, after_kill
    consistency(env)

    if after_kill[0] == "pending":
        rerun = run_python([str(PROCS / "accept_proposal.py"), str(proposal_id)], env)
        assert rerun.returncode == 0, rerun.stderr
    assert state() == ("applied", 1, sources, sources)
    final = consistency(env)
    assert final["entities"] == sources + 1
    assert recall_names(env, "digestword") == {"crash-digest"}
    assert "src-7" in recall_names(env, "srctok7", archived=True)
    assert "src-7" not in recall_names(env, "srctok7")
