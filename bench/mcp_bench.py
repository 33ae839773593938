"""MCP tool-call latency of `memesh mcp` over stdio, through the official SDK client (not a test).

    .venv/bin/python -m bench.mcp_bench                      # 1,000 remembers, 300 recalls
    .venv/bin/python -m bench.mcp_bench --calls 200 --embedder local --json

1. Starts `memesh mcp` in a fresh MEMESH_HOME with `mcp.Client(StdioServerParameters(...))`
   (the initialize handshake, as agent hosts do) and times the connection.
2. Calls the `remember` tool `--calls` times, one memory each (bench/corpus.py),
   then `recall` `--recalls` times with 1-, 3- and 8-word queries mixed, after a few warm-up
   calls of each; every call awaited before the next, as an agent does.
3. Prints p50/p95/p99 per tool (or JSON with --json), and the count of calls answered with
   an error. Latency includes the SDK's JSON-RPC framing and the pipe, both ways.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters, types

from bench.corpus import Corpus
from bench.measure import summary_ms

REPO = Path(__file__).resolve().parent.parent

WARMUP_CALLS = 10
SESSION_DEADLINE = 1800  # a hung server must end the bench, not hang it


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1000, help="remember calls (1000)")
    ap.add_argument("--recalls", type=int, default=300, help="recall calls (300)")
    ap.add_argument("--embedder", default="none", help="none (default), deterministic or local")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return ap.parse_args(argv)


def server_params(home: Path, embedder: str) -> StdioServerParameters:
    # The SDK's stdio client passes only a whitelist of variables to the server: give it all.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(
        MEMESH_HOME=str(home),
        MEMESH_EMBEDDER=embedder,
        MEMESH_SECRET_KEY="memesh-bench-not-secret",
        DJANGO_SETTINGS_MODULE="memesh_site.settings",
    )
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memesh_site.cli", "mcp"], env=env, cwd=str(REPO)
    )


async def timed_calls(
    client: Client, name: str, arguments: list[dict[str, Any]]
) -> tuple[list[float], int]:
    latencies: list[float] = []
    errors = 0
    for args in arguments:
        t0 = time.perf_counter()
        result: types.CallToolResult = await client.call_tool(name, args)
        latencies.append(time.perf_counter() - t0)
        errors += bool(result.is_error)
    return latencies, errors


def tool_summary(latencies: list[float], errors: int, seconds: float) -> dict[str, Any]:
    ms = sorted(x * 1000 for x in latencies)
    p99 = statistics.quantiles(ms, n=100)[98] if len(ms) > 1 else ms[0]
    return {
        **summary_ms(latencies),
        "p99": round(p99, 3),
        "calls": len(latencies),
        "per_second": round(len(latencies) / seconds, 1),
        "errors": errors,
    }


def with_why(memory: dict[str, Any]) -> dict[str, Any]:
    """Agents must give a new decision its reason over MCP (the agent guide's contract)."""
    if memory["type"] == "decision":
        return {**memory, "why": "chosen for the benchmark; revisit if the workload changes"}
    return memory


async def session(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    corpus, rng = Corpus(args.seed, args.calls), random.Random(args.seed)
    memories = [with_why(corpus.memory(i, rng)) for i in range(args.calls + WARMUP_CALLS)]
    queries = [
        {"query": corpus.query(rng.choice((1, 3, 8)), rng)}
        for _ in range(args.recalls + WARMUP_CALLS)
    ]
    report: dict[str, Any] = {"embedder": args.embedder}
    with anyio.fail_after(SESSION_DEADLINE):
        t0 = time.perf_counter()
        async with Client(
            server_params(home, args.embedder),
            mode="legacy",  # the initialize handshake every current agent host performs
            client_info=types.Implementation(name="memesh-bench", version="1.0"),
        ) as client:
            report["connect_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            await timed_calls(client, "remember", memories[:WARMUP_CALLS])
            t0 = time.perf_counter()
            lat, errors = await timed_calls(client, "remember", memories[WARMUP_CALLS:])
            report["remember"] = tool_summary(lat, errors, time.perf_counter() - t0)
            await timed_calls(client, "recall", queries[:WARMUP_CALLS])
            t0 = time.perf_counter()
            lat, errors = await timed_calls(client, "recall", queries[WARMUP_CALLS:])
            report["recall"] = tool_summary(lat, errors, time.perf_counter() - t0)
    report["memories"] = args.calls + WARMUP_CALLS
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memesh-mcp-bench-") as tmp:
        report = anyio.run(session, args, Path(tmp) / "home")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"memesh mcp over stdio (SDK client), embedder {report['embedder']}")
    print(f"connect + initialize: {report['connect_ms']:.0f} ms")
    for tool in ("remember", "recall"):
        r = report[tool]
        print(
            f"{tool:<9} {r['calls']:>5} calls  {r['per_second']:>7.1f}/s  p50 {r['p50']:>6.2f}  "
            f"p95 {r['p95']:>6.2f}  p99 {r['p99']:>6.2f} ms  errors {r['errors']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
