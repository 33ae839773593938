"""Acceptance (issue 8): every kind of memesh process writing one database file at once loses
nothing, sees no lock error and leaves the indexes agreeing with the rows.

On one MEMESH_HOME: 2 `memesh mcp` stdio servers driven by the official SDK client, `memesh
serve` with 4 concurrent HTTP clients, a loop of one-shot CLI calls (and one `memesh reindex`
half way), and `memesh worker` embedding every write through the filesystem broker with the
deterministic embedder. About 1,700 calls in all: remember (new names, appends to a client's
own names and to names every client shares), forget (entities and observations), recall of the
client's own writes, import, and calls that must be refused. tests/procs/load_driver.py runs
it; tests/procs/load_soak.py runs the same driver longer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.procs.load_driver import LoadPlan, run_load, summary

PLAN = LoadPlan(mcp_sessions=2, mcp_calls=350, http_clients=4, http_calls=250, cli_calls=10)


@pytest.mark.slow
def test_every_process_writing_one_file_at_once_loses_nothing(tmp_path: Path) -> None:
    result = run_load(tmp_path / "home", PLAN)
    report = summary(result)

    # Every call was made and answered as expected: no lock error, no 5xx, no error envelope
    # other than the refusals the workload asks for, and every read saw the earlier writes.
    assert result.journal.problems == [], report
    assert result.log_problems() == [], report
    expected_calls = (
        PLAN.mcp_sessions * PLAN.mcp_calls
        + PLAN.http_clients * PLAN.http_calls
        + PLAN.cli_calls
        + 1  # the reindex
    )
    assert result.calls() == expected_calls, report
    assert {kind.split(":")[1] for kind in result.journal.counts} >= {
        "remember_new", "append_own", "append_shared", "recall", "forget_entity",
        "forget_observation", "import", "refused", "reindex",
    }, report  # fmt: skip

    # Every acknowledged write is there, forgotten ones archived; nothing else was written.
    verify = result.verify
    assert verify["promise_problems"] == [], verify
    assert verify["promised"] == len(result.journal.entities) == verify["entities"], verify
    assert verify["archived"] > 0, verify

    # The worker embedded the last write, and both indexes agree with the rows.
    assert verify["settled"] is True, report
    assert verify["fts_problems"] == [], verify
    assert verify["vector_problems"] == [], verify
    assert verify["vectors"] == verify["active"], verify

    # `memesh doctor --json`, a real CLI process, agrees: its consistency check included.
    assert result.doctor_exit == 0, result.doctor
    checks = {check["name"]: check for check in result.doctor["checks"]}
    assert {name: c["status"] for name, c in checks.items()} == dict.fromkeys(checks, "ok")
    assert checks["index consistency"]["data"]["issues"] == [], checks["index consistency"]
