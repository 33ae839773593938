"""memesh against the original MeMesh 4.6, measured in one interleaved run (issue 16).

    .venv/bin/python -m bench.peer_compare                      # 1k and 10k, 2 rounds, the CLI
    .venv/bin/python -m bench.peer_compare --sizes 1k,10k,50k,100k
    .venv/bin/python -m bench.peer_compare --sizes 1k --json --no-write

Every figure in the README or docs/ that compares memesh with MeMesh comes from this script.
It needs ../shared/tools (beside the repository; --tools elsewhere): `http_workload.py`, the
shared HTTP workload, and `peer-memesh`, which installs and starts the peer; it says so and
stops when they are absent. CI runs none of it.

At each size, for each round, memesh then the peer (A B A B), each on a fresh server and home:
1. The server is started as its users start it (bench/peer_servers.py): memesh's default
   install, `memesh serve` with its embedded worker; the peer through `peer-memesh serve`.
2. The shared workload runs unchanged against it, as a process: N remembers, then its recall
   pass (1-, 3- and 8-word queries, half with a known target), list, stats and export. For
   memesh that recall pass runs while the worker embeds the backlog.
3. memesh: the backlog is awaited (a read-only probe of the database, once a second), and the
   time from the last write to the last vector is read from the rows' own timestamps. The
   peer, keyword-only, is awaited until its process is idle (the workload's own wait).
4. On the settled server, recall queries it has not seen (the workload's own generator on
   the same corpus, with the next seed), then the workload's queries again (`settled_repeat`:
   answered from the query-vector cache on memesh), and its full export (the workload's
   corpus, client and percentiles, imported from it). Unseen queries make "settled" and
   "while draining" compare like with like: both pay the query's first embedding.
5. 4 concurrent clients send recall requests, as bench/http_bench.py does.
Then the CLIs as processes: `remember`, `recall` and `--help`, each several times interleaved
against a home holding a few memories.

The machine's speed swings by a quarter within minutes, so only ratios within a round count
(bench/peer_report.py). The section lands in docs/benchmarks/results.json and is rendered into
docs/benchmarks.md with the other sections (bench/report_render.py), its plot beside it.

Duration on the 2-core reference machine, per size for two rounds, as measured (1k, 10k) and
scaled from them (50k, 100k): 1k ~7 min, 10k ~25 min (memesh's backlog is ~10 min of each of its
runs), 50k ~2.5 h, 100k ~5 h or more; the CLI ~1 min.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import facts, http_bench, peer_cli, peer_servers, report_render
from bench.peer_servers import BacklogProbe, Server, Tools
from bench.plots import make_plots
from bench.report_format import size_label
from bench.run_all import MEASURED_CODE, kept_notes
from bench.runner import PYTHON_SHOWN, scrub

REPO = Path(__file__).resolve().parent.parent
SECTION = "peer"
RECALL_LIMIT = 20  # the workload's default


def say(message: str) -> None:
    print(f"[peer_compare] {message}", file=sys.stderr, flush=True)


def parse_sizes(text: str) -> tuple[int, ...]:
    sizes = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        sizes.append(int(float(part[:-1]) * 1000) if part.endswith("k") else int(part))
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"--sizes takes sizes like 1k,10k (got {text!r})")
    return tuple(sizes)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=parse_sizes, default=(1_000, 10_000), help="default 1k,10k")
    ap.add_argument("--rounds", type=int, default=2, help="pairs of runs at each size (default 2)")
    ap.add_argument("--queries", type=int, default=300, help="recall queries a pass (default 300)")
    ap.add_argument("--seed", type=int, default=42, help="the workload's seed (default 42)")
    ap.add_argument(
        "--throughput-requests",
        type=int,
        default=1000,
        help="recall requests of the 4-client level (default 1000)",
    )
    ap.add_argument("--cli-runs", type=int, default=5, help="runs of each CLI command (default 5)")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI wall times")
    ap.add_argument(
        "--drain-timeout",
        type=float,
        default=4 * 3600,
        help="seconds to wait for memesh's backlog or the peer's idle (default 4 h)",
    )
    ap.add_argument(
        "--tools",
        default=peer_servers.TOOLS_SHOWN,
        help="directory of http_workload.py and peer-memesh, relative to the repository "
        f"(default {peer_servers.TOOLS_SHOWN})",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=REPO / "docs" / "benchmarks.md",
        help="the page to render the section into (its results.json and plot go to the "
        "directory named after it)",
    )
    ap.add_argument("--json", action="store_true", help="print the raw figures on stdout")
    ap.add_argument("--no-write", action="store_true", help="leave docs/ alone")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.queries < 3 or args.cli_runs < 1:
        ap.error("--rounds and --cli-runs take positive numbers, --queries at least 3")
    return args


# --- the shared workload -------------------------------------------------------------------------


def load_workload(tools: Tools) -> ModuleType:
    """The workload as a module, for its corpus, queries, client and percentiles."""
    spec = importlib.util.spec_from_file_location("http_workload", tools.workload)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def workload_queries(
    wl: ModuleType, entities: int, queries: int, seed: int, query_seed: int | None = None
) -> list[Any]:
    """The recall queries the workload itself sends for (entities, queries, seed); with
    `query_seed`, other queries of the same kind over the same corpus."""
    corpus, vocab, cum = wl.generate_corpus(entities, seed)
    chosen = seed if query_seed is None else query_seed
    return list(wl.generate_queries(corpus, vocab, cum, queries, chosen))


def run_workload(ctx: Context, server: Server, entities: int, label: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memesh-peer-compare-wl-") as tmp:
        out = Path(tmp) / "summary.json"
        args = [
            sys.executable,
            str(ctx.tools.workload),
            "--base-url",
            server.base_url,
            "--entities",
            str(entities),
            "--queries",
            str(ctx.args.queries),
            "--seed",
            str(ctx.args.seed),
            "--no-source-ip-rotate",
            "--label",
            label,
            "--out",
            str(out),
        ]
        if server.db_path is not None:
            args += ["--db-path", str(server.db_path)]
        ctx.step(args, f"workload {server.system}")
        # The workload's remember loop is sequential: at worst the peer's ~40/s on 2 cores.
        subprocess.run(
            args, cwd=REPO, stdout=subprocess.DEVNULL, check=True, timeout=600 + entities
        )
        summary: dict[str, Any] = json.loads(out.read_text())
        return summary


def recall_pass(wl: ModuleType, base_url: str, queries: list[Any], entities: int) -> dict[str, Any]:
    """The workload's recall pass again, with its client and its definitions: latency by query
    length over all queries, hit@1 and hit@10 over the targeted ones; then its full export."""
    client = wl.Client(base_url, False, 90, 120.0)
    times: dict[int, list[float]] = {1: [], 3: [], 8: []}
    errors = hits1 = hits10 = 0
    for q in queries:
        status, data, elapsed = client.request(
            "POST", "/v1/recall", {"query": q["query"], "limit": RECALL_LIMIT}
        )
        if not wl.ok(status, data):
            errors += 1
            continue
        times[q["words"]].append(elapsed)
        if q["target"] is not None:
            names = wl.recall_names(data.get("data"))
            hits1 += names[:1] == [q["target"]]
            hits10 += q["target"] in names[:10]
    n_target = sum(1 for q in queries if q["target"] is not None)
    limit = min(max(entities, 1), 10_000)  # the workload's export_limit
    export_times, last, export_errors = wl.timed_repeat(
        client, "POST", "/v1/export", {"limit": limit}, 5
    )
    client.close()
    return {
        "recall": {
            "count": len(queries),
            "errors": errors,
            "latency_by_words": {f"{w}w": wl.pct(ts) for w, ts in times.items()},
            "targeted": {
                "n": n_target,
                "hit@1": round(hits1 / n_target, 4) if n_target else None,
                "hit@10": round(hits10 / n_target, 4) if n_target else None,
            },
        },
        "export_limit": {
            "limit": limit,
            "errors": export_errors,
            "latency": wl.pct(export_times),
            "entity_count": (last or {}).get("entity_count"),
        },
    }


# --- one run -------------------------------------------------------------------------------------


class Context:
    """What every run shares: the arguments, the tools, the workload module, the steps shown."""

    def __init__(self, args: argparse.Namespace, tools: Tools) -> None:
        self.args = args
        self.tools = tools
        self.wl = load_workload(tools)
        self.steps: list[str] = []
        self._seen: set[str] = set()

    def shown(self, args: list[str]) -> str:
        text = shlex.join(args)
        text = text.replace(str(peer_servers.memesh_bin()), ".venv/bin/memesh")
        text = text.replace(sys.executable, PYTHON_SHOWN)
        text = text.replace(str(self.tools.root), self.tools.shown)
        return str(scrub(text))

    def step(self, args: list[str], kind: str) -> None:
        """Record the first command of each kind (later ones differ in ports and names)."""
        if kind not in self._seen:
            self._seen.add(kind)
            self.steps.append(self.shown(args))


def wait_backlog(probe: BacklogProbe, timeout: float) -> dict[str, Any]:
    """Poll until no memory waits for a vector; the drain time comes from the rows' times."""
    first = probe.read()
    started = time.monotonic()
    state = first
    while state["pending"] and time.monotonic() - started < timeout:
        time.sleep(1.0)
        state = probe.read()
    drained = state["pending"] == 0 and state["last_vector"] is not None
    out: dict[str, Any] = {
        "pending_after_workload": first["pending"],
        "drained": drained,
        "pending_at_end": state["pending"],
    }
    if drained and state["last_write"] is not None:
        out["drain_s"] = round(max(0.0, state["last_vector"] - state["last_write"]), 2)
    elif state["last_write"] is not None:
        out["waited_s"] = round(time.time() - state["last_write"], 1)
    return out


