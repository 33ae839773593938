"""How fast each local model embeds the shared workload's backlog, and a query (not a test;
run by hand):

    .venv/bin/python -m bench.embedder_backlog [--entities 10000] [--every 10] [--json]

The shared HTTP workload (../shared/tools/http_workload.py, as bench/peer_compare.py loads
it) generates its memories for --entities and its seed; of every --every-th, the text the
embedding pass sends (graph.search.text.embedding_text) is embedded by each model as the
worker embeds it — its threads, its pace answering that the server is idle (the batch budget
chosen by measurement, graph/embedding/batching.py), batches of the pass's 32 with their
content pieces. The models take turns, batch by batch, in one process: on a shared machine
whatever else runs slows both alike. Printed per model: memories/s, the seconds the whole
--entities backlog would take at that rate, and the p50 of embedding the workload's recall
queries one at a time (no cache), as recall embeds a new query, the models again in turn.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
WORKLOAD = REPO.parent / "shared" / "tools" / "http_workload.py"
MODELS = ("minilm", "bge-small-en-v1.5")
QUERIES = 150


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=10_000, help="the workload's size")
    ap.add_argument("--every", type=int, default=10, help="store every Nth of its memories")
    ap.add_argument("--seed", type=int, default=42, help="the workload's seed")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--workload", type=Path, default=WORKLOAD)
    ap.add_argument("--json", action="store_true")
    return ap.parse_args(argv)


def _workload(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("http_workload", path)
    if spec is None or spec.loader is None or not path.exists():
        sys.exit(f"the shared workload is not at {path} (--workload)")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every model of --models, in turns, on the same memories and queries."""
    os.environ.setdefault("MEMESH_HOME", tempfile.mkdtemp(prefix="memesh-backlog-"))
    os.environ.setdefault("MEMESH_SECRET_KEY", "memesh-bench-not-secret")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    import django

    django.setup()
    from django.conf import settings

    from graph.embedding import local_models, provider
    from graph.embedding.local import LocalEmbedder, local_embedder
    from graph.indexing.embedding_pass import EMBED_BATCH
    from graph.search.text import embedding_text

    wl = _workload(args.workload)
    corpus, vocab, cum = wl.generate_corpus(args.entities, args.seed)
    texts = [embedding_text(e["name"], None, e["observations"]) for e in corpus[:: args.every]]
    queries = [q["query"] for q in wl.generate_queries(corpus, vocab, cum, QUERIES, args.seed)]
    # As the worker: its threads, and a pace that reports an idle server.
    provider.use_threads(settings.MEMESH_WORKER_EMBEDDER_THREADS)
    embedders: list[LocalEmbedder] = []
    for name in args.models.split(","):
        spec = local_models.find(name)
        if spec is None:
            sys.exit(f"unknown local model {name!r}")
        embedders.append(local_embedder(spec, pace=lambda: 60.0))
    for embedder in embedders:
        embedder.warm_up()
    seconds = [0.0] * len(embedders)
    for start in range(0, len(texts), EMBED_BATCH):
        batch = texts[start : start + EMBED_BATCH]
        for n, embedder in enumerate(embedders):
            started = time.perf_counter()
            embedder.embed_with_pieces(batch)
            seconds[n] += time.perf_counter() - started
    times: list[list[float]] = [[] for _ in embedders]
    for query in queries:
        for n, embedder in enumerate(embedders):
            started = time.perf_counter()
            embedder.embed_queries_with_pieces([query])
            times[n].append((time.perf_counter() - started) * 1000)
    rows = []
    for n, embedder in enumerate(embedders):
        rate = len(texts) / seconds[n]
        rows.append(
            {
                "model": embedder.identity,
                "memories": len(texts),
                "seconds": round(seconds[n], 1),
                "memories_per_s": round(rate, 1),
                f"backlog_{args.entities}_s": round(args.entities / rate),
                "query_p50_ms": round(statistics.median(times[n]), 1),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    rows = measure(args)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print(
            f"{row['model']:32} {row['memories']:6} memories in {row['seconds']:7.1f} s  "
            f"{row['memories_per_s']:6.1f}/s  backlog of {args.entities:,}: "
            f"{row[f'backlog_{args.entities}_s']} s  query p50 {row['query_p50_ms']} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
