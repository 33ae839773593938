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
   function names). Deterministic for a given --seed and N.
3. Times recall through OPERATIONS["recall"] for 1-, 3- and 8-word queries drawn from the same
   distributions, and for each query the bare FTS5 MATCH for the terms the service selected
   (the MATCH inside EntityManager.fts_candidates, on the raw DB-API cursor), plus the df-guard
   lookups (fts5vocab + row count) on their own. Then the empty query (recent listing).
4. Prints a table (or JSON with --json) with the machine facts.

Recall counts accesses (a small write per recall), exactly as in production.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
QUERY_SIZES = (1, 3, 8)
WARMUP_QUERIES = 20
BENCH_SECRET_KEY = "memesh-bench-not-secret"  # keeps the bench from writing a key file
# The MATCH at the core of EntityManager.fts_candidates (live table, no filters), without its
# join to graph_entity for the ranking inputs.
BARE_MATCH_SQL = (
    "SELECT rowid, bm25(graph_entity_fts, {weights}) AS score FROM graph_entity_fts "
    "WHERE graph_entity_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?"
)  # weights: graph.storage.keyword_index.BM25_WEIGHTS, filled in once Django is set up


# --- vocabularies ------------------------------------------------------------------------------

NOUNS = """
database|connection pool|migration|schema|index|query planner|cache|cache invalidation|
session|token|refresh token|access token|login flow|rate limiter|retry policy|backoff|
timeout|deadlock|race condition|memory leak|goroutine leak|thread pool|event loop|
message queue|dead letter queue|consumer|producer|topic|partition|offset|replica|
primary|failover|load balancer|reverse proxy|ingress|service mesh|sidecar|container|
pod|node|cluster|namespace|deployment|rollout|rollback|canary|feature flag|
config|environment variable|secret|certificate|TLS handshake|DNS lookup|socket|
request|response|payload|header|cookie|endpoint|API|webhook|callback|handler|
middleware|router|controller|serializer|validator|parser|tokenizer|encoder|
build|pipeline|CI job|test suite|flaky test|fixture|mock|snapshot|coverage|
linter|formatter|type checker|dependency|lockfile|package|version|release|changelog|
logging|log level|metrics|trace|span|dashboard|alert|on-call|incident|postmortem|
latency|throughput|p99|CPU usage|memory usage|disk space|file descriptor|heap|
garbage collector|allocation|benchmark|profiler|hot path|bottleneck|regression|
user|tenant|account|permission|role|audit log|billing|invoice|payment|refund|
subscription|search|ranking|embedding|vector index|full-text index|batch job|cron|
scheduler|worker|task|job queue|lock|mutex|transaction|isolation level|write-ahead log|
checkpoint|vacuum|backup|restore|replication lag|read replica|shard|partition key|
foreign key|unique constraint|null value|timestamp|timezone|UTC offset|date parsing|
unicode|encoding|locale|translation|frontend|component|state|store|reducer|hook|
render|hydration|bundle|bundle size|asset|CDN|image|thumbnail|upload|download|
storage bucket|object store|queue depth|circuit breaker|health check|readiness probe|
graceful shutdown|signal handler|exit code|stack trace|core dump|error message|
exception|null pointer|off-by-one error|integer overflow|float rounding|pagination|
cursor|sort order|filter|aggregation|report|export|import|CSV|JSON|YAML|protobuf|
schema registry|contract test|staging|production|local setup|docker compose|makefile
"""

