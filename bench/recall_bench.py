"""Remember and recall speed through memesh's operation layer (not a test; run it by hand).

    .venv/bin/python -m bench.recall_bench                     # 10k memories, fresh temp DB
    .venv/bin/python -m bench.recall_bench --entities 100000   # 100k (seeding takes minutes)
    .venv/bin/python -m bench.recall_bench --db /tmp/b/kg.db --reuse --json

What it does:
1. Points MEMESH_HOME / MEMESH_DB_PATH at the chosen file, sets Django up, migrates.
2. Seeds N memories through OPERATIONS["remember"], one call per memory as an agent would:
   software-engineering decisions, lessons, bug fixes and notes generated from seeded
   vocabularies (a few hundred common technical words and phrases, Zipf-weighted, plus a
   Zipf-like tail of rare identifiers: service names, error codes, file paths, ticket ids,
   function names; bench/corpus.py). Deterministic for a given --seed and N.
3. Times recall through OPERATIONS["recall"] for 1-, 3- and 8-word queries drawn from the same
   distributions, and for each query the bare FTS5 MATCH for the terms the service selected
   (the MATCH inside EntityManager.fts_candidates, on the raw DB-API cursor), plus the df-guard
   lookups (fts5vocab + row count) on their own. Then the empty query (recent listing).
4. Prints a table (or JSON with --json) with the machine facts.

Recall counts accesses (a small write per recall), exactly as in production.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import facts
from bench.corpus import Corpus
from bench.measure import file_sizes, summary_ms
from bench.recall_table import render

MEASURED_CODE = ("graph", "memesh_site")  # the code whose commit the report names
QUERY_SIZES = (1, 3, 8)
WARMUP_QUERIES = 20
BENCH_SECRET_KEY = "memesh-bench-not-secret"  # keeps the bench from writing a key file
# The MATCH at the core of EntityManager.fts_candidates (live table, no filters), without its
# join to graph_entity for the ranking inputs.
BARE_MATCH_SQL = (
    "SELECT rowid, bm25(graph_entity_fts, {weights}) AS score FROM graph_entity_fts "
    "WHERE graph_entity_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?"
)  # weights: graph.storage.keyword.retrieval.BM25_WEIGHTS, filled in once Django is set up


@dataclass
class SizeResult:
    words: int
    recall: list[float] = field(default_factory=list)
    bare: list[float] = field(default_factory=list)
    guard: list[float] = field(default_factory=list)
    terms: list[int] = field(default_factory=list)
    postings: list[int] = field(default_factory=list)  # summed df of the selected terms
    hits: int = 0
    nothing_selected: int = 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=10_000, help="memories to seed (10000)")
    ap.add_argument("--queries", type=int, default=300, help="queries per query size (300)")
    ap.add_argument("--db", type=Path, help="database file (default: in a fresh temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse an already-seeded --db")
    ap.add_argument("--seed", type=int, default=1, help="random seed (1)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument(
        "--embed-at-most",
        type=int,
        help="embed at most this many memories with the model; give the rest vectors "
        "synthesised from those (labelled in the output) — for vector-search latency at sizes "
        "whose embedding would take hours",
    )
    ap.add_argument(
        "--embedder",
        default="local",
        help="embedder for the hybrid figures (local); 'none' measures keyword recall only",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="also run the recall loop under cProfile and print the top functions to stderr",
    )
    args = ap.parse_args(argv)
    if args.reuse and args.db is None:
        ap.error("--reuse needs --db")
    return args


def setup_django(db: Path, embedder: str) -> None:
    os.environ["MEMESH_HOME"] = str(db.parent)
    os.environ["MEMESH_EMBEDDER"] = embedder
    os.environ["MEMESH_DB_PATH"] = str(db)
    os.environ.setdefault("MEMESH_SECRET_KEY", BENCH_SECRET_KEY)
    os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"
    # Embedding is deferred as in production: writes queue a task (no worker runs here) and
    # the backfill below computes the vectors, timed on its own.
    os.environ["MEMESH_CELERY_EAGER"] = "false"
    import django

    django.setup()


def seed(corpus: Corpus, n: int, rng: random.Random, ctx: Any) -> list[float]:
    from tqdm import tqdm

    from graph.ops.registry import OPERATIONS

    remember = OPERATIONS["remember"]
    latencies: list[float] = []
    for i in tqdm(range(n), desc="remember", unit="mem", file=sys.stderr, smoothing=0.05):
        payload = corpus.memory(i, rng)
        t0 = time.perf_counter()
        remember.run(payload, ctx)
        latencies.append(time.perf_counter() - t0)
    return latencies


def measure_queries(
    corpus: Corpus, n_queries: int, seed_value: int, ctx: Any
) -> tuple[list[SizeResult], list[float], dict[int, list[str]]]:
    from django.db import connection

    from graph.models import Entity
    from graph.ops.kit.fields import DEFAULT_RECALL_LIMIT
    from graph.ops.recall.selector import CANDIDATE_FACTOR, MIN_CANDIDATES
    from graph.ops.registry import OPERATIONS
    from graph.search import text
    from graph.storage.keyword.retrieval import BM25_WEIGHTS

    recall = OPERATIONS["recall"]
    limit = max(DEFAULT_RECALL_LIMIT * CANDIDATE_FACTOR, MIN_CANDIDATES)
    connection.ensure_connection()
    raw = connection.connection.cursor()  # the DB-API cursor, no Django wrapper
    bare_match_sql = BARE_MATCH_SQL.format(weights=BM25_WEIGHTS)

    def select(query: str) -> list[str]:
        terms = text.query_terms(query)
        if not terms:
            return []
        return text.select_terms(terms, *Entity.objects.term_stats(terms))

    results = []
    queries: dict[int, list[str]] = {}
    for size in QUERY_SIZES:
        rng = random.Random(seed_value * 1000 + size)
        warm = [corpus.query(size, rng) for _ in range(WARMUP_QUERIES)]
        qs = [corpus.query(size, rng) for _ in range(n_queries)]
        queries[size] = qs
        for q in warm:
            recall.run({"query": q}, ctx)
            if sel := select(q):
                raw.execute(bare_match_sql, (text.match_expression(sel), limit)).fetchall()
        res = SizeResult(size)
        for q in qs:
            t0 = time.perf_counter()
            out = recall.run({"query": q}, ctx)
            res.recall.append(time.perf_counter() - t0)
            res.hits += bool(out["entities"])

            terms = text.query_terms(q)
            t0 = time.perf_counter()
            freqs, rows = Entity.objects.term_stats(terms)
            res.guard.append(time.perf_counter() - t0)
            sel = text.select_terms(terms, freqs, rows)
            res.terms.append(len(sel))
            res.postings.append(sum(freqs[t] for t in sel))
            if not sel:
                res.nothing_selected += 1
                continue
            match = text.match_expression(sel)
            t0 = time.perf_counter()
            raw.execute(bare_match_sql, (match, limit)).fetchall()
            res.bare.append(time.perf_counter() - t0)
        results.append(res)

    empty: list[float] = []
    for _ in range(WARMUP_QUERIES):
        recall.run({}, ctx)
    for _ in range(n_queries):
        t0 = time.perf_counter()
        recall.run({}, ctx)
        empty.append(time.perf_counter() - t0)
    raw.close()
    return results, empty, queries


def backfill(at_most: int | None) -> dict[str, Any]:
    """Embed every memory still without a vector (or the first `at_most`), in the worker's
    batches; timed."""
    from tqdm import tqdm

    from graph.indexing import embedding_pass, generations
    from graph.models import Entity, EntityVector

    live = generations.live_generation()
    pending = (
        EntityVector.objects.pending_count(live.generation) if live else Entity.objects.count()
    )
    if at_most is not None:
        pending = min(pending, at_most)
    done = 0
    t0 = time.perf_counter()
    with tqdm(total=pending, desc="embed", unit="mem", file=sys.stderr, smoothing=0.05) as bar:
        while at_most is None or done < at_most:
            step = 512 if at_most is None else min(512, at_most - done)
            report = embedding_pass.embed_pending(max_entities=step)
            if report.error or report.skipped:
                raise SystemExit(f"embedding failed: {report.error or report.skipped}")
            if not report.embedded:
                break
            done += report.embedded
            bar.update(report.embedded)
    seconds = time.perf_counter() - t0
    return {
        "embedded": done,
        "seconds": round(seconds, 1),
        "per_second": round(done / seconds, 1) if done else None,
        "synthesised": synthesise_rest(),
    }


def synthesise_rest() -> int:
    """Vectors for the memories still waiting: a real vector of another memory plus noise.

    Only for latency at large sizes: the search's cost (a Hamming scan of every row, exact
    rescoring of 400) does not depend on the values; retrieval quality is measured by
    bench/quality_eval.py on real vectors only.
    """
    import numpy as np
    from django.db import transaction
    from django.utils import timezone

    from graph.indexing import generations
    from graph.models import Entity, EntityVector
    from graph.search.text import text_hash

    live = generations.live_generation()
    if live is None:
        return 0
    real = EntityVector.objects.floats(
        live.generation, list(EntityVector.objects.hashes(live.generation))
    )
    pool = np.stack(list(real.values())) if real else None
    rng = np.random.default_rng(0)
    made = 0
    while pool is not None:
        ids = EntityVector.objects.pending_ids(live.generation, 2000)
        if not ids:
            break
        texts = Entity.objects.embedding_texts(ids)
        base = pool[rng.integers(0, len(pool), len(texts))]
        noisy = base + rng.normal(0, 0.02, base.shape).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        rows = [(i, text_hash(t), noisy[n]) for n, (i, t) in enumerate(texts.items())]
        with transaction.atomic():
            EntityVector.objects.store(live.generation, rows, timezone.now())
        made += len(rows)
    return made


def measure_hybrid(queries: dict[int, list[str]], ctx: Any) -> list[dict[str, Any]]:
    """Hybrid recall latency, query embedding included (no query embedding is cached)."""
    from graph.embedding import provider
    from graph.indexing import generations, query_cache
    from graph.models import EntityVector
    from graph.ops.registry import OPERATIONS

    recall = OPERATIONS["recall"]
    embedder = provider.current()
    live = generations.live_generation()
    assert embedder is not None and live is not None
    # With room for no entry the query cache keeps nothing: every recall and query_vector
    # call below embeds its query, as recall does for a query it has not seen.
    cache_size, query_cache.QUERY_CACHE_SIZE = query_cache.QUERY_CACHE_SIZE, 0
    rows = []
    try:
        for size, qs in queries.items():
            for q in qs[:WARMUP_QUERIES]:
                recall.run({"query": q}, ctx)
            total, embed, knn, modes = [], [], [], set()
            for q in qs:
                t0 = time.perf_counter()
                out = recall.run({"query": q}, ctx)
                total.append(time.perf_counter() - t0)
                modes.add(out["retrieval"]["mode"])
                t0 = time.perf_counter()
                qv = query_cache.query_vector(embedder, q)
                t1 = time.perf_counter()
                EntityVector.objects.nearest(
                    live.generation, qv, k=40, coarse=400, token=live.created_at
                )
                t2 = time.perf_counter()
                embed.append(t1 - t0)
                knn.append(t2 - t1)
            rows.append(
                {
                    "words": size,
                    "recall": summary_ms(total),
                    "embed_query": summary_ms(embed),
                    "vector_search": summary_ms(knn),
                    "modes": sorted(modes),
                }
            )
    finally:
        query_cache.QUERY_CACHE_SIZE = cache_size
    return rows


def profile_recall(queries: dict[int, list[str]], ctx: Any) -> None:
    import cProfile
    import pstats

    from graph.ops.registry import OPERATIONS

    recall = OPERATIONS["recall"]
    for size, qs in queries.items():
        prof = cProfile.Profile()
        prof.enable()
        for q in qs:
            recall.run({"query": q}, ctx)
        prof.disable()
        print(f"\n=== cProfile: {len(qs)} recalls of {size}-word queries ===", file=sys.stderr)
        stats = pstats.Stats(prof, stream=sys.stderr).strip_dirs()
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    commit = facts.git_commit(MEASURED_CODE)  # before Django imports the code being measured
    fingerprint = facts.code_fingerprint(MEASURED_CODE)
    temp_dir = None
    if args.db is None:
        temp_dir = Path(tempfile.mkdtemp(prefix="memesh-bench-"))
        db = temp_dir / "knowledge-graph.db"
    else:
        db = args.db.expanduser().resolve()
        if db.exists() and db.stat().st_size > 0 and not args.reuse:
            print(f"{db} exists: pass --reuse to use it, or remove it", file=sys.stderr)
            return 2
        db.parent.mkdir(parents=True, exist_ok=True)
    setup_django(db, args.embedder)

    from django.core.management import call_command

    from graph.models import Entity
    from graph.ops.kit.operation import CallContext

    try:
        call_command("migrate", verbosity=0)
        ctx = CallContext("bench")
        existing = Entity.objects.count()
        n = args.entities
        remember_report: dict[str, Any] | None = None
        if args.reuse and existing:
            if existing != n:
                print(f"reusing {existing:,} memories (not --entities {n:,})", file=sys.stderr)
            n = existing
            corpus = Corpus(args.seed, n)
        else:
            corpus = Corpus(args.seed, n)
            t0 = time.perf_counter()
            lat = seed(corpus, n, random.Random(args.seed), ctx)
            elapsed = time.perf_counter() - t0
            s = summary_ms(lat)
            remember_report = {
                "count": n,
                "seconds": round(elapsed, 1),
                "per_second": round(n / elapsed, 1),
                "p50": s["p50"],
                "p95": s["p95"],
            }

        embed_report = None if args.embedder == "none" else backfill(args.embed_at_most)
        # Keyword-only figures first, with no embedder configured (the setting is read on
        # every call; the environment only once, by settings).
        from django.conf import settings

        settings.MEMESH_EMBEDDER = "none"
        results, empty, queries = measure_queries(corpus, args.queries, args.seed, ctx)
        settings.MEMESH_EMBEDDER = args.embedder
        hybrid_rows = None if args.embedder == "none" else measure_hybrid(queries, ctx)
        recall_rows = []
        for r in results:
            rec, bare = summary_ms(r.recall), summary_ms(r.bare)
            recall_rows.append(
                {
                    "words": r.words,
                    "recall": rec,
                    "bare_match": bare,
                    "ratio_p50": round(rec["p50"] / bare["p50"], 2) if bare["n"] else None,
                    "guard": summary_ms(r.guard),
                    "mean_terms": round(statistics.fmean(r.terms), 2),
                    "median_postings": statistics.median(r.postings) if r.postings else 0,
                    "hit_rate": round(r.hits / len(r.recall), 3),
                    "nothing_selected": r.nothing_selected,
                    "example_queries": queries[r.words][:3],
                }
            )
        report = {
            "entities": n,
            "queries_per_size": args.queries,
            "seed": args.seed,
            "machine": facts.connected_machine(commit),
            "code_changed_during_run": facts.code_fingerprint(MEASURED_CODE) != fingerprint,
            "remember": remember_report,
            "recall": recall_rows,
            "empty_query": summary_ms(empty),
            "embedder": args.embedder,
            "backfill": embed_report,
            "hybrid": hybrid_rows,
            "db_mb": file_sizes(db),
            "db_path": None if temp_dir else str(db),
        }
        print(json.dumps(report, indent=2) if args.json else render(report))
        if args.profile:
            profile_recall(queries, ctx)
    finally:
        from django.db import connections

        connections.close_all()
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
