"""Cold-start latency of `memesh mcp`: process spawn to the `initialize` answer, to the
`tools/list` answer, then to the first tool call's answer (which also waits for the
background migration), over raw stdio.

    .venv/bin/python -m bench.mcp_initialize            # 5 runs, fresh MEMESH_HOME each
    .venv/bin/python -m bench.mcp_initialize --runs 10 --embedder local
    .venv/bin/python -m bench.mcp_initialize --json

Printed, not asserted: the number depends on the machine. The default embedder is `local`,
to show that loading a model never delays `initialize`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
RECALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "recall", "arguments": {"query": "anything"}},
}


def send(pipe: IO[str], message: dict[str, Any]) -> None:
    pipe.write(json.dumps(message) + "\n")
    pipe.flush()


def start_mcp(home: Path, embedder: str) -> subprocess.Popen[str]:
    """`memesh mcp` on `home` as an agent host starts it: its own MEMESH_* only, pipes on
    stdin and stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(MEMESH_HOME=str(home), MEMESH_EMBEDDER=embedder)
    return subprocess.Popen(
        [sys.executable, "-m", "memesh_site.cli", "mcp"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def one_run(home: Path, embedder: str) -> tuple[float, float, float]:
    start = time.perf_counter()
    proc = start_mcp(home, embedder)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        send(proc.stdin, INITIALIZE)
        json.loads(proc.stdout.readline())
        initialized = time.perf_counter() - start
        send(proc.stdin, INITIALIZED)
        send(proc.stdin, TOOLS_LIST)
        json.loads(proc.stdout.readline())
        listed = time.perf_counter() - start
        send(proc.stdin, RECALL)
        json.loads(proc.stdout.readline())
        first_call = time.perf_counter() - start
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return initialized, listed, first_call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--embedder", default="local")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="every run in one home, after a first unmeasured one (a host's second session "
        "on: the database migrated, the tool list stored by the process before)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args()
    inits: list[float] = []
    lists: list[float] = []
    calls: list[float] = []
    with tempfile.TemporaryDirectory() as shared:
        if args.warm:
            one_run(Path(shared) / "home", args.embedder)
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                home = Path(shared if args.warm else tmp) / "home"
                init, listed, call = one_run(home, args.embedder)
            inits.append(init)
            lists.append(listed)
            calls.append(call)
    series = (("initialize", inits), ("tools_list", lists), ("first_recall", calls))
    if args.json:
        print(
            json.dumps(
                {
                    "runs": args.runs,
                    "embedder": args.embedder,
                    "warm": args.warm,
                    **{
                        label: {
                            "median_ms": round(statistics.median(values) * 1000, 1),
                            "min_ms": round(min(values) * 1000, 1),
                            "max_ms": round(max(values) * 1000, 1),
                        }
                        for label, values in series
                    },
                },
                indent=2,
            )
        )
        return
    where = "one home, second session on" if args.warm else "fresh database"
    print(f"memesh mcp cold start, {args.runs} runs, embedder={args.embedder}, {where}")
    for label, values in series:
        print(
            f"  {label.replace('_', ' '):<13} median {statistics.median(values) * 1000:7.0f} ms"
            f"   min {min(values) * 1000:7.0f} ms   max {max(values) * 1000:7.0f} ms"
        )


if __name__ == "__main__":
    main()
