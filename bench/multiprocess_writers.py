"""Write throughput with 1/2/4/8 writer processes on one database file (not a test).

    .venv/bin/python -m bench.multiprocess_writers                    # 1, 2, 4, 8 writers
    .venv/bin/python -m bench.multiprocess_writers --writers 8 --count 400
    .venv/bin/python -m bench.multiprocess_writers --embedder none    # no embedding requests
    .venv/bin/python -m bench.multiprocess_writers --json             # one JSON object

For each number of writers: a fresh database in a temporary folder, that many OS processes
each set up Django and open their connection, then all are released at once (a start file)
and each makes --count remember calls through the operation, as `memesh mcp` or the server
would (four in five remember a new entity with two observations, one in five appends an
observation to one of the process's earlier entities). Every process times each call; this
prints total remembers/s (all calls over the wall time from the release to the last answer)
and p50/p95/p99 write latency over every call, against the issue-8 target: 8 writers sustain
>= 200 remembers/s with p99 < 250 ms on the 2-core reference machine.

With the deterministic embedder (the default) each committed write queues its embedding task
on the filesystem broker, as in a real deployment; no worker runs, so the embedding itself
does not compete for the cores. `main(argv)` returns the figures as a dict (bench/run_all.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LEVELS = (1, 2, 4, 8)
TARGET_RATE = 200.0  # remembers/s with 8 writers
TARGET_P99_MS = 250.0
START_WAIT_SECONDS = 120
RUN_DEADLINE = 900  # seconds for one level; a hang fails the bench, it does not block
FILLER = "written by one of several processes remembering into the same file at once"


# --- the writer process ---------------------------------------------------------------------


def timed(obj: Any, method: str, spent: list[float]) -> None:
    """Add the time every call of obj.method takes to spent[-1] (profiling, --profile)."""
    original = getattr(obj, method)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[-1] += time.perf_counter() - t0

    setattr(obj, method, wrapper)


def writer(proc: int, count: int, start_file: Path, profile: bool) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    import django

    django.setup()
    from django.db import connection

    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS

    remember = OPERATIONS["remember"]
    ctx = CallContext(source_host="bench")
    connection.ensure_connection()
    # --profile: time spent waiting for the write lock (BEGIN IMMEDIATE returns once SQLite's
    # busy handler got it) and in COMMIT, per call.
    lock_wait: list[float] = []
    commit: list[float] = []
    if profile:
        timed(connection, "_start_transaction_under_autocommit", lock_wait)
        timed(connection, "_commit", commit)
    deadline = time.monotonic() + START_WAIT_SECONDS
    while not start_file.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{start_file} never appeared")
        time.sleep(0.002)
    latencies = []
    began = time.time()
    for i in range(count):
        if i % 5 == 4:
            payload = {
                "name": f"w{proc}-e{i // 2}",
                "type": "note",
                "observations": [f"w{proc}a{i} appended {FILLER}"],
            }
        else:
            payload = {
                "name": f"w{proc}-e{i}",
                "type": "note",
                "observations": [f"w{proc}x{i} {FILLER}", f"second note {i} of writer {proc}"],
                "tags": [f"writer:{proc}"],
            }
        lock_wait.append(0.0)
        commit.append(0.0)
        t0 = time.perf_counter()
        remember.run(payload, ctx)
        latencies.append(time.perf_counter() - t0)
    ended = time.time()
    out = {"began": began, "ended": ended, "latencies": latencies}
    if profile:
        out.update(lock_wait=lock_wait, commit=commit)
    sys.stdout.write(json.dumps(out))


# --- the parent -------------------------------------------------------------------------------


def env_for(home: Path, embedder: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(
        MEMESH_HOME=str(home),
        MEMESH_EMBEDDER=embedder,
        DJANGO_SETTINGS_MODULE="memesh_site.settings",
    )
    return env


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_level(writers: int, count: int, embedder: str, profile: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memesh-writers-") as tmp:
        home = Path(tmp) / "home"
        env = env_for(home, embedder)
        subprocess.run(
            [sys.executable, "-m", "memesh_site.cli", "migrate", "--verbosity", "0"],
            cwd=REPO, env=env, check=True, timeout=RUN_DEADLINE,
        )  # fmt: skip
        start_file = Path(tmp) / "go"
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "bench.multiprocess_writers",
                    "--writer",
                    str(i),
                    str(count),
                    str(start_file),
                    "1" if profile else "0",
                ],
                cwd=REPO,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(writers)
        ]
        time.sleep(0.5)  # let them reach the start line; the writer waits for the file anyway
        start_file.touch()
        results = []
        for proc in procs:
            out, err = proc.communicate(timeout=RUN_DEADLINE)
            if proc.returncode != 0:
                raise RuntimeError(f"writer exited {proc.returncode}:\n{err}")
            results.append(json.loads(out))
    latencies = sorted(x for r in results for x in r["latencies"])
    wall = max(r["ended"] for r in results) - min(r["began"] for r in results)
    run: dict[str, Any] = {
        "writers": writers,
        "remembers": len(latencies),
        "seconds": round(wall, 2),
        "remembers_per_second": round(len(latencies) / wall, 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 1),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
        "max_ms": round(latencies[-1] * 1000, 1),
    }
    if profile:
        total = sum(latencies)
        for part in ("lock_wait", "commit"):
            values = sorted(x for r in results for x in r[part])
            run[part] = {
                "p50_ms": round(percentile(values, 0.50) * 1000, 1),
                "p99_ms": round(percentile(values, 0.99) * 1000, 1),
                "share_of_latency": round(sum(values) / total, 3),
            }
        slow = [
            (lat, wait)
            for r in results
            for lat, wait in zip(r["latencies"], r["lock_wait"], strict=True)
            if lat >= percentile(latencies, 0.99)
        ]
        # Of the slowest 1 % of calls, the part spent waiting for the lock.
        run["lock_wait_share_of_slowest_1pct"] = round(
            sum(w for _, w in slow) / max(sum(lat for lat, _ in slow), 1e-9), 3
        )
    return run


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument("--count", type=int, default=300, help="Remember calls per writer.")
    parser.add_argument("--embedder", default="deterministic", choices=["deterministic", "none"])
    parser.add_argument(
        "--profile", action="store_true", help="Also time lock waits and commits per call."
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args(argv)
    runs = []
    for writers in args.writers:
        run = run_level(writers, args.count, args.embedder, args.profile)
        runs.append(run)
        if not args.json:
            print(
                f"{run['writers']} writer(s): {run['remembers']} remembers in {run['seconds']} s"
                f" = {run['remembers_per_second']}/s; p50 {run['p50_ms']} ms,"
                f" p95 {run['p95_ms']} ms, p99 {run['p99_ms']} ms, max {run['max_ms']} ms",
                flush=True,
            )
            if args.profile:
                print(
                    f"    lock wait {run['lock_wait']}, commit {run['commit']},"
                    f" lock wait share of slowest 1 %:"
                    f" {run['lock_wait_share_of_slowest_1pct']}",
                    flush=True,
                )
    eight = next((r for r in runs if r["writers"] == 8), None)
    report: dict[str, Any] = {
        "command": "python -m bench.multiprocess_writers " + " ".join(argv or sys.argv[1:]),
        "embedder": args.embedder,
        "count_per_writer": args.count,
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "runs": runs,
        "target": {"writers": 8, "remembers_per_second": TARGET_RATE, "p99_ms": TARGET_P99_MS},
    }
    if eight is not None:
        report["target"]["met"] = (
            eight["remembers_per_second"] >= TARGET_RATE and eight["p99_ms"] < TARGET_P99_MS
        )
    if args.json:
        sys.stdout.write(json.dumps(report) + "\n")
    elif eight is not None:
        print(f"target (8 writers >= 200/s, p99 < 250 ms) met: {report['target']['met']}")
    return report


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        writer(int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5] == "1")
    else:
        main()
