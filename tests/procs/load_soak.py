"""The multi-process load test, longer: a soak run that prints figures (run it by hand).

    .venv/bin/python -m tests.procs.load_soak                  # ~10,000 calls
    .venv/bin/python -m tests.procs.load_soak --scale 0.2      # the suite's size, roughly
    .venv/bin/python -m tests.procs.load_soak --json

Runs tests/procs/load_driver.py (the driver tests/e2e/test_multiprocess_load.py uses): 2 `memesh
mcp` stdio sessions, `memesh serve` with 4 HTTP clients, a CLI loop with one `memesh reindex`
half way, and `memesh worker`, all on one fresh database file in a temporary folder. Prints
calls, calls/s, p50/p95/p99 per transport, and what the checks afterwards found: lost writes,
lock errors, 5xx, unexpected error envelopes, FTS and vector index disagreements,
`memesh doctor`. Exits 1 when any of those is non-empty. Traffic goes to 127.0.0.1 only.

It lives beside its driver, not in bench/: it is the acceptance test run longer (it fails on
what the test fails on), and the driver is that test's harness.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.procs.load_driver import LoadPlan, run_load, summary


def failures(report: dict[str, Any]) -> list[str]:
    verify = report["verify"]
    found = [*report["problems"], *report["log_problems"]]
    for label in ("promise", "fts", "vector"):
        found += verify[f"{label}_problems"]
    if not verify["settled"]:
        found.append("the worker did not embed every write in time")
    if not report["doctor_ok"]:
        found.append("memesh doctor reported a failure")
    return found


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="Multiply every call count.")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args(argv)
    plan = LoadPlan(
        mcp_calls=round(1500 * args.scale),
        http_calls=round(1500 * args.scale),
        cli_calls=max(2, round(40 * args.scale)),
        seed=args.seed,
        deadline=3600.0,
    )
    with tempfile.TemporaryDirectory(prefix="memesh-load-") as tmp:
        result = run_load(Path(tmp) / "home", plan)
    report = summary(result)
    report["command"] = "python -m tests.procs.load_soak " + " ".join(argv or sys.argv[1:])
    report["failures"] = failures(report)
    if args.json:
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        sys.stdout.write(render(report) + "\n")
    return report


def render(report: dict[str, Any]) -> str:
    lines = [
        f"{report['calls']} calls in {report['seconds']} s: {report['calls_per_second']} calls/s"
        f" ({report['entities_promised']} entities, {report['observations_promised']}"
        " observations acknowledged)"
    ]
    for transport, figures in report["transports"].items():
        lines.append(
            f"  {transport:5} {figures['calls']:6} calls  p50 {figures['p50_ms']:7.1f} ms"
            f"  p95 {figures['p95_ms']:7.1f} ms  p99 {figures['p99_ms']:7.1f} ms"
        )
    verify = report["verify"]
    lines.append(
        f"after the run: {verify['entities']} entities ({verify['archived']} archived),"
        f" {verify.get('vectors', 0)} live vectors, worker caught up in"
        f" {verify['waited_seconds']} s, doctor ok: {report['doctor_ok']}"
    )
    lines.append(f"failures: {len(report['failures'])}")
    lines += [f"  {line}" for line in report["failures"][:20]]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(1 if main()["failures"] else 0)
