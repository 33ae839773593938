"""The synthetic corpus the benchmarks seed and query: deterministic for a seed and a size.

Software-engineering decisions, lessons, bug fixes and notes generated from seeded
vocabularies (a few hundred common technical words and phrases, Zipf-weighted, plus a
Zipf-like tail of rare identifiers: service names, error codes, file paths, ticket ids,
function names), and 1-, 3- and 8-word queries drawn from the same distributions. Used by
bench/recall_bench.py, bench/http_bench.py and bench/mcp_bench.py.
"""

from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass
from typing import Any

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
