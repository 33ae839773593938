"""Latency of the dashboard's pages and data routes at 10k memories (not a test; run it by
hand).

    .venv/bin/python -m bench.dashboard_bench                  # 10k memories, fresh temp DB
    .venv/bin/python -m bench.dashboard_bench --entities 50000
    .venv/bin/python -m bench.dashboard_bench --db /tmp/d/kg.db --reuse --json
    .venv/bin/python -m bench.dashboard_bench --no-http        # through the operations only

What it does:
1. Points MEMESH_HOME / MEMESH_DB_PATH at the chosen file, sets Django up, migrates.
2. Seeds N memories through OPERATIONS["remember"], one call each as an agent would: the
   corpus's decisions, lessons, bug fixes and notes (bench/corpus.py), with every COMMIT_EVERY-th
   memory a commit carrying an `evidences` edge to the latest decision or lesson (noise for
   the full graph view, evidence for the work layer). Then, because remember dates everything
   now, it spreads the creation times evenly over the last SPREAD_DAYS days (one UPDATE: no
   index holds times), and runs RECALLS recalls through OPERATIONS["recall"] so the access
   times the analytics read are set the way production sets them.
3. Times every data route — stats, projects, graph, graph?layer=work, graph/evidence of the
   node with the most evidence, analytics, analytics/pm — through its operation as the REST
   view runs it (input parsed, selector, JSON encoded), and then over real HTTP against
   `memesh serve --no-worker` on a loopback port (one keep-alive client): p50/p95/mean and the
   size of the answer.
4. Times every dashboard page (dashboard/, docs/dashboard.md) in this process through Django's
   test client, logged in as a reviewer: the full request through the middleware, the view
   and its template, which is the server's time for the page (no network, no browser). Both
   in-process timings run after the heap is frozen as `memesh serve` freezes its own
   (core/heap.py).
5. Prints a table (or JSON with --json) with the machine facts. The targets (p95 < 100 ms per
   data route, the full graph included; < 200 ms per page) are reported beside each figure,
   never asserted. The graph routes and the graph and project pages are timed twice: as a
   reader finds them between writes (their answers kept until the next commit,
   graph/storage/commit_cache.py), and cold, as the first read after a write finds them.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import facts
from bench.corpus import Corpus
from bench.measure import summary_ms

MEASURED_CODE = ("graph", "api", "dashboard", "memesh_site")
BENCH_SECRET_KEY = "memesh-bench-not-secret"  # keeps the bench from writing a key file
COMMIT_EVERY = 5
SPREAD_DAYS = 120
RECALLS = 300
WARMUP = 3
TARGET_P95_MS = 100.0
TARGET_PAGE_P95_MS = 200.0
BENCH_REVIEWER = "bench-reviewer"
# The routes and pages whose answers a thread keeps until the next commit
# (graph/storage/commit_cache.py): timed twice, as kept and cold (a row marked COLD_MARK).
KEPT = ("graph", "graph?layer=work", "project")
COLD_MARK = ", cold"
REPO = Path(__file__).resolve().parent.parent
# Spread creation (and last-write) times evenly over the last `days` days, oldest id first.
# Params: days, the highest id, days.
SPREAD_SQL = (
    "UPDATE graph_entity SET created_at = datetime('now', printf('-%.4f days', "
    "? * (? - id) / ?)), updated_at = created_at"
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=10_000, help="memories to seed (10000)")
    ap.add_argument("--repeat", type=int, default=50, help="timed calls per route (50)")
    ap.add_argument("--db", type=Path, help="database file (default: in a fresh temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse an already-seeded --db")
    ap.add_argument("--seed", type=int, default=1, help="random seed (1)")
    ap.add_argument("--no-http", action="store_true", help="time the operations only")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = ap.parse_args(argv)
    if args.reuse and args.db is None:
        ap.error("--reuse needs --db")
    return args


def environment(db: Path) -> dict[str, str]:
    return {
        "MEMESH_HOME": str(db.parent),
        "MEMESH_DB_PATH": str(db),
        "MEMESH_EMBEDDER": "none",
        "MEMESH_SECRET_KEY": os.environ.get("MEMESH_SECRET_KEY", BENCH_SECRET_KEY),
        "MEMESH_CELERY_EAGER": "false",
        "DJANGO_SETTINGS_MODULE": "memesh_site.settings",
    }


def setup_django(db: Path) -> None:
    os.environ.update(environment(db))
    import django

    django.setup()


def seed(n: int, seed_value: int) -> None:
    from django.db import connection
    from tqdm import tqdm

    from graph.ops.kit.operation import CallContext
    from graph.ops.recall.access import flush_accesses
    from graph.ops.registry import OPERATIONS

    ctx = CallContext(source_host="bench")
    corpus, rng = Corpus(seed_value, n), random.Random(seed_value)
    remember, recall = OPERATIONS["remember"], OPERATIONS["recall"]
    work_item: str | None = None
    for i in tqdm(range(n), desc="remember", unit="mem", file=sys.stderr, smoothing=0.05):
        if i % COMMIT_EVERY == COMMIT_EVERY - 1 and work_item is not None:
            sha = f"{rng.getrandbits(28):07x}"
            payload: dict[str, Any] = {
                "name": f"commit-{i:06d}-{sha}",
                "type": "commit",
                "observations": [f"commit {sha}: {corpus.memory(i, rng)['observations'][0]}"],
                "relations": [{"to": work_item, "type": "evidences"}],
            }
        else:
            payload = corpus.memory(i, rng)
            if payload["type"] in ("decision", "lesson"):
                work_item = payload["name"]
        remember.run(payload, ctx)
    with connection.cursor() as cur:
        cur.execute("SELECT MAX(id) FROM graph_entity")
        top = cur.fetchone()[0]
        cur.execute(SPREAD_SQL.replace("?", "%s"), [SPREAD_DAYS, top, top])
    for _ in range(RECALLS):
        recall.run({"query": corpus.query(rng.choice((1, 3)), rng)}, ctx)
    flush_accesses()


def routes() -> list[tuple[str, str, dict[str, Any]]]:
    """(label, operation, input) of every data route; the drill-down on the busiest node."""
    from graph.ops.graph_view import graph_get

    counts = graph_get(layer="work").evidenceCounts or {}
    busiest = max(counts, key=lambda k: counts[k]) if counts else "none"
    return [
        ("stats", "stats", {}),
        ("projects", "projects", {}),
        ("graph", "graph", {}),
        ("graph?layer=work", "graph", {"layer": "work"}),
        ("graph/evidence", "graph_evidence", {"node": busiest}),
        ("analytics", "analytics", {}),
        ("analytics/pm", "analytics_pm", {}),
    ]


def _timed(call: Any, repeat: int, *, cold: bool) -> list[float]:
    """Seconds per call; `cold`: with what the thread keeps until the next commit
    (graph/storage/commit_cache.py) forgotten before each call, as the first call after a write
    finds it."""
    from graph.storage.commit_cache import kept_clear

    samples = []
    for _ in range(repeat):
        if cold:
            kept_clear()
        t0 = time.perf_counter()
        call()
        samples.append(time.perf_counter() - t0)
    return samples


def time_operations(repeat: int) -> list[dict[str, Any]]:
    from api.operations import OPERATIONS
    from graph.ops.kit.operation import CallContext

    ctx = CallContext(source_host="http")
    out = []
    for label, name, payload in routes():
        op = OPERATIONS[name]
        for _ in range(WARMUP):
            body = op.run_json(payload, ctx)
        for cold in (False, True) if label in KEPT else (False,):
            samples = _timed(functools.partial(op.run_json, payload, ctx), repeat, cold=cold)
            row = label + COLD_MARK if cold else label
            out.append({"route": row, "bytes": len(body), **summary_ms(samples)})
    return out


def pages() -> list[tuple[str, str]]:
    """(label, path) of every dashboard page; a memory's page on the busiest work node."""
    from urllib.parse import quote

    from graph.ops.graph_view import graph_get

    counts = graph_get(layer="work").evidenceCounts or {}
    busiest = max(counts, key=lambda k: counts[k]) if counts else "none"
    return [
        ("home", "/dashboard/"),
        ("memories", "/dashboard/memories/"),
        ("memories?q=", "/dashboard/memories/?q=database+migration"),
        ("memory", f"/dashboard/memories/m/{quote(busiest)}"),
        ("project", "/dashboard/project/"),
        ("evidence", f"/dashboard/project/evidence?node={quote(busiest)}"),
        ("graph", "/dashboard/graph/"),
        ("graph?layer=work", "/dashboard/graph/?layer=work"),
        ("settings", "/dashboard/settings/"),
    ]


