"""Keyword ranking on PostgreSQL beside SQLite's FTS5 (not a test; run by hand).

    .venv/bin/python -m bench.keyword_parity              # bench/data/quality
    .venv/bin/python -m bench.keyword_parity --locomo     # the LoCoMo dev conversations

PostgreSQL's keyword index computes FTS5's bm25 in SQL over posting tables
(graph/storage/postgres/keyword_retrieval.py), so the two backends should rank alike. This
loads one data set into a SQLite home and into a PostgreSQL database (a pgserver of its own,
in a temporary folder), each in a process of its own, and for every query compares:

- bm25: the keyword candidates recall asks for (its terms, guard and window; the top 10 by
  Entity.objects.fts_candidates), their order and their scores;
- recall: keyword-only recall as the product runs it (MEMESH_EMBEDDER=none), queries in
  sequence with accesses counted between them, as bench.quality_eval runs it: hit@1/5/10 on
  each backend and the overlap of the two top 10s.

It prints the figures and asserts nothing.
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
K = 10


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--locomo", nargs="?", type=Path, const=Path(), help="LoCoMo data folder")
    ap.add_argument("--child", choices=["sqlite", "postgresql"], help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def data_set(locomo: Path | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if locomo is not None:
        from bench import locomo as locomo_data

        return locomo_data.load(locomo if locomo.parts else locomo_data.DEFAULT_DIR)
    from bench.quality_eval import load

    return load("memories.jsonl"), load("queries.jsonl")


def child(args: argparse.Namespace) -> None:
    """Seed the data set into this process's database and write what each query got."""
    home = Path(tempfile.mkdtemp(prefix="memesh-parity-"))
    os.environ.update(
        MEMESH_HOME=str(home),
        MEMESH_EMBEDDER="none",
        MEMESH_SECRET_KEY="memesh-bench-not-secret",
        MEMESH_CELERY_EAGER="false",
        DJANGO_SETTINGS_MODULE="memesh_site.settings",
    )
    if args.child == "postgresql":
        os.environ["MEMESH_DATABASE_URL"] = args.url
    else:
        os.environ["MEMESH_DB_PATH"] = str(home / "kg.db")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    from graph.models import Entity
    from graph.ops.kit.operation import CallContext
    from graph.ops.recall.access import flush_accesses
    from graph.ops.recall.schema import RecallInput
    from graph.ops.recall.selector import entity_recall
    from graph.ops.registry import OPERATIONS
    from graph.search import text

    call_command("migrate", verbosity=0)
    memories, queries = data_set(args.locomo)
    ctx = CallContext(source_host="bench")
    for memory in memories:
        OPERATIONS["remember"].run(memory, ctx)
    names = dict(Entity.objects.values_list("id", "name"))
    out = []
    for q in queries:
        # The keyword candidates as recall asks for them (graph/ops/recall/selector.py).
        started = time.perf_counter()
        terms = text.query_terms(q["query"])
        freqs, rows = Entity.objects.term_stats(terms)
        selected = text.select_terms(terms, freqs, rows)
        bm25: list[tuple[str, float]] = []
        if selected:
            hits = Entity.objects.fts_candidates(
                text.match_expression(selected),
                limit=K,
                now=timezone.now(),
                tag=q.get("tag"),
                newest=text.match_window(selected, freqs, rows, K),
            )
            bm25 = [(names[h.entity_id], h.bm25) for h in hits]
        keyword_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        result = entity_recall(data=RecallInput(query=q["query"], limit=K, tag=q.get("tag")))
        recall_ms = (time.perf_counter() - started) * 1000
        flush_accesses()
        recalled = [e.name for e in result.entities]
        out.append(
            {
                "targets": q["targets"],
                "bm25": bm25,
                "recall": recalled,
                "ms": [keyword_ms, recall_ms],
            }
        )
    assert args.out is not None
    args.out.write_text(json.dumps(out))


def run_child(backend: str, out: Path, args: argparse.Namespace, url: str = "") -> None:
    command = [sys.executable, "-m", "bench.keyword_parity", "--child", backend, "--out", str(out)]
    if url:
        command += ["--url", url]
    if args.locomo is not None:
        command += ["--locomo", str(args.locomo)] if args.locomo.parts else ["--locomo"]
    subprocess.run(command, check=True, cwd=REPO)


def hits(results: list[dict[str, Any]]) -> dict[str, float]:
    ranks = [
        next((i + 1 for i, n in enumerate(r["recall"]) if n in set(r["targets"])), None)
        for r in results
    ]
    n = len(ranks) or 1
    return {f"hit@{k}": sum(r is not None and r <= k for r in ranks) / n for k in (1, 5, 10)}


def compare(sqlite: list[dict[str, Any]], postgres: list[dict[str, Any]]) -> None:
    same_order = same_set = 0
    overlap = 0.0
    recall_same = 0
    worst_score = 0.0
    for a, b in zip(sqlite, postgres, strict=True):
        names_a = [n for n, _ in a["bm25"]]
        names_b = [n for n, _ in b["bm25"]]
        same_order += names_a == names_b
        same_set += set(names_a) == set(names_b)
        for (name_a, score_a), (name_b, score_b) in zip(a["bm25"], b["bm25"], strict=False):
            if name_a == name_b:
                worst_score = max(worst_score, abs(score_a - score_b) / max(abs(score_a), 1e-12))
        recall_same += a["recall"] == b["recall"]
        top_a, top_b = set(a["recall"]), set(b["recall"])
        overlap += len(top_a & top_b) / len(top_a | top_b) if top_a | top_b else 1.0
    n = len(sqlite) or 1
    print(f"queries: {len(sqlite)}")
    print(f"bm25 top {K}: same order {same_order}/{len(sqlite)}, same set {same_set}")
    print(f"bm25 score, largest relative difference (same row): {worst_score:.2e}")
    print(f"recall top {K}: identical {recall_same}/{len(sqlite)}, mean overlap {overlap / n:.3f}")
    hits_a, hits_b = hits(sqlite), hits(postgres)
    print(f"{'':>12} {'hit@1':>7} {'hit@5':>7} {'hit@10':>7}")
    for label, figures in (("sqlite", hits_a), ("postgresql", hits_b)):
        print(f"{label:>12} " + " ".join(f"{figures[k]:7.3f}" for k in figures))
    # Wall time in the bench's process (term stats + candidates; one whole recall), shared
    # 2-core machine: a first look, not the scale bench.
    print(f"{'ms p50':>12} {'bm25':>7} {'recall':>7}")
    for label, results in (("sqlite", sqlite), ("postgresql", postgres)):
        p50 = [statistics.median(r["ms"][i] for r in results) for i in (0, 1)]
        print(f"{label:>12} {p50[0]:7.2f} {p50[1]:7.2f}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.child:
        child(args)
        return
    import warnings

    import pgserver
    import psycopg

    work = Path(tempfile.mkdtemp(prefix="memesh-parity-"))
    warnings.simplefilter("ignore")  # pgserver's XDG_RUNTIME_DIR notice, on each call
    server = pgserver.get_server(work / "pg", cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE memesh_parity")
        url = f"postgresql://postgres:@/memesh_parity?host={work / 'pg'}"
        run_child("sqlite", work / "sqlite.json", args)
        run_child("postgresql", work / "postgresql.json", args, url)
    finally:
        server.cleanup()
    compare(
        json.loads((work / "sqlite.json").read_text()),
        json.loads((work / "postgresql.json").read_text()),
    )


if __name__ == "__main__":
    main()
