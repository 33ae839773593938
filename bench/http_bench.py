"""HTTP throughput and latency of `memesh serve` (not a test; run it by hand).

    .venv/bin/python -m bench.http_bench                     # 10k memories, keyword-only
    .venv/bin/python -m bench.http_bench --embedder local    # hybrid recall (vectors built first)
    .venv/bin/python -m bench.http_bench --json

1. Seeds N memories (bench/corpus.py) through the service layer into a fresh
   database, and with an embedder builds their vectors.
2. Starts `memesh serve --no-worker [--workers N]` on a free loopback port against that
   database.
3. For 1, 4 and 16 concurrent clients (processes, one keep-alive connection each), sends
   recall requests (1-, 3- and 8-word queries mixed) and then remember requests (new names)
   for a fixed number of requests per level, and prints requests/s and p50/p95/p99 latency,
   the count of non-200 answers, and the CPU time per request of the server's processes and
   of the clients. `--clients 4 --kinds recall` runs one level of one kind.
Traffic goes to 127.0.0.1 only, and every loop is bounded in count.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx

from bench.corpus import Corpus

REPO = Path(__file__).resolve().parent.parent


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=2000, help="requests per level and kind")
    ap.add_argument("--embedder", default="none", help="none (default) or local")
    ap.add_argument(
        "--workers", type=int, default=None, help="server processes (default: serve's own)"
    )
    ap.add_argument(
        "--clients", default="1,4,16", help="concurrency levels, comma-separated (default 1,4,16)"
    )
    ap.add_argument(
        "--kinds", default="recall,remember", help="what to send: recall, remember or both"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.levels = tuple(int(c) for c in args.clients.split(","))
    args.kinds = tuple(k for k in ("recall", "remember") if k in args.kinds.split(","))
    if not args.kinds or min(args.levels) < 1:
        ap.error("--clients takes positive numbers and --kinds recall and/or remember")
    return args


def seed(home: Path, n: int, embedder: str) -> None:
    """Seed in a child process (seed_here), so this one never imports Django."""
    code = f"from bench.http_bench import seed_here; seed_here({n}, {embedder!r})"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env(home, embedder), check=True)


def seed_here(n: int, embedder: str) -> None:
    """Migrate, remember n memories of the corpus and, with an embedder, build their vectors."""
    import django

    django.setup()
    from django.core.management import call_command

    from graph.indexing import embedding_pass
    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS

    call_command("migrate", verbosity=0)
    corpus, rng, ctx = Corpus(1, n), random.Random(1), CallContext("bench")
    for i in range(n):
        OPERATIONS["remember"].run(corpus.memory(i, rng), ctx)
    if embedder != "none":
        while embedding_pass.embed_pending(max_entities=512).embedded:
            pass


def env(home: Path, embedder: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    out.update(
        MEMESH_HOME=str(home),
        MEMESH_EMBEDDER=embedder,
        MEMESH_SECRET_KEY="memesh-bench-not-secret",
        MEMESH_CELERY_EAGER="false",
        DJANGO_SETTINGS_MODULE="memesh_site.settings",
    )
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (Linux /proc; just `pid` elsewhere)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def peak_rss_mb(pid: int) -> dict[str, Any]:
    """Peak resident memory (VmHWM) of the server and of each process it started, summed."""
    peaks = []
    for p in process_tree(pid):
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return {
        "processes": len(peaks),
        "sum_mb": round(sum(peaks), 1),
        "max_mb": round(max(peaks, default=0), 1),
    }


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time these processes have used (Linux /proc; 0 elsewhere)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def _client(base: str, work: list[tuple[str, dict[str, Any]]], start: Any, out: Any) -> None:
    """One client process: its own keep-alive connection, released with the others. The
    standard library's http.client costs a fraction of httpx's CPU per request; on a 2-core
    machine the load generator's cycles come out of the server's."""
    url = urllib.parse.urlsplit(base)
    assert url.hostname is not None
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Content-Type": "application/json"}
    mine: list[float] = []
    bad = 0
    conn.request("GET", "/v1/health")  # connect before the clock starts
    conn.getresponse().read()
    start.wait()
    cpu_before = time.process_time()
    for route, body in work:
        payload = json.dumps(body).encode()
        t0 = time.perf_counter()
        conn.request("POST", f"/v1/{route}", body=payload, headers=headers)
        response = conn.getresponse()
        response.read()
        mine.append(time.perf_counter() - t0)
        bad += response.status != 200
    conn.close()
    out.put((mine, bad, time.process_time() - cpu_before))


def run_level(
    base: str, clients: int, bodies: list[tuple[str, dict[str, Any]]], server_pid: int
) -> dict[str, Any]:
    """Each client is a process of its own, as agents are: client threads in one process would
    queue on that process's GIL and be measured instead of the server.

    CPU per request is reported for the server's processes and for the clients: on a machine
    of few cores both come out of the same budget."""
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_client, args=(base, bodies[i::clients], start, out))
        for i in range(clients)
    ]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let every client connect
    server = process_tree(server_pid)
    server_cpu = cpu_seconds(server)
    started = time.perf_counter()
    start.set()
    results = [out.get(timeout=600) for _ in procs]
    elapsed = time.perf_counter() - started
    server_cpu = cpu_seconds(server) - server_cpu
    for p in procs:
        p.join(timeout=60)
    latencies = [x for mine, _, _ in results for x in mine]
    failures = sum(bad for _, bad, _ in results)
    client_cpu = sum(cpu for _, _, cpu in results)
    ms = sorted(x * 1000 for x in latencies)
    q = statistics.quantiles(ms, n=100)
    return {
        "clients": clients,
        "requests": len(ms),
        "per_second": round(len(ms) / elapsed, 1),
        "p50": round(q[49], 2),
        "p95": round(q[94], 2),
        "p99": round(q[98], 2),
        "non_200": failures,
        "server_cpu_ms": round(server_cpu / len(ms) * 1000, 2),
        "client_cpu_ms": round(client_cpu / len(ms) * 1000, 2),
    }


def main() -> int:
    args = parse_args()
    home = Path(tempfile.mkdtemp(prefix="memesh-http-bench-"))
    seed(home, args.entities, args.embedder)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "memesh_site.cli", "serve", "--port", str(port), "--no-worker"]
        + (["--workers", str(args.workers)] if args.workers else []),
        cwd=REPO,
        env=env(home, args.embedder),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        corpus, rng = Corpus(1, args.entities), random.Random(7)
        report: dict[str, Any] = {
            "entities": args.entities,
            "embedder": args.embedder,
            "workers": args.workers or "default",
            "clients": "processes",
        }
        recall_bodies = (
            []
            if "recall" not in args.kinds
            else [
                ("recall", {"query": corpus.query(rng.choice((1, 3, 8)), rng)})
                for _ in range(args.requests)
            ]
        )
        report["recall"] = [
            run_level(base, c, recall_bodies, server.pid) for c in args.levels if recall_bodies
        ]
        report["remember"] = []
        for c in args.levels if "remember" in args.kinds else ():
            bodies = [
                ("remember", {**corpus.memory(i, rng), "name": f"http-bench-{c}-{i}"})
                for i in range(args.requests)
            ]
            report["remember"].append(run_level(base, c, bodies, server.pid))
        report["server_peak_rss"] = peak_rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"memesh serve, {report['entities']:,} memories, embedder {report['embedder']}")
        for kind in ("recall", "remember"):
            for r in report[kind]:
                print(
                    f"{kind:<9} {r['clients']:>2} clients  {r['per_second']:>7.1f} req/s  "
                    f"p50 {r['p50']:>6.2f}  p95 {r['p95']:>6.2f}  p99 {r['p99']:>6.2f} ms  "
                    f"non-200 {r['non_200']}  CPU/req server {r['server_cpu_ms']} "
                    f"client {r['client_cpu_ms']} ms"
                )
        rss = report["server_peak_rss"]
        print(f"server peak RSS {rss['sum_mb']} MB over {rss['processes']} process(es)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