TECH = """
PostgreSQL|SQLite|MySQL|Redis|Kafka|RabbitMQ|Celery|Django|FastAPI|Flask|React|Vue|
TypeScript|Python|Go|Rust|Node|Deno|Kubernetes|Helm|Terraform|Ansible|Docker|Podman|
nginx|Envoy|Istio|Prometheus|Grafana|Loki|Jaeger|OpenTelemetry|Sentry|Datadog|
Elasticsearch|OpenSearch|ClickHouse|DuckDB|S3|MinIO|GCS|Lambda|Cloud Run|ECS|
GitHub Actions|GitLab CI|Jenkins|pytest|Jest|Playwright|Cypress|mypy|ruff|ESLint|
Prettier|webpack|Vite|esbuild|pnpm|poetry|uv|pip|gRPC|GraphQL|REST|OAuth|JWT|
SAML|OIDC|bcrypt|argon2|pydantic|SQLAlchemy|Alembic|Hibernate|Spring|Gunicorn|
uvicorn|asyncio|Tokio|WebSocket|SSE|HTTP/2|protobuf|Avro|Parquet|Arrow|pandas|numpy
"""

VERBS_PAST = """
fixed|added|removed|switched|replaced|refactored|bumped|pinned|reverted|migrated|
moved|split|merged|renamed|deprecated|cached|batched|throttled|retried|logged|
profiled|benchmarked|tested|documented|disabled|enabled|tuned|increased|reduced|
rewrote|patched|upgraded|downgraded|isolated|reproduced|traced|debugged|shipped|
deployed|rolled back|investigated|measured|decided|configured|validated|sanitized
"""

VERBS_PRESENT = """
fails|breaks|hangs|times out|leaks|crashes|retries|blocks|spikes|drops|stalls|
returns|throws|logs|skips|duplicates|corrupts|truncates|overflows|locks|slows down|
recovers|flaps|degrades|rejects|accepts|serializes|deserializes|expires|rotates
"""

ADJECTIVES = """
slow|stale|missing|duplicated|flaky|broken|inconsistent|unbounded|blocking|idle|
expired|invalid|empty|oversized|corrupted|outdated|hardcoded|racy|noisy|silent|
intermittent|deterministic|idempotent|concurrent|cold|warm|partial|orphaned|leaked|
misconfigured|undocumented|legacy|critical|transient|persistent|nested|lazy|eager
"""

CONNECTORS = (
    "because",
    "so",
    "but",
    "and",
    "after",
    "when",
    "while",
    "since",
    "until",
    "which means",
    "otherwise",
    "then",
)

OPENERS = {
    "decision": [
        "Decided to use {t} for the {n}",
        "We chose {t} over {t} for {n}",
        "Going with {t} for the {n} in {r}",
        "Agreed to keep the {n} in {t}",
        "Decision: move the {n} to {t}",
    ],
    "lesson": [
        "Lesson learned: the {n} {vp} when the {n} is {a}",
        "Never trust the {n} from {r}",
        "Learned that {t} {vp} if the {n} is {a}",
        "Remember that the {n} in {r} is {a}",
        "Gotcha: {t} {n} {vp} under load",
    ],
    "bugfix": [
        "Fixed {a} {n} in {r}",
        "Root cause of {r}: {a} {n}",
        "The {n} {vp} because the {n} was {a}",
        "Bug in {r}: {n} {vp} after {n}",
        "Patched the {n} that {vp} on {r}",
    ],
    "note": [
        "Note: the {n} for {r} lives in {r}",
        "{t} {n} is configured in {r}",
        "The {n} uses {t} and the {n}",
        "TODO: check {n} in {r}",
        "Reminder: {n} needs {t} before {n}",
    ],
}
KIND_WEIGHTS = {"decision": 3, "lesson": 2, "bugfix": 4, "note": 3}

CLAUSES = [
    "{c} the {n} {vp}",
    "{c} we {v} the {n}",
    "{c} {t} {vp} with a {a} {n}",
    "see {r} for details",
    "the {n} now uses {t}",
    "which caused {a} {n} under load",
    "{c} {r} returned {r}",
    "{v} the {n} in {r}",
    "{c} the {n} was {a}",
    "{c} the {n} and {n} share a {n}",
    "as discussed in {r}",
    "{c} {t} handles the {n}",
    "and {v} the {a} {n}",
    "for {r} only",
]