def time_pages(repeat: int) -> list[dict[str, Any]]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from api.cli.installation.management.commands.createreviewer import reviewer_create

    # Logged in by force_login; the password is only what a new account must have.
    reviewer_create(BENCH_REVIEWER, secrets.token_urlsafe(24))
    client = Client()
    client.force_login(get_user_model().objects.get(username=BENCH_REVIEWER))
    out = []
    for label, path in pages():
        for _ in range(WARMUP):
            response = client.get(path)
            if response.status_code != 200:
                raise RuntimeError(f"{path}: {response.status_code}")
        size = len(response.content)
        for cold in (False, True) if label in KEPT else (False,):
            samples = _timed(functools.partial(client.get, path), repeat, cold=cold)
            row = label + COLD_MARK if cold else label
            out.append({"route": row, "bytes": size, **summary_ms(samples)})
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def time_http(db: Path, repeat: int) -> list[dict[str, Any]]:
    import httpx

    from api.operations import OPERATIONS

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(environment(db))
    server = subprocess.Popen(
        [sys.executable, "-m", "memesh_site.cli", "serve", "--port", str(port), "--no-worker"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out = []
    try:
        with httpx.Client(base_url=base, timeout=60) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if client.get("/v1/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("memesh serve did not answer /v1/health")
                time.sleep(0.2)
            for label, name, payload in routes():
                url = "/v1/" + OPERATIONS[name].rest_route
                for _ in range(WARMUP):
                    response = client.get(url, params=payload)
                    response.raise_for_status()
                samples = []
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    response = client.get(url, params=payload)
                    samples.append(time.perf_counter() - t0)
                    response.raise_for_status()
                out.append({"route": label, "bytes": len(response.content), **summary_ms(samples)})
    finally:
        server.terminate()
        server.wait(timeout=30)
    return out


def render(report: dict[str, Any]) -> str:
    lines = [
        f"memesh dashboard data routes, {report['entities']:,} memories "
        f"({report['graph_entities']:,} in the full graph view), {report['repeat']} calls each; "
        f"target p95 < {TARGET_P95_MS:.0f} ms a data route, < {TARGET_PAGE_P95_MS:.0f} ms a page "
        "(reported, not asserted)",
        f"machine: {report['machine']['platform']}, {report['machine']['cpu_count']} cores, "
        f"SQLite {report['machine']['sqlite']}, commit {report['machine']['commit']}",
    ]
    for kind in ("operation", "http", "page"):
        if not report.get(kind):
            continue
        target = TARGET_PAGE_P95_MS if kind == "page" else TARGET_P95_MS
        lines += ["", f"{kind:<24} {'p50 ms':>9} {'p95 ms':>9} {'mean ms':>9} {'KB':>9}  target"]
        for r in report[kind]:
            ok = "ok" if r["p95"] < target else "over"
            lines.append(
                f"{r['route']:<24} {r['p50']:>9.2f} {r['p95']:>9.2f} {r['mean']:>9.2f} "
                f"{r['bytes'] / 1024:>9.1f}  {ok}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tmp: Path | None = None
    if args.db is None:
        tmp = Path(tempfile.mkdtemp(prefix="memesh-dashboard-bench-"))
        db = tmp / "knowledge-graph.db"
    else:
        db = args.db.resolve()
        db.parent.mkdir(parents=True, exist_ok=True)
    try:
        setup_django(db)
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from graph.models import Entity

        if not args.reuse:
            seed(args.entities, args.seed)
        from core.heap import freeze_startup_heap
        from graph.ops.graph_view import graph_get

        report: dict[str, Any] = {
            "entities": Entity.objects.count(),
            "graph_entities": len(graph_get().entities),
            "repeat": args.repeat,
            "machine": facts.connected_machine(facts.git_commit(MEASURED_CODE)),
        }
        # As `memesh serve` does once it has started (core/heap.py): this process's
        # heap then holds what a server's holds, not also the seeding's objects in every
        # full collection.
        freeze_startup_heap()
        report["operation"] = time_operations(args.repeat)
        report["page"] = time_pages(args.repeat)
        if not args.no_http:
            report["http"] = time_http(db, args.repeat)
        print(json.dumps(report, indent=2) if args.json else render(report))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
