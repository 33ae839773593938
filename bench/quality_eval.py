"""Retrieval quality of keyword-only, vector-only and hybrid recall (not a test; run by hand).

    .venv/bin/python -m bench.quality_eval                  # fresh temp DB, local MiniLM
    .venv/bin/python -m bench.quality_eval --db /tmp/q/kg.db --reuse --json
    .venv/bin/python -m bench.quality_eval --calibrate      # similarity distributions too
    .venv/bin/python -m bench.quality_eval --locomo         # the LoCoMo dev conversations

1. Seeds bench/data/quality/memories.jsonl through OPERATIONS["remember"] and embeds every
   memory with the configured embedder (default: the local model) via graph.indexing.embedding_pass.
2. For each strategy (keyword, vector, hybrid) runs every query of queries.jsonl **in
   sequence through the real recall path on one database** — access counts are flushed after
   each query, so usage factors act between queries as in real use — and then once more in
   reverse order, from the same starting state (access counters reset). The two orders must
   agree within one point (0.01) on every metric over all queries, else the exit code is 1:
   ranking that depends on query order is the failure DESIGN §5 warns about.
   With --locomo the data set is the LoCoMo conversations instead (bench/locomo.py): each
   question is recalled with its conversation's tag, and the groups are its categories.
   With --cite every query is recalled in a session of its own, which then cites the targets
   it was returned (an agent citing the memory that answered it): the other memories returned
   become misses, so citations and misses act between queries as access counts do.
3. Prints hit@1/5/10 and MRR (reciprocal rank of the first target in the top 10) per query
   kind, for each strategy.

The strategies, each through the product's public calls:
- hybrid: `entity_recall` as every transport calls it, with the embedder configured.
- keyword: `entity_recall` with no embedder configured (MEMESH_EMBEDDER=none for the run):
  the product's own keyword-only mode.
- vector: the vector side alone, composed here from the storage calls recall itself makes:
  the query's embedding, its nearest neighbours in the live generation, their ranking inputs,
  fusion with no keyword candidate (the semantic cut-off still applies) and the usage ranking;
  the memories returned count an access, as recall's do.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data" / "quality"
STRATEGIES = ("keyword", "vector", "hybrid")
K = 10
TOLERANCE = 0.01


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="database file (default: in a fresh temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse an already-seeded --db")
    ap.add_argument("--embedder", default="local", help="embedding provider (local)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    ap.add_argument("--calibrate", action="store_true", help="print similarity distributions")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--memories", default="memories.jsonl", help="memories file in the data set")
    ap.add_argument("--cite", action="store_true", help="each query's session cites its targets")
    ap.add_argument(
        "--locomo",
        nargs="?",
        type=Path,
        const=Path(),
        help="measure the LoCoMo conversations in DIR (default: ../shared/data/locomo-dev)",
    )
    return ap.parse_args(argv)


def setup(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="memesh-quality-"))
    db = args.db or home / "kg.db"
    os.environ.update(
        MEMESH_HOME=str(home),
        MEMESH_DB_PATH=str(db),
        MEMESH_EMBEDDER=args.embedder,
        MEMESH_SECRET_KEY="memesh-bench-not-secret",
        # Vectors are built here, synchronously; no task is queued.
        MEMESH_CELERY_EAGER="false",
        MEMESH_EMBED_DEBOUNCE_SECONDS="3600",
        DJANGO_SETTINGS_MODULE="memesh_site.settings",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def load(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def seed(memories: list[dict[str, Any]], reuse: bool) -> dict[str, float]:
    from graph.indexing import embedding_pass
    from graph.models import Entity
    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS

    facts: dict[str, float] = {}
    if not (reuse and Entity.objects.count() == len(memories)):
        ctx = CallContext(source_host="bench")
        started = time.perf_counter()
        for memory in memories:
            OPERATIONS["remember"].run(memory, ctx)
        facts["seed_seconds"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    report = embedding_pass.embed_pending()
    if report.error or report.skipped:
        sys.exit(f"embedding failed: {report.error or report.skipped}")
    if report.embedded:
        seconds = time.perf_counter() - started
        facts["embedded"] = report.embedded
        facts["embed_per_second"] = round(report.embedded / seconds, 1)
    return facts


def reset_usage() -> None:
    from graph.models import Entity, SessionOutcome
    from graph.ops.recall.access import discard_pending_accesses

    discard_pending_accesses()
    Entity.objects.update(access_count=0, last_accessed_at=None, recall_hits=0, recall_misses=0)
    SessionOutcome.objects.all().delete()


@contextmanager
def configured_for(strategy: str, embedder: str) -> Iterator[None]:
    """The embedder configuration a strategy runs with: none for keyword-only, else `embedder`.
    Recall reads the configuration (settings.MEMESH_EMBEDDER among it) on every call, so the
    change applies at once."""
    from django.conf import settings

    from graph.embedding import provider

    settings.MEMESH_EMBEDDER = "none" if strategy == "keyword" else embedder
    try:
        provider.current()  # build (load) the embedder now, not inside the timed run
        yield
    finally:
        settings.MEMESH_EMBEDDER = embedder


def recall_names(
    query: str, strategy: str, tag: str | None = None, cite: set[str] | None = None
) -> list[str]:
    """Names of the memories recall returns for the query, best first (top K). With `cite`,
    in a session of its own that then cites those of `cite` it returned (--cite)."""
    from graph.ops.feedback import feedback_record
    from graph.ops.recall.schema import RecallInput
    from graph.ops.recall.selector import entity_recall

    if strategy == "vector":
        return vector_only_names(query, K, tag)
    session = None if cite is None else f"bench-{uuid.uuid4().hex}"
    # hybrid and keyword differ only in the embedder configured (configured_for).
    result = entity_recall(data=RecallInput(query=query, limit=K, tag=tag, session_id=session))
    if cite is not None:
        hits = [e.id for e in result.entities if e.name in cite]
        feedback_record(hits=hits, session_id=session)
    return [e.name for e in result.entities]


def vector_only_names(query: str, limit: int, tag: str | None = None) -> list[str]:
    """The vector side of recall alone (the baseline): the query's nearest neighbours in the
    live generation, fused with no keyword candidate and ranked with the usage factors, as
    graph.ops.recall.selector.entity_recall ranks them; an access is counted for each one
    returned."""
    from django.utils import timezone

    from graph.embedding import provider
    from graph.indexing import generations, query_cache
    from graph.models import Entity, EntityVector
    from graph.ops.recall.access import note_accesses
    from graph.ops.recall.selector import (
        CANDIDATE_FACTOR,
        COARSE_CANDIDATES,
        MIN_CANDIDATES,
        rank_fused,
    )
    from graph.search import fusion
    from graph.storage.entity_filters import EntityFilters

    embedder = provider.current()
    live = generations.live_generation()
    if embedder is None or live is None:
        sys.exit("vector-only needs an embedder and a live vector generation")
    now = timezone.now()
    pool = max(limit * CANDIDATE_FACTOR, MIN_CANDIDATES)  # recall's candidate pool
    # A tagged recall searches the vectors of its scope only, as recall does.
    near = EntityVector.objects.nearest(
        live.generation,
        query_cache.query_vector(embedder, query),
        k=pool,
        coarse=max(COARSE_CANDIDATES, pool * 4),
        token=live.created_at,
        among=None if tag is None else Entity.objects.scoped_ids(tag=tag),
    )
    # Active memories only (ranking_inputs filters like the keyword search does).
    inputs = {
        h.entity_id: h
        for h in Entity.objects.ranking_inputs(
            [i for i, _ in near], now=now, filters=EntityFilters(tag=tag)
        )
    }
    # On the fusion's scale, as recall reads them (graph.ops.recall.vector_side.VectorSide).
    offset, scale = embedder.similarity_map
    similarity = {i: offset + scale * sim for i, sim in near if i in inputs}
    fused = fusion.fuse({}, similarity, covered={})
    ranked = rank_fused(fused, inputs)
    ids = [r.entity_id for r in ranked[:limit]]
    note_accesses(ids, now)
    names = dict(Entity.objects.filter(id__in=ids).values_list("id", "name"))
    return [names[i] for i in ids]


def run(queries: list[dict[str, Any]], strategy: str, cite: bool = False) -> list[int | None]:
    """Rank (1-based) of the first target in the top K for each query, in the order given."""
    from graph.ops.recall.access import flush_accesses

    ranks: list[int | None] = []
    for q in queries:
        targets = set(q["targets"])
        names = recall_names(q["query"], strategy, q.get("tag"), targets if cite else None)
        flush_accesses()
        ranks.append(next((i + 1 for i, n in enumerate(names) if n in targets), None))
    return ranks


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "hit@1": sum(r is not None and r <= 1 for r in ranks) / n,
        "hit@5": sum(r is not None and r <= 5 for r in ranks) / n,
        "hit@10": sum(r is not None and r <= 10 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r is not None) / n,
    }


def group(queries: list[dict[str, Any]]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        groups["all"].append(i)
        if q.get("lang", "en") == "en":
            groups[q["kind"]].append(i)
        else:
            groups["multilingual"].append(i)
    return dict(groups)


def calibrate(queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Cosine similarity of each query to its target vs to the best non-target memory."""
    from graph.embedding import provider
    from graph.indexing import generations, query_cache
    from graph.models import Entity, EntityVector

    embedder = provider.current()
    live = generations.live_generation()
    assert embedder is not None and live is not None
    ids = dict(Entity.objects.values_list("name", "id"))
    target_sims: list[float] = []
    other_sims: list[float] = []
    for q in queries:
        qv = query_cache.query_vector(embedder, q["query"])
        near = EntityVector.objects.nearest(
            live.generation, qv, k=20, coarse=400, token=live.created_at
        )
        target_ids = {ids[t] for t in q["targets"] if t in ids}
        sims = EntityVector.objects.similarities(live.generation, qv, list(target_ids))
        target_sims.extend(sims.values())
        other = [s for i, s in near if i not in target_ids]
        if other:
            other_sims.append(other[0])

    def pct(values: list[float]) -> dict[str, float]:
        qs = statistics.quantiles(values, n=20)
        return {
            "p10": round(qs[1], 3),
            "p25": round(qs[4], 3),
            "p50": round(qs[9], 3),
            "p75": round(qs[14], 3),
            "p90": round(qs[17], 3),
        }

    return {"target": pct(target_sims), "best_non_target": pct(other_sims)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup(args)
    if args.locomo is not None:
        from bench import locomo

        memories, queries = locomo.load(args.locomo if args.locomo.parts else locomo.DEFAULT_DIR)
    else:
        memories, queries = load(args.memories), load("queries.jsonl")
    facts = seed(memories, args.reuse)
    groups = group(queries)
    report: dict[str, Any] = {
        "memories": len(memories),
        "queries": len(queries),
        **facts,
        "groups": {g: len(ix) for g, ix in groups.items()},
        "results": {},
    }
    agree = True
    for strategy in args.strategies.split(","):
        with configured_for(strategy, args.embedder):
            reset_usage()
            started = time.perf_counter()
            forward = run(queries, strategy, args.cite)
            seconds = time.perf_counter() - started
            reset_usage()
            backward = list(reversed(run(list(reversed(queries)), strategy, args.cite)))
        per_group = {}
        for name, ix in groups.items():
            f = metrics([forward[i] for i in ix])
            b = metrics([backward[i] for i in ix])
            # The whole run is the unit that must agree; a group of ~55 queries moves by
            # 0.018 when a single query changes, so groups are shown, not judged.
            if name == "all" and any(abs(f[m] - b[m]) > TOLERANCE for m in f):
                agree = False
            per_group[name] = {"forward": f, "reverse": b}
        report["results"][strategy] = {
            "groups": per_group,
            "ms_per_query": round(1000 * seconds / len(queries), 2),
        }
    report["orders_agree"] = agree
    if args.calibrate:
        report["calibration"] = calibrate(queries)
    reset_usage()
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_table(report)
    return 0 if agree else 1


def print_table(report: dict[str, Any]) -> None:
    print(
        f"{report['memories']} memories, {report['queries']} queries "
        f"({', '.join(f'{g} {n}' for g, n in report['groups'].items())})"
    )
    for key in ("seed_seconds", "embedded", "embed_per_second"):
        if key in report:
            print(f"{key}: {report[key]}")
    print()
    print("| strategy | group | hit@1 | hit@5 | hit@10 | MRR | reverse order hit@1/@5/@10/MRR |")
    print("|---|---|---|---|---|---|---|")
    for strategy, data in report["results"].items():
        for name, pair in data["groups"].items():
            f, b = pair["forward"], pair["reverse"]
            print(
                f"| {strategy} | {name} | {f['hit@1']:.3f} | {f['hit@5']:.3f} | "
                f"{f['hit@10']:.3f} | {f['mrr']:.3f} | {b['hit@1']:.3f} / {b['hit@5']:.3f} / "
                f"{b['hit@10']:.3f} / {b['mrr']:.3f} |"
            )
    print()
    for strategy, data in report["results"].items():
        print(f"{strategy}: {data['ms_per_query']} ms per query")
    print(f"orders agree within {TOLERANCE} over all queries: {report['orders_agree']}")
    if "calibration" in report:
        print("similarity to target:", report["calibration"]["target"])
        print("similarity to best non-target:", report["calibration"]["best_non_target"])


if __name__ == "__main__":
    sys.exit(main())