def one_run(
    ctx: Context,
    system: str,
    entities: int,
    rnd: int,
    queries: list[Any],
    unseen: list[Any],
) -> dict[str, Any]:
    label = f"{system} {size_label(entities)} round {rnd}/{ctx.args.rounds}"
    port = http_bench.free_port()
    load = [round(x, 2) for x in os.getloadavg()]
    say(f"{label}: starting the server")
    server = (
        peer_servers.start_memesh(port)
        if system == "memesh"
        else peer_servers.start_peer(ctx.tools, port)
    )
    ctx.step(server.command, f"serve {system}")
    run: dict[str, Any] = {"system": system, "round": rnd, "load_average_start": load}
    try:
        say(f"{label}: the workload ({entities:,} remembers, {ctx.args.queries} recalls, export)")
        run["workload"] = run_workload(ctx, server, entities, label)
        if system == "memesh":
            say(f"{label}: waiting for the embedding backlog")
            probe = BacklogProbe(server.home)
            try:
                run["backlog"] = wait_backlog(probe, ctx.args.drain_timeout)
            finally:
                probe.close()
        else:
            say(f"{label}: waiting for the server to be idle")
            run["settle_s"] = round(
                ctx.wl.wait_until_idle(server.pid, max_s=ctx.args.drain_timeout), 2
            )
        say(f"{label}: recall pass and export, settled")
        run["settled"] = recall_pass(ctx.wl, server.base_url, unseen, entities)
        run["settled_repeat"] = recall_pass(ctx.wl, server.base_url, queries, entities)
        say(f"{label}: 4 clients, {ctx.args.throughput_requests} recalls")
        bodies = [
            ("recall", {"query": q["query"], "limit": RECALL_LIMIT})
            for q in itertools.islice(itertools.cycle(queries), ctx.args.throughput_requests)
        ]
        run["throughput"] = http_bench.run_level(server.base_url, 4, bodies, server.pid)
        run["peak_rss"] = http_bench.peak_rss_mb(server.pid)
        run["db_mb"] = peer_servers.db_mb(server.db_path)
        run["notes"] = server.notes
    finally:
        peer_servers.stop(server)
    return run


