"""How fast `memesh mcp` exits on SIGINT (Claude Code sends SIGINT, then SIGTERM 100 ms
later): the time from the signal to the process's exit, idle after a `remember` was answered.

    .venv/bin/python -m bench.mcp_shutdown            # 5 runs, fresh MEMESH_HOME each
    .venv/bin/python -m bench.mcp_shutdown --runs 10 --signal TERM
    .venv/bin/python -m bench.mcp_shutdown --json

Each run also checks that the acknowledged `remember` is in the database afterwards. Printed,
not asserted: the number depends on the machine.
"""

from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench.mcp_initialize import INITIALIZE, INITIALIZED, send, start_mcp

REMEMBER = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {
        "name": "remember",
        "arguments": {"name": "shutdown-bench", "type": "note", "observations": ["kept"]},
    },
}
EXIT_DEADLINE = 30.0


def one_run(home: Path, signum: int) -> tuple[float, bool]:
    """Seconds from the signal to the exit, and whether the acknowledged write survived."""
    proc = start_mcp(home, "deterministic")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        send(proc.stdin, INITIALIZE)
        json.loads(proc.stdout.readline())
        send(proc.stdin, INITIALIZED)
        send(proc.stdin, REMEMBER)
        answer = json.loads(proc.stdout.readline())
        assert not answer["result"].get("isError"), answer
        start = time.perf_counter()
        proc.send_signal(signum)
        proc.wait(timeout=EXIT_DEADLINE)
        took = time.perf_counter() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with sqlite3.connect(home / "knowledge-graph.db") as db:
        kept = db.execute(
            "SELECT count(*) FROM graph_entity WHERE name = 'shutdown-bench'"
        ).fetchone()[0]
    return took, kept == 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--signal", default="INT", choices=["INT", "TERM"])
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args()
    signum = signal.SIGINT if args.signal == "INT" else signal.SIGTERM
    exits: list[float] = []
    kept: list[bool] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            took, survived = one_run(Path(tmp) / "home", signum)
        exits.append(took)
        kept.append(survived)
    figures = {
        "median_ms": round(statistics.median(exits) * 1000, 1),
        "min_ms": round(min(exits) * 1000, 1),
        "max_ms": round(max(exits) * 1000, 1),
    }
    if args.json:
        print(
            json.dumps(
                {
                    "runs": args.runs,
                    "signal": args.signal,
                    "exit": figures,
                    "writes_kept": sum(kept),
                },
                indent=2,
            )
        )
        return
    print(f"memesh mcp exit on SIG{args.signal}, {args.runs} runs, idle after a remember")
    print(
        f"  exit          median {figures['median_ms']:7.0f} ms   min {figures['min_ms']:7.0f} ms"
        f"   max {figures['max_ms']:7.0f} ms"
    )
    print(f"  acknowledged writes kept: {sum(kept)}/{args.runs}")


if __name__ == "__main__":
    main()