QUERY_TEMPLATES_8 = [
    "why did the {w} fail after the {w} upgrade",
    "how did we fix the {k} {w} {w}",
    "what was decided about {w} for {w} {w}",
    "{k} {w} error when {w} the {w} in",
    "lesson learned about {w} {w} with {w} {k}",
    "is the {w} still {w} after {k} change",
    "where do we configure {w} {w} for {k}",
    "notes on {w} {w} and {k} {w} {w}",
    "which {w} does {k} use for {w} now",
    "what broke the {w} {w} in {k} again",
]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


SYLLABLES = _words(
    "ka ro ven tor bix lum quar sel dra mon fen zul tri pax nor vex hal cor dim"
    " sto rin gal mek tas phe lor yor kin vul zar bre nix ost pel tav"
)
SERVICE_SUFFIXES = ("svc", "api", "worker", "gateway", "sync", "proxy", "daemon", "scheduler")
DIRS = ("src", "app", "lib", "internal", "pkg", "services", "web", "cmd", "tools", "infra")
EXTS = ("py", "ts", "go", "rs", "tsx", "yaml", "sql", "toml", "sh")
TICKET_PREFIXES = ("PAY", "AUTH", "OPS", "INFRA", "SRCH", "WEB", "DATA", "PLAT", "SEC", "MOB")
ERROR_WORDS = ("CONN", "TIMEOUT", "AUTH", "QUOTA", "PARSE", "LOCK", "IO", "DNS", "TLS", "SCHEMA")
PROJECTS = _words(
    "atlas apollo billing checkout dashboard ingest ledger mobile nebula orion search storefront"
)
TOPICS = _words(
    "auth database deploy testing performance observability security frontend api infra"
    " payments search caching queues migrations ci"
)


_DANGLING = frozenset(
    _words("a and as because but for in on see so the then until we when which while with")
)


def _split(block: str) -> list[str]:
    return [item.strip() for item in block.split("|") if item.strip()]


class Zipf:
    """Sample items with weight 1/rank**s (rank by position after a seeded shuffle)."""

    def __init__(self, items: list[Any], s: float, rng: random.Random) -> None:
        self.items = list(items)
        rng.shuffle(self.items)
        self.cum = list(itertools.accumulate(1.0 / (r**s) for r in range(1, len(items) + 1)))

    def __call__(self, rng: random.Random) -> Any:
        return self.items[bisect.bisect_left(self.cum, rng.random() * self.cum[-1])]


@dataclass(frozen=True)
class Identifier:
    text: str  # as written in a memory
    key: str  # one distinctive word of it, used for 1-word queries


def _rare_identifiers(count: int, rng: random.Random) -> list[Identifier]:
    out: list[Identifier] = []
    seen: set[str] = set()
    while len(out) < count:
        kind = rng.randrange(6)
        stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
        if kind == 0:
            text = f"{stem}-{rng.choice(SERVICE_SUFFIXES)}"
            key = stem
        elif kind == 1:
            code = f"E{rng.randint(1000, 9999)}"
            text, key = code, code
        elif kind == 2:
            text = f"ERR_{rng.choice(ERROR_WORDS)}_{rng.randint(10, 999)}"
            key = text
        elif kind == 3:
            mod = f"{stem}_{rng.choice(['client', 'handler', 'utils', 'models', 'tasks'])}"
            text = f"{rng.choice(DIRS)}/{stem}/{mod}.{rng.choice(EXTS)}"
            key = stem
        elif kind == 4:
            text = f"{rng.choice(TICKET_PREFIXES)}-{rng.randint(100, 9999)}"
            key = text
        else:
            verb = rng.choice(["parse", "load", "sync", "build", "fetch", "render", "flush"])
            text = f"{verb}{stem.capitalize()}{rng.choice(['Config', 'Batch', 'State', 'Row'])}"
            key = text
        if text not in seen:
            seen.add(text)
            out.append(Identifier(text, key))
    return out