# --- the whole comparison ------------------------------------------------------------------------


def command_shown(argv: list[str]) -> str:
    return " ".join([PYTHON_SHOWN, "-m", "bench.peer_compare", *argv])


def compare(ctx: Context) -> dict[str, Any]:
    args = ctx.args
    versions: dict[str, Any] = {}
    data: dict[str, Any] = {
        "rounds": args.rounds,
        "queries": args.queries,
        "seed": args.seed,
        "throughput_requests": args.throughput_requests,
        "tree_dirty": facts.git_commit(()).endswith("+changes"),
        "versions": versions,
        "load_average": {"start": [round(x, 2) for x in os.getloadavg()]},
        "sizes": [],
        "cli": None,
    }
    if not args.no_cli:
        data["cli"] = peer_cli.cli_walls(ctx.tools, args.cli_runs, ctx.step, say)
    for entities in args.sizes:
        queries = workload_queries(ctx.wl, entities, args.queries, args.seed)
        unseen = workload_queries(ctx.wl, entities, args.queries, args.seed, args.seed + 1)
        size: dict[str, Any] = {"entities": entities, "runs": []}
        data["sizes"].append(size)
        for rnd in range(1, args.rounds + 1):
            for system in ("memesh", "peer"):
                try:
                    run = one_run(ctx, system, entities, rnd, queries, unseen)
                except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                    # One failed run is reported in its row; its pair counts for no ratio.
                    say(f"{system} {size_label(entities)} round {rnd}: FAILED: {exc}")
                    run = {"system": system, "round": rnd, "error": str(exc)[:2000]}
                size["runs"].append(run)
                health = (run.get("workload") or {}).get("health_before") or {}
                if health.get("version"):
                    versions.setdefault(system, health["version"])
    data["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    return data


def write_page(section: dict[str, Any], out: Path) -> None:
    """Into results.json beside the page, then the page re-rendered from it (as run_all does)
    and this section's plot redrawn; the other sections' figures and plots stay as they are."""
    data_dir = out.with_suffix("")
    data_dir.mkdir(parents=True, exist_ok=True)
    results_file = data_dir / "results.json"
    results: dict[str, Any] = (
        json.loads(results_file.read_text()) if results_file.exists() else {"sections": {}}
    )
    results["sections"][SECTION] = section
    make_plots(results, data_dir, only=(SECTION,))
    results_file.write_text(json.dumps(results, indent=2) + "\n")
    out.write_text(report_render.render(results, data_dir.name, kept_notes(data_dir)))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    ctx = Context(args, peer_servers.find_tools(args.tools))
    say(
        f"sizes {', '.join(size_label(n) for n in args.sizes)}, {args.rounds} round(s) each"
        + ("" if args.no_cli else f", the CLI {args.cli_runs} times")
    )
    section: dict[str, Any] = {
        "date": date.today().isoformat(),
        "machine": facts.machine(),
        "commit": facts.git_commit(MEASURED_CODE),
        "command": command_shown(argv),
    }
    started = time.perf_counter()
    section["data"] = compare(ctx)
    section["seconds"] = round(time.perf_counter() - started, 1)
    section["steps"] = ctx.steps
    if section["commit"] != facts.git_commit(MEASURED_CODE):
        section["commit"] += " (changed during the run)"
    section = scrub(section)
    if args.json:
        print(json.dumps(section, indent=2))
    if not args.no_write:
        write_page(section, args.out.resolve())
        say(f"wrote {args.out} and its {SECTION} section in {args.out.with_suffix('')}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