class Corpus:
    """Deterministic generator of memories and queries for a given seed and corpus size."""

    def __init__(self, seed: int, entities: int) -> None:
        rng = random.Random(seed)
        self.nouns = Zipf(_split(NOUNS), 0.9, rng)
        self.tech = Zipf(_split(TECH), 1.0, rng)
        self.verbs = Zipf(_split(VERBS_PAST), 0.8, rng)
        self.verbs_present = Zipf(_split(VERBS_PRESENT), 0.8, rng)
        self.adjectives = Zipf(_split(ADJECTIVES), 0.8, rng)
        # Heaps'-law-like: the identifier vocabulary grows with the corpus.
        self.rare = Zipf(_rare_identifiers(1500 + entities // 4, rng), 1.05, rng)
        words = {
            w
            for block in (NOUNS, TECH, VERBS_PAST, ADJECTIVES)
            for phrase in _split(block)
            for w in phrase.split()
            if w.isalpha() and len(w) > 2
        }
        self.words = Zipf(sorted(words), 0.9, rng)
        self.projects = Zipf(list(PROJECTS), 1.0, rng)
        self.topics = Zipf(list(TOPICS), 0.8, rng)
        self.kinds = list(KIND_WEIGHTS)
        self.kind_weights = list(KIND_WEIGHTS.values())

    def _fill(self, template: str, rng: random.Random) -> str:
        slots = {
            "n": lambda: self.nouns(rng),
            "t": lambda: self.tech(rng),
            "v": lambda: self.verbs(rng),
            "vp": lambda: self.verbs_present(rng),
            "a": lambda: self.adjectives(rng),
            "r": lambda: self.rare(rng).text,
            "c": lambda: rng.choice(CONNECTORS),
            "w": lambda: self.words(rng),
            "k": lambda: self.rare(rng).key,
        }
        out = []
        for part in template.split(" "):
            if part.startswith("{") and "}" in part:
                name, rest = part[1:].split("}", 1)
                out.append(slots[name]() + rest)
            else:
                out.append(part)
        return " ".join(out)

    def observation(self, kind: str, rng: random.Random) -> str:
        target = rng.randint(8, 40)
        words = self._fill(rng.choice(OPENERS[kind]), rng).split()
        while len(words) < target:
            words += self._fill(rng.choice(CLAUSES), rng).split()
        words = words[:target]
        while len(words) > 8 and words[-1].lower() in _DANGLING:
            words.pop()
        return " ".join(words).rstrip(",:") + "."

    def memory(self, index: int, rng: random.Random) -> dict[str, Any]:
        kind = rng.choices(self.kinds, self.kind_weights)[0]
        observations = [self.observation(kind, rng) for _ in range(rng.randint(1, 4))]
        subject = self.nouns(rng).replace(" ", "-").lower()
        payload: dict[str, Any] = {
            "name": f"{kind}-{subject}-{index:06d}",
            "type": kind,
            "observations": observations,
        }
        tags = []
        n_tags = rng.choices([0, 1, 2, 3], [2, 3, 3, 2])[0]
        if n_tags >= 1:
            tags.append(f"project:{self.projects(rng)}")
        if n_tags >= 2:
            tags.append(f"topic:{self.topics(rng)}")
        if n_tags >= 3:
            tags.append(f"topic:{self.topics(rng)}")
        if tags:
            payload["tags"] = list(dict.fromkeys(tags))
        if rng.random() < 0.4:
            title = f"{self.adjectives(rng)} {self.nouns(rng)} in {self.tech(rng)}"
            payload["title"] = title[0].upper() + title[1:]
        return payload

    def query(self, size: int, rng: random.Random) -> str:
        if size == 1:
            return self.rare(rng).key if rng.random() < 0.5 else self.words(rng)
        if size == 3:
            parts = [self.words(rng), self.words(rng)]
            parts.append(self.rare(rng).key if rng.random() < 0.7 else self.words(rng))
            rng.shuffle(parts)
            return " ".join(parts)
        if size == 8:
            return self._fill(rng.choice(QUERY_TEMPLATES_8), rng)
        raise ValueError(size)


# --- measurement helpers -------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    data = sorted(values)
    k = (len(data) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (k - lo)


def summary_ms(samples: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples]
    return {
        "p50": round(percentile(ms, 50), 3),
        "p95": round(percentile(ms, 95), 3),
        "mean": round(statistics.fmean(ms), 3) if ms else float("nan"),
        "n": len(ms),
    }


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


# --- the benchmark -------------------------------------------------------------------------


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
    from graph.ops.fields import DEFAULT_RECALL_LIMIT
    from graph.ops.recall.selector import CANDIDATE_FACTOR, MIN_CANDIDATES
    from graph.ops.registry import OPERATIONS
    from graph.search import text
    from graph.storage.keyword_index import BM25_WEIGHTS

    recall = OPERATIONS["recall"]
    limit = max(DEFAULT_RECALL_LIMIT * CANDIDATE_FACTOR, MIN_CANDIDATES)
    connection.ensure_connection()
    raw = connection.connection.cursor()  # the DB-API cursor, no Django wrapper
    bare_match_sql = BARE_MATCH_SQL.format(weights=BM25_WEIGHTS)

    def select(query: str) -> list[str]:
        terms = text.query_terms(query)
        if not terms:
            return []
        return text.select_terms(
            terms, Entity.objects.term_doc_freqs(terms), Entity.objects.indexed_row_count()
        )

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
            freqs = Entity.objects.term_doc_freqs(terms)
            rows = Entity.objects.indexed_row_count()
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

    from graph.indexing import vectors
    from graph.models import Entity, EntityVector

    live = vectors.live_generation()
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
            report = vectors.embed_pending(max_entities=step)
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

    from graph.indexing import vectors
    from graph.models import Entity, EntityVector
    from graph.search.text import text_hash

    live = vectors.live_generation()
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
    from graph.indexing import vectors
    from graph.models import EntityVector
    from graph.ops.registry import OPERATIONS

    recall = OPERATIONS["recall"]
    embedder = provider.current()
    live = vectors.live_generation()
    assert embedder is not None and live is not None
    # With room for no entry the query cache keeps nothing: every recall and query_vector
    # call below embeds its query, as recall does for a query it has not seen.
    cache_size, vectors.QUERY_CACHE_SIZE = vectors.QUERY_CACHE_SIZE, 0
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
                qv = vectors.query_vector(embedder, q)
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
        vectors.QUERY_CACHE_SIZE = cache_size
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


def machine_facts(commit: str) -> dict[str, Any]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT sqlite_version()")
        sqlite_version = cur.fetchone()[0]
    return {
        "date": date.today().isoformat(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": sqlite_version,
        "driver": type(connection.connection).__module__.split(".")[0],
        "commit": commit,
    }


MEASURED_CODE = ("graph", "memesh_site")


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def git_commit(measured: tuple[str, ...] = MEASURED_CODE) -> str:
    """Short HEAD, with +changes when the measured code differs from it."""
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", *measured)
    return head + ("+changes" if dirty else "")


def _code_fingerprint() -> str:
    """Changes when the measured code (not tests or docs) changes on disk."""
    trees = _git("rev-parse", *(f"HEAD:{path}" for path in MEASURED_CODE))
    return trees + "\n" + _git("diff", "HEAD", "--", *MEASURED_CODE)


def file_sizes(db: Path) -> dict[str, float]:
    mb = {}
    for suffix in ("", "-wal"):
        p = Path(str(db) + suffix)
        mb["db" + suffix.replace("-", "_")] = p.stat().st_size / 1e6 if p.exists() else 0.0
    mb["total"] = mb["db"] + mb["db_wal"]
    return {k: round(v, 1) for k, v in mb.items()}


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    rem = report["remember"]
    lines = [
        f"memesh recall bench — {report['entities']:,} memories, "
        f"{report['queries_per_size']} queries per size, seed {report['seed']}",
        f"machine: {m['cpu_count']} CPUs, Python {m['python']}, SQLite {m['sqlite']} "
        f"({m['driver']}), {m['platform']}",
        f"code: {m['commit']}, {m['date']}",
        "",
    ]
    if rem:
        lines.append(
            f"remember: {rem['per_second']:,.0f}/s over {rem['count']:,} calls "
            f"(p50 {rem['p50']:.2f} ms, p95 {rem['p95']:.2f} ms, {rem['seconds']:.0f} s)"
        )
    else:
        lines.append("remember: (reused database, not measured)")
    lines += [
        "",
        "recall through OPERATIONS['recall'] vs bare FTS5 MATCH on the selected terms (ms)",
        f"{'query':<9}{'recall p50':>11}{'p95':>9}{'MATCH p50':>11}{'p95':>9}"
        f"{'ratio':>8}{'guard p50':>11}{'terms':>7}{'rows':>8}{'hits':>6}",
    ]
    for r in report["recall"]:
        lines.append(
            f"{r['words']}-word   {r['recall']['p50']:>11.2f}{r['recall']['p95']:>9.2f}"
            f"{r['bare_match']['p50']:>11.2f}{r['bare_match']['p95']:>9.2f}"
            f"{r['ratio_p50']:>7.1f}x{r['guard']['p50']:>11.2f}"
            f"{r['mean_terms']:>7.1f}{r['median_postings']:>8,.0f}{r['hit_rate'] * 100:>5.0f}%"
        )
    e = report["empty_query"]
    lines += [
        f"{'empty':<9}{e['p50']:>11.2f}{e['p95']:>9.2f}   (recent listing)",
        "",
        "ratio = recall p50 / bare MATCH p50; guard = fts5vocab df lookups + live row count;",
        "terms = mean terms sent to MATCH; rows = median summed document frequency of those",
        "terms (about the rows bm25 scores); hits = queries returning at least one memory.",
        f"database: {report['db_mb']['total']:.1f} MB "
        f"({report['db_mb']['db']:.1f} MB + {report['db_mb']['db_wal']:.1f} MB -wal)",
    ]
    if report["hybrid"]:
        b = report["backfill"]
        lines += [
            "",
            f"hybrid recall, embedder {report['embedder']} (query embedding included, cache "
            "cleared per query; ms)",
            f"{'query':<9}{'recall p50':>11}{'p95':>9}{'embed p50':>11}{'vector p50':>12}"
            f"{'p95':>8}",
        ]
        for r in report["hybrid"]:
            lines.append(
                f"{r['words']}-word   {r['recall']['p50']:>11.2f}{r['recall']['p95']:>9.2f}"
                f"{r['embed_query']['p50']:>11.2f}{r['vector_search']['p50']:>12.2f}"
                f"{r['vector_search']['p95']:>8.2f}"
            )
        if b and b["embedded"]:
            lines.append(
                f"embedding backfill: {b['embedded']:,} memories in {b['seconds']:.0f} s "
                f"({b['per_second']:.1f}/s)"
            )
        if b and b["synthesised"]:
            lines.append(
                f"vectors of {b['synthesised']:,} memories synthesised from the embedded ones "
                "(latency only; quality is measured on real vectors by quality_eval.py)"
            )
    if report["code_changed_during_run"]:
        lines.append("WARNING: graph/ or memesh_site/ changed during the run (mixed versions?)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    commit = git_commit()  # before Django imports the code being measured
    fingerprint = _code_fingerprint()
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
    from graph.ops.operation import CallContext

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
            "machine": machine_facts(commit),
            "code_changed_during_run": _code_fingerprint() != fingerprint,
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
