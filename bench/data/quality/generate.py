"""Build memories.jsonl: the hand-written memories, then deterministic generated filler.

    .venv/bin/python -m bench.data.quality.generate                 # writes memories.jsonl
    .venv/bin/python -m bench.data.quality.generate --count 1560 --seed 20240611

Standard library only; the output depends only on --count, --seed and the hand-written file.

The generated part is background for the retrieval-quality set: plausible software-engineering
notes over the same fictional projects, components and vocabulary as the hand-written ones, so
the hand-written targets compete with realistic neighbours. Notes are composed from hand-written
fragment lists through many note shapes (bug fixes, incidents, decisions, conventions, facts,
measurements, lessons, investigations, runbooks, upgrades, meeting notes, ownership, customer
notes, architecture). Every component has a kind (ui, svc, job), and each fragment says which
kinds it fits, so a screen never "processes work late" and a batch job never "drops frames".
Bug symptoms, root cause and fix are kept together as one hand-written unit.

The fragments deliberately avoid the specific facts of the query targets (their identifiers,
settings and root causes); check.py verifies that no generated memory holds every term of a
keyword query.
"""

# ruff: noqa: E501  (fragment tables read better with one fragment per line)
from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# What a maker returns: (type, topic for the name, observations, extra tags).
Made = tuple[str, str, list[str], list[str]]
DEFAULT_SEED = 20240611
DEFAULT_COUNT = 1560

UI, SVC, JOB = "ui", "svc", "job"
BACKEND = (SVC, JOB)
ANY = (UI, SVC, JOB)

# --- projects and their components --------------------------------------------------------------

PROJECTS: dict[str, dict] = {
    "atlas": {
        "key": "ATL",
        "tags": ["backend", "django", "api", "frontend"],
        "components": {
            "the project list endpoint": SVC,
            "the comment service": SVC,
            "the audit trail writer": SVC,
            "the dashboard API": SVC,
            "the file upload service": SVC,
            "the permission checker": SVC,
            "the bulk import job": JOB,
            "the activity digest": JOB,
            "the workspace export": JOB,
            "the workspace settings page": UI,
            "the admin console": UI,
            "the template gallery": UI,
            "the task board": UI,
            "the label picker": UI,
        },
    },
    "beacon": {
        "key": "BCN",
        "tags": ["mobile", "ios", "android", "react-native"],
        "components": {
            "the booking screen": UI,
            "the image picker": UI,
            "the chat screen": UI,
            "the onboarding carousel": UI,
            "the map view": UI,
            "the profile editor": UI,
            "the calendar widget": UI,
            "the receipt scanner": UI,
            "the mobile API gateway": SVC,
            "the booking backend": SVC,
            "the device registry": SVC,
            "the offline upload queue": JOB,
        },
    },
    "cobalt": {
        "key": "COB",
        "tags": ["billing", "payments", "ledger"],
        "components": {
            "the ledger service": SVC,
            "the subscription API": SVC,
            "the checkout service": SVC,
            "the tax calculator": SVC,
            "the coupon engine": SVC,
            "the dispute handler": SVC,
            "the invoice renderer": JOB,
            "the payout scheduler": JOB,
            "the refund worker": JOB,
            "the reconciliation job": JOB,
        },
    },
    "drift": {
        "key": "DRF",
        "tags": ["data", "etl", "warehouse", "analytics"],
        "components": {
            "the event ingester": SVC,
            "the Airflow scheduler": SVC,
            "the metrics API": SVC,
            "the nightly ETL": JOB,
            "the warehouse loader": JOB,
            "the sessionization job": JOB,
            "the partner export": JOB,
            "the attribution model": JOB,
            "the funnel report": JOB,
            "the deduplication step": JOB,
        },
    },
    "ember": {
        "key": "EMB",
        "tags": ["platform", "ci", "tooling", "infra"],
        "components": {
            "the build cache": SVC,
            "the artifact registry": SVC,
            "the deploy bot": SVC,
            "the developer portal": SVC,
            "the preview controller": SVC,
            "the runner fleet": SVC,
            "the secrets sync job": JOB,
            "the dependency bot": JOB,
            "the cost reporter": JOB,
        },
    },
    "fjord": {
        "key": "FJD",
        "tags": ["search", "ranking", "indexing"],
        "components": {
            "the query parser": SVC,
            "the suggestion service": SVC,
            "the ranking service": SVC,
            "the facet API": SVC,
            "the spell checker": SVC,
            "the query rewriter": SVC,
            "the click logger": SVC,
            "the indexer": JOB,
            "the index sync consumer": JOB,
        },
    },
    "gull": {
        "key": "GUL",
        "tags": ["notifications", "email", "push", "messaging"],
        "components": {
            "the email sender": SVC,
            "the push fan-out": SVC,
            "the SMS adapter": SVC,
            "the template renderer": SVC,
            "the preference center": SVC,
            "the delivery tracker": SVC,
            "the quiet-hours filter": SVC,
            "the digest builder": JOB,
            "the bounce processor": JOB,
        },
    },
    "helix": {
        "key": "HLX",
        "tags": ["ml", "training", "inference", "features"],
        "components": {
            "the model server": SVC,
            "the embedding service": SVC,
            "the experiment tracker": SVC,
            "the training scheduler": SVC,
            "the feature backfill job": JOB,
            "the evaluation harness": JOB,
            "the dataset builder": JOB,
            "the labeling tool": UI,
        },
    },
}

PEOPLE = [
    "Priya",
    "Marco",
    "Lena",
    "Tomás",
    "Aiko",
    "Jonas",
    "Fatima",
    "Wei",
    "Oluwaseun",
    "Sven",
    "Noor",
    "Dmitri",
    "Camille",
    "Rahul",
    "Ingrid",
    "Kenji",
    "Ana",
    "Malik",
    "Sofia",
    "Yusuf",
    "Hannah",
    "Diego",
    "Mei",
    "Arjun",
    "Elif",
    "Bruno",
    "Zara",
    "Pieter",
    "Lucía",
    "Ravi",
]
TEAMS = [
    "platform team",
    "payments team",
    "growth team",
    "mobile team",
    "data team",
    "search team",
    "SRE team",
    "security team",
    "ML team",
    "core app team",
    "integrations team",
    "developer experience team",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
REGIONS = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1"]
ENVS = ["staging", "production", "the sandbox environment", "the load-test environment"]

# --- bug fixes: (kinds, symptoms, root cause, fix) ----------------------------------------------

BUGS = [
    (
        BACKEND,
        ["used more memory with every page of results", "was OOM-killed on the largest workspaces"],
        "an unbounded in-memory list that grew with every page",
        "stream the rows with an iterator and a chunk size of 2,000",
    ),
    (
        (SVC,),
        [
            "pinned a CPU core at 100% on some inputs",
            "timed out on a handful of unusually long inputs",
        ],
        "a regular expression with catastrophic backtracking",
        "replace the regex with a small parser and cap the input size",
    ),
    (
        BACKEND,
        ["got slower every week as the table grew", "timed out only for the largest customers"],
        "a missing index on the foreign key used by the main join",
        "add the index and a plan check for that query in the test suite",
    ),
    (
        BACKEND,
        [
            "made every upstream outage much worse",
            "sent bursts of requests that tripped a vendor rate limit",
        ],
        "a retry loop without any backoff",
        "add exponential backoff with full jitter and a retry budget",
    ),
    (
        BACKEND,
        [
            "started timing out after a routine dependency bump",
            "failed calls that used to succeed slowly",
        ],
        "a library upgrade that silently changed its default timeout",
        "set every timeout explicitly in our client wrapper",
    ),
    (
        (JOB,),
        [
            "skipped one record at every batch boundary",
            "processed the last item of each batch twice",
        ],
        "an off-by-one error at the batch boundary",
        "switch to half-open ranges and add a property-based test",
    ),
    (
        (SVC,),
        [
            "stalled all requests whenever a dependency was slow",
            "showed latency spikes that mirrored a dependency's",
        ],
        "a lock held across a network call",
        "move the network call outside the critical section",
    ),
    (
        (SVC,),
        [
            "was restarted by Kubernetes whenever the database was slow",
            "flapped between ready and not ready under load",
        ],
        "a probe pointed at an endpoint that queried the database",
        "point the probe at a lightweight endpoint and raise failureThreshold",
    ),
    (
        BACKEND,
        [
            "lost updates when two edits arrived together",
            "sometimes overwrote a newer value with an older one",
        ],
        "two writers updating the same row without coordination",
        "add an optimistic version column and retry on conflict",
    ),
    (
        (SVC,),
        [
            "queued unrelated requests behind one slow vendor",
            "timed out across the board when one partner API was slow",
        ],
        "one small thread pool shared by every outbound call",
        "give each dependency its own bounded pool",
    ),
    (
        (SVC,),
        [
            "was slow on list views even for small workspaces",
            "read far more data from the database than it returned",
        ],
        "the ORM loading a large JSON column that nobody read",
        "defer the column and load it only on the detail view",
    ),
    (
        BACKEND,
        [
            "spent a third of its CPU time formatting log lines",
            "produced several gigabytes of logs per hour",
        ],
        "a log call serializing the whole payload on every request",
        "log identifiers only and sample payloads at debug level",
    ),
    (
        BACKEND,
        [
            "failed every outbound TLS call after a base image update",
            "could not reach one partner over TLS",
        ],
        "an expired intermediate certificate in the bundled trust store",
        "refresh the trust store from the base image and alert on expiry",
    ),
    (
        (JOB,),
        [
            "produced totals that were off by a few cents",
            "split amounts into parts that never added up",
        ],
        "integer division truncating fractional amounts",
        "do the arithmetic with Decimal and round once at the end",
    ),
    (
        (SVC,),
        [
            "returned enormous responses to one integration",
            "ran out of memory when a client asked for everything",
        ],
        "a default page size of ten thousand items",
        "cap the page size at 200 and document the limit",
    ),
    (
        BACKEND,
        [
            "ignored configuration changes until it was restarted",
            "kept using an old setting for hours after it changed",
        ],
        "a configuration value read once at import time",
        "read settings through the config service with a short refresh interval",
    ),
    (
        ANY,
        ["failed to build on a clean machine", "broke in CI while working on every laptop"],
        "a dependency pinned to a release that was later yanked",
        "pin the patched release and fail the build on yanked versions",
    ),
    (
        BACKEND,
        [
            "grew by a few hundred MB a day until restarted",
            "was killed for memory every couple of days",
        ],
        "a native extension leaking memory on every call",
        "upgrade the extension and recycle processes periodically",
    ),
    (
        BACKEND,
        [
            "overwhelmed its dependency during large fan-outs",
            "opened thousands of sockets at once on big accounts",
        ],
        "unbounded concurrency when fanning out requests",
        "limit concurrency with a semaphore of 16",
    ),
    (
        BACKEND,
        [
            "rejected messages from the newest producer version",
            "dropped a field that the producer had just made optional",
        ],
        "a producer and consumer disagreeing on an optional field",
        "add a schema compatibility check to the release pipeline",
    ),
    (
        (JOB,),
        ["failed with a full disk after a few days", "filled the node's root volume on large runs"],
        "temporary files written to the root volume and never removed",
        "write to the scratch volume and delete files in a finally block",
    ),
    (
        BACKEND,
        [
            "kept calling an old IP after a partner moved hosts",
            "failed for an hour after a partner changed its records",
        ],
        "DNS answers cached forever inside a long-lived client",
        "recreate the client periodically so record changes are picked up",
    ),
    (
        (SVC,),
        [
            "silently skipped part of its work",
            "logged coroutine-never-awaited warnings in production",
        ],
        "a coroutine that was created but never awaited",
        "turn on asyncio debug mode in tests and fix the call site",
    ),
    (
        (SVC, UI),
        [
            "showed the same item on two consecutive pages",
            "returned results in a different order on every call",
        ],
        "a sort on a non-unique column without a tie-breaker",
        "add the primary key as a secondary sort key",
    ),
    (
        ANY,
        ["treated version 1.10 as older than 1.9", "offered a downgrade as if it were an update"],
        "string comparison of version numbers",
        "parse versions properly before comparing them",
    ),
    (
        (JOB,),
        [
            "wrote an empty second file on every run",
            "skipped validation of every row without noticing",
        ],
        "a generator consumed twice, so the second pass saw nothing",
        "materialize the list once and pass it to both steps",
    ),
    (
        BACKEND,
        [
            "leaked values from one call into the next",
            "accumulated items across unrelated requests",
        ],
        "a default mutable argument shared between calls",
        "default to None and build a fresh list inside the function",
    ),
    (
        (JOB,),
        [
            "reported totals that drifted from the ledger by cents",
            "disagreed with the finance export on large accounts",
        ],
        "floating point sums across thousands of rows",
        "sum integer minor units and convert only for display",
    ),
    (
        BACKEND,
        [
            "failed authentication right after a secret rotation",
            "rejected its own API key in one environment",
        ],
        "a secret value with a trailing newline",
        "strip values when loading configuration and validate them at startup",
    ),
    (
        (JOB,),
        ["lost work when a pod was killed mid-run", "skipped items after a crash and restart"],
        "acknowledging work before it was persisted",
        "acknowledge only after the write has been committed",
    ),
    (
        BACKEND,
        [
            "stopped doing its periodic work without any error",
            "went quiet until the next deploy restarted it",
        ],
        "a background thread swallowing exceptions",
        "report exceptions from the thread and restart it with a supervisor",
    ),
    (
        (SVC,),
        ["accepted files far over the size limit", "let a few huge files into the storage bucket"],
        "a second upload path that skipped the size check",
        "enforce the size limit in one middleware for every upload path",
    ),
    (
        BACKEND,
        [
            "opened a new connection for every single request",
            "hit the vendor's connection limit at peak",
        ],
        "an SDK client created per request instead of per process",
        "create the client once per process and reuse its connection pool",
    ),
    (
        (SVC, UI),
        [
            "showed a beta feature to the wrong workspaces",
            "hid a released feature from some customers",
        ],
        "a feature flag evaluated with the wrong context",
        "pass the workspace context explicitly to every flag check",
    ),
    (
        (SVC,),
        [
            "returned amounts like 10.000000001 in its JSON",
            "lost precision on large amounts in responses",
        ],
        "a JSON encoder that turned Decimal values into floats",
        "use a custom encoder that writes Decimal values as strings",
    ),
    (
        (UI,),
        ["froze for a second when it opened", "dropped frames while scrolling through photos"],
        "images decoded at full resolution on the main thread",
        "decode thumbnails off the main thread at display size",
    ),
    (
        (UI,),
        [
            "kept the old account's data on screen after switching accounts",
            "showed the previous user's name for a moment",
        ],
        "a view cache keyed by screen and not by account",
        "include the account id in the cache key and clear it on logout",
    ),
    (
        (UI,),
        [
            "submitted its form twice on slow networks",
            "created duplicate entries when people tapped twice",
        ],
        "a submit button that stayed enabled during the request",
        "disable the button while the request is in flight",
    ),
    (
        (UI,),
        [
            "lost unsaved input when the app went to the background",
            "reset its form after an incoming phone call",
        ],
        "state kept only in the component and never persisted",
        "persist drafts locally and restore them on resume",
    ),
    (
        (UI,),
        [
            "showed a spinner forever when a request failed",
            "never recovered from a network error without a restart",
        ],
        "an error path that never cleared the loading state",
        "clear the loading state in a finally block and show a retry button",
    ),
    (
        (UI,),
        [
            "re-rendered the whole list on every keystroke",
            "lagged badly while typing in its search box",
        ],
        "an inline object prop that changed identity on every render",
        "memoize the props and debounce the search input",
    ),
    (
        (UI,),
        ["was unreadable in dark mode", "showed black text on a dark background for some users"],
        "a hard-coded color instead of a theme variable",
        "use the semantic color tokens everywhere",
    ),
    (
        (UI,),
        [
            "crashed when the user rotated the device mid-upload",
            "lost its scroll position after rotation",
        ],
        "a view recreated on rotation without saved state",
        "save the state before rotation and restore it afterwards",
    ),
]

# --- incidents: (kinds, what happened, trigger) -------------------------------------------------

INCIDENTS = [
    (
        BACKEND,
        "was unavailable",
        "a configuration change rolled out to every region at once",
        "Follow-up: staged rollouts for config changes, region by region.",
    ),
    (
        BACKEND,
        "served errors to a share of users",
        "a bad release that passed canary because traffic was too low to notice",
        "Follow-up: synthetic traffic during canaries so there is always a signal.",
    ),
    (
        (JOB,),
        "processed work several hours late",
        "a bulk job started by a customer with ten times the usual data",
        "Follow-up: per-customer limits on bulk jobs.",
    ),
    (
        (SVC,),
        "stopped accepting writes",
        "a schema change that was not backward compatible",
        "Follow-up: the migration linter now runs on every PR, not only on release branches.",
    ),
    (
        BACKEND,
        "failed every call to a partner",
        "an expired credential for a third-party API",
        "Follow-up: the expiry date is now tracked in the credentials inventory.",
    ),
    (
        BACKEND,
        "ran at degraded speed",
        "a noisy neighbour on shared database hardware",
        "Follow-up: the database moved to dedicated instances.",
    ),
    (
        BACKEND,
        "exhausted its quota with a third-party provider",
        "a runaway retry loop in a client integration",
        "Follow-up: a circuit breaker around the dependency.",
    ),
    (
        (SVC,),
        "was unreachable for some customers",
        "a certificate rotation that missed one load balancer",
        "Follow-up: certificate rotation is automated and checked from outside.",
    ),
    (
        BACKEND,
        "filled its disk",
        "a debug log level left on after an investigation",
        "Follow-up: debug logging now switches itself off after an hour.",
    ),
    (
        (SVC,),
        "was unavailable in one region",
        "an outage of a managed service at our cloud provider",
        "Follow-up: a runbook entry and a game day to rehearse the regional failover.",
    ),
    (
        (UI,),
        "was broken for a share of users",
        "a release whose feature flag defaulted to on for everyone",
        "Follow-up: new flags default to off and the release checklist says so.",
    ),
    (
        (UI,),
        "failed to load for some customers",
        "a CDN configuration change that dropped a required header",
        "Follow-up: CDN changes go through the same review as code.",
    ),
    (
        (UI,),
        "showed errors to every user",
        "an API change on the backend that was not backward compatible",
        "Follow-up: contract tests between the screen and its API.",
    ),
]


# --- decisions: (kinds, choice, alternative, reason) --------------------------------------------

DECISIONS = [
    (
        (JOB,),
        "Parquet files on S3",
        "plain CSV dumps",
        "columnar scans made the weekly reports far cheaper",
    ),
    (
        BACKEND,
        "a modular monolith",
        "a new microservice",
        "the team is four people and the boundary is not stable yet",
    ),
    (
        BACKEND,
        "Temporal workflows",
        "chained background tasks",
        "the process spans days and support needs to see its state",
    ),
    (
        (SVC, UI),
        "server-sent events",
        "WebSockets",
        "updates only flow one way and SSE passes the corporate proxies",
    ),
    (
        (SVC,),
        "Postgres full-text search",
        "a separate search cluster",
        "the data set is well under a million rows",
    ),
    (
        BACKEND,
        "a managed message queue",
        "self-hosted brokers",
        "nobody wants to operate brokers at night",
    ),
    (
        (SVC,),
        "pydantic models at the service boundary",
        "hand-written validation",
        "errors are consistent and the models double as documentation",
    ),
    (
        (JOB,),
        "a nightly batch",
        "real-time streaming",
        "nobody looks at these numbers more than once a day",
    ),
    (
        (SVC,),
        "a denormalized read model",
        "joins at query time",
        "the main query touched seven tables",
    ),
    (BACKEND, "httpx", "requests", "we need async support and HTTP/2 in one client"),
    ((SVC,), "Go", "Python", "the service is CPU-bound and runs hundreds of instances"),
    (
        (JOB,),
        "Argo Workflows",
        "Airflow",
        "the jobs are container-native and already run on Kubernetes",
    ),
    (
        (JOB,),
        "DuckDB for ad-hoc analysis",
        "queries against the warehouse",
        "analysts work on exported Parquet files locally",
    ),
    (
        (SVC,),
        "row-level tenant ids",
        "a schema per tenant",
        "thousands of schemas made migrations take hours",
    ),
    (BACKEND, "Terraform", "CloudFormation", "we manage resources outside AWS as well"),
    (
        (SVC,),
        "buf for protobuf linting",
        "ad-hoc review of proto files",
        "breaking changes were slipping through review",
    ),
    (
        BACKEND,
        "uv for Python dependency management",
        "pip-tools",
        "locking and installs are an order of magnitude faster",
    ),
    (
        (UI,),
        "a shared component library",
        "copying components between apps",
        "the same bugs were being fixed three times",
    ),
    (
        (SVC,),
        "structured config in YAML with a JSON schema",
        "environment variables only",
        "nested settings were unreadable as variables",
    ),
    (
        BACKEND,
        "contract tests",
        "a shared staging environment",
        "staging was broken by someone else most mornings",
    ),
    (
        BACKEND,
        "a queue per customer tier",
        "one shared queue",
        "one large customer could starve everyone else",
    ),
    (
        BACKEND,
        "polling every 30 seconds",
        "webhooks from the vendor",
        "the vendor's webhooks were unreliable and unsigned",
    ),
    (
        (SVC, UI),
        "pre-signed uploads straight to object storage",
        "uploads through our API servers",
        "large files tied up web workers for minutes",
    ),
    (
        (JOB,),
        "a read replica for exports",
        "running exports on the primary",
        "exports competed with interactive traffic",
    ),
    (
        BACKEND,
        "Redis streams",
        "a list-based queue",
        "consumer groups let us replay from an offset",
    ),
    (
        (SVC, UI),
        "OpenFeature with our own provider",
        "calling the flag vendor SDK directly",
        "switching vendors would otherwise touch every service",
    ),
    (
        BACKEND,
        "a sidecar for log shipping",
        "logging libraries that ship directly",
        "a slow log backend must never block requests",
    ),
    ((JOB, SVC), "batch scoring", "scoring on every request", "the scores only change once a day"),
    (
        (SVC,),
        "ONNX Runtime on CPU",
        "a GPU deployment",
        "the model is small and GPUs sat mostly idle",
    ),
    ((UI,), "Playwright", "Cypress", "it runs several browsers in parallel without extra licences"),
    (
        (UI,),
        "SQLite on the device",
        "a plain key-value store",
        "the screen needs filtering and sorting while offline",
    ),
    (
        (UI,),
        "optimistic updates",
        "waiting for the server",
        "the round trip takes almost half a second on mobile networks",
    ),
    (
        (UI,),
        "native navigation",
        "a JavaScript-only navigation library",
        "screen transitions felt sluggish on older phones",
    ),
    (
        (UI,),
        "a design-system table",
        "a third-party grid component",
        "the grid's licence cost more than the time to build ours",
    ),
]
REVISIT = [
    "Revisit when traffic doubles.",
    "Revisit at the next architecture review.",
    "Revisit if the team grows beyond eight people.",
    "Revisit after the Q{q} planning.",
    "No plan to revisit.",
    "Revisit once the vendor contract renews in {month}.",
]

# --- conventions (project-wide): (subject, rule, rationale) -------------------------------------

CONVENTIONS = [
    (
        "Every new endpoint",
        "needs an owner listed in the service catalog",
        "otherwise alerts have nobody to page",
    ),
    (
        "Background jobs",
        "must be safe to run twice",
        "the scheduler only promises at-least-once execution",
    ),
    (
        "Public functions in shared libraries",
        "need type hints and a docstring",
        "they are read far more often than written",
    ),
    (
        "Configuration flags",
        "are named with the service prefix",
        "collisions between services caused a mix-up in {month}",
    ),
    (
        "Log messages",
        "are static strings with data in fields",
        "it keeps messages groupable in the log search",
    ),
    (
        "Every dashboard",
        "links to the runbook of the service",
        "on-call engineers should not have to search",
    ),
    (
        "Database tables",
        "are named in the plural and in snake_case",
        "the ORM default was inconsistent across apps",
    ),
    ("Commit messages", "reference the ticket id", "release notes are generated from them"),
    (
        "New services",
        "start from the service template repository",
        "it wires logging, metrics and health checks",
    ),
    (
        "Third-party libraries",
        "need a short justification in the PR",
        "every dependency is a long-term maintenance cost",
    ),
    (
        "Scheduled jobs",
        "log a start and an end line with a run id",
        "missed runs are otherwise invisible",
    ),
    (
        "Breaking changes to internal APIs",
        "need a deprecation period of two releases",
        "consumers deploy on their own schedule",
    ),
    (
        "Any script that touches production data",
        "runs in dry-run mode by default",
        "a typo once updated every row",
    ),
    (
        "Error messages shown to users",
        "never include stack traces or internal ids",
        "they leak implementation details",
    ),
    (
        "Feature work",
        "lands with metrics for its success criteria",
        "otherwise nobody can tell whether it worked",
    ),
    (
        "Docker images",
        "run as a non-root user",
        "the security review requires it for every workload",
    ),
    (
        "Long-running scripts",
        "print progress at least every minute",
        "people kill scripts they think are stuck",
    ),
    (
        "Data fixes",
        "go through a reviewed migration or management command",
        "ad-hoc SQL in a shell leaves no trace",
    ),
    (
        "Secrets",
        "are referenced by path, never copied into config files",
        "copies are impossible to rotate",
    ),
    (
        "Every internal queue",
        "has a maximum size and an alert on depth",
        "unbounded queues hide outages",
    ),
    (
        "Cross-team API changes",
        "are announced in the #api-changes channel",
        "consumers were surprised too often",
    ),
    ("Release notes", "are written for customers, not engineers", "support forwards them verbatim"),
    (
        "Runbooks",
        "start with how to tell whether the alert is real",
        "half of the pages used to be false alarms",
    ),
    ("TODO comments", "carry a name and a ticket", "anonymous TODOs never get done"),
    (
        "Screens that show money",
        "format amounts with the shared formatter",
        "three screens once rounded the same invoice differently",
    ),
    (
        "Accessibility labels",
        "are required on every icon-only button",
        "screen reader users reported unlabeled buttons twice",
    ),
]

# --- facts, settings, measurements --------------------------------------------------------------

PLATFORMS = [
    "Kubernetes",
    "ECS Fargate",
    "a pair of EC2 instances",
    "Cloud Run",
    "Lambda",
    "the shared worker cluster",
]
SETTINGS = {
    SVC: [
        ("the worker concurrency", "8", "more workers only increased lock contention"),
        ("the request body limit", "10 MB", "larger payloads go through pre-signed uploads"),
        (
            "the outbound connection timeout",
            "3 seconds",
            "the dependency answers in 200 ms when it is healthy",
        ),
        ("the max retries", "4", "beyond that the error is almost never transient"),
        ("the log level in production", "INFO", "DEBUG doubled our log bill"),
        ("the replica count", "3", "two replicas could not survive a zone outage"),
        ("the idle connection limit", "20", "the database counts idle connections against its cap"),
        ("the response cache TTL", "2 minutes", "product accepted slightly stale counts"),
    ],
    JOB: [
        ("the batch size", "500", "larger batches exceeded the downstream payload limit"),
        ("the export chunk size", "5,000 rows", "it keeps each chunk under a minute"),
        ("the schedule interval", "5 minutes", "the source data updates at that rate"),
        ("the parallelism", "4 workers", "more workers saturated the source database"),
        ("the max run time", "45 minutes", "anything longer means the job is stuck"),
        ("the throttle", "200 rows per second", "faster writes slowed interactive traffic"),
    ],
    UI: [
        ("the search debounce", "250 ms", "shorter delays fired a request per keystroke"),
        ("the image cache size", "100 MB", "larger caches got the app killed on older phones"),
        ("the polling interval", "30 seconds", "faster polling drained batteries"),
        ("the thumbnail width", "320 pixels", "it covers the largest list cell"),
        ("the autosave interval", "5 seconds", "people lost work with the old 60-second interval"),
        ("the list page size", "50", "mobile clients render that many rows comfortably"),
    ],
}
METRICS = {
    SVC: [
        ("p50 latency", "ms"),
        ("p95 latency", "ms"),
        ("p99 latency", "ms"),
        ("CPU time per request", "microseconds"),
        ("memory per pod", "MB"),
        ("errors per hour", ""),
    ],
    JOB: [
        ("run time", "minutes"),
        ("peak memory", "MB"),
        ("rows per second", ""),
        ("queue wait time", "seconds"),
    ],
    UI: [
        ("time to interactive", "ms"),
        ("dropped frames per minute", ""),
        ("JS heap size", "MB"),
        ("screen load time", "ms"),
    ],
}
CHANGES = {
    SVC: [
        "the move to the new instance type",
        "enabling HTTP keep-alive",
        "removing the legacy middleware",
        "the switch to the async driver",
        "the query rewrite",
        "turning on response compression",
        "the upgrade to Python 3.12",
        "adding the covering index",
        "pre-computing the aggregates",
    ],
    JOB: [
        "batching the writes",
        "moving the job off the primary",
        "splitting the job in two",
        "switching the output to Parquet",
        "the query rewrite",
        "reading from the replica",
    ],
    UI: [
        "lazy-loading the images",
        "removing a heavy date library",
        "moving parsing off the main thread",
        "memoizing the list rows",
        "splitting the screen into smaller components",
    ],
}

# --- lessons, notes, runbooks, upgrades, meetings, customers ------------------------------------

LESSONS = [
    (
        "Rolling out the change to every region at once",
        "stage risky changes region by region even when they look trivial",
    ),
    (
        "Estimating the migration from the staging data volume",
        "staging has a tenth of production data, so measure on a snapshot",
    ),
    (
        "Trusting a green dashboard during the launch",
        "check the dashboard actually receives data before relying on it",
    ),
    (
        "Letting one engineer own the only copy of the runbook",
        "runbooks live in the repo, reviewed like code",
    ),
    (
        "Shipping the vendor SDK upgrade without reading the changelog",
        "read changelogs for minor versions too, because defaults change",
    ),
    (
        "Adding a retry to hide a flaky dependency",
        "retries hide problems, so measure the failure rate first",
    ),
    (
        "Skipping the load test because the change was small",
        "small changes on hot paths still need a quick load test",
    ),
    (
        "Deleting the old code path in the same release as the new one",
        "keep the old path behind a flag for one release",
    ),
    (
        "Running the backfill during business hours",
        "backfills run at night with a throttle and a kill switch",
    ),
    (
        "Relying on a single person to approve vendor access",
        "access requests need a backup approver",
    ),
    (
        "Assuming the client library was thread-safe",
        "read the docs on thread safety before sharing clients",
    ),
    ("Merging on a Friday evening before a holiday", "nothing risky merges before a long weekend"),
    ("Copying a config file between environments", "environment config is generated, never copied"),
    ("Using production data in a demo", "demos use the seeded sandbox account only"),
    (
        "Letting the experiment run without a stopping rule",
        "decide the duration and the metric before starting",
    ),
]
INVESTIGATIONS = {
    BACKEND: [
        "why {component} is slower on Mondays",
        "whether {component} can move to the shared worker cluster",
        "the memory growth of {component} over a week",
        "splitting {component} out of the main deployment",
        "the cost of {component} after the last traffic increase",
        "a cheaper storage class for old data written by {component}",
        "why {component} logs so many warnings after deploys",
        "how {component} behaves when its upstream is down for an hour",
    ],
    (UI,): [
        "why {component} is slower on older phones",
        "the crash rate of {component} on Android 10",
        "rebuilding {component} with the new design system",
        "whether {component} still needs its own local cache",
        "why {component} gets so many one-star mentions in reviews",
    ],
}
RUNBOOK_TASKS = [
    (
        (SVC,),
        "restart {component} safely",
        "scale to zero in one zone, wait for drain, scale back, repeat per zone",
    ),
    (
        (JOB,),
        "replay failed work for {component}",
        "list failed items in the admin, fix the cause, then trigger a replay for the time range",
    ),
    (
        BACKEND,
        "rotate the credentials of {component}",
        "create the new secret, deploy, verify traffic, revoke the old secret",
    ),
    (
        (JOB,),
        "pause {component} during maintenance",
        "flip the maintenance flag, wait for in-flight work to finish, confirm the queue is idle",
    ),
    (
        (SVC,),
        "roll back {component}",
        "redeploy the previous image tag from the deploy bot and announce it in #deploys",
    ),
    (
        BACKEND,
        "resize the storage of {component}",
        "take a snapshot, apply the new size, watch the volume metrics for an hour",
    ),
    (
        (JOB,),
        "backfill a day of data for {component}",
        "run the backfill command with the date, throttle it, then compare counts",
    ),
    (
        (UI,),
        "hide {component} behind its kill switch",
        "flip the remote kill switch, confirm the fallback screen in a release build, post in #mobile",
    ),
]
LIBRARIES = [
    (BACKEND, "Django", "4.2", "5.0", "a few deprecated URL helpers had to go"),
    (BACKEND, "Celery", "5.2", "5.3", "the task protocol stayed compatible"),
    (BACKEND, "psycopg", "2.9", "3.1", "server-side cursors needed a different API"),
    (BACKEND, "SQLAlchemy", "1.4", "2.0", "the query style moved to select() everywhere"),
    (BACKEND, "pydantic", "1.10", "2.6", "validators needed rewriting for the new decorators"),
    (BACKEND, "gunicorn", "20.1", "21.2", "nothing changed for our configuration"),
    (BACKEND, "boto3", "1.28", "1.34", "the retry mode default changed to standard"),
    (BACKEND, "pytest", "7.4", "8.0", "collection order changed for a few parametrized tests"),
    ((JOB,), "Airflow", "2.6", "2.8", "deferrable operators became the default for sensors"),
    (BACKEND, "Python", "3.10", "3.12", "two C extensions needed new wheels"),
    ((UI,), "React", "17", "18", "automatic batching changed the order of two effects"),
    ((UI,), "TypeScript", "5.2", "5.4", "two type narrowing bugs surfaced"),
    ((UI,), "React Native", "0.72", "0.74", "two native modules needed patches"),
    ((UI,), "Kotlin", "1.8", "1.9", "build times improved noticeably"),
    ((UI,), "Swift", "5.8", "5.9", "a macro replaced our code generation step"),
]
MEETING_AGREEMENTS = [
    (ANY, "ownership of {component} moves to the {team} next quarter"),
    (ANY, "{component} gets a latency budget of {ms} ms at p95"),
    (BACKEND, "the old export format of {component} is switched off in {month}"),
    (BACKEND, "load testing becomes part of the release checklist for {component}"),
    (ANY, "{component} stays on the current version until the migration is finished"),
    (BACKEND, "the team writes an RFC before changing the data model of {component}"),
    (BACKEND, "alerts for {component} move from email to the paging rotation"),
    ((UI,), "{component} gets a usability test with five customers before the redesign"),
    ((UI,), "the empty states of {component} are rewritten by the content designer"),
]
CUSTOMER_NOTES = [
    "needs data residency in the EU, so their workspace lives in {region}",
    "has a custom contract with a 99.95% uptime commitment",
    "integrates through the API at about {rps} requests per second during business hours",
    "asked for audit exports every month in a fixed format",
    "uses SSO only and has disabled password logins",
    "is on a legacy plan that still includes unlimited seats",
    "requires a named technical contact for every incident",
    "runs a nightly sync that creates most of their records",
]
CUSTOMERS = [
    "Northwind",
    "Globex",
    "Initech",
    "Umbrella Logistics",
    "Hooli",
    "Vandelay Imports",
    "Stark Freight",
    "Wayne Analytics",
    "Acme Retail",
    "Soylent Foods",
    "Tyrell Labs",
    "Cyberdyne Health",
    "Wonka Foods",
    "Pied Piper",
    "Massive Dynamic",
]
PLANS = ["the Starter plan", "the Team plan", "the Business plan", "an Enterprise contract"]
OPEN_QUESTIONS = [
    "Do we still need {component} once the new flow ships?",
    "Should {component} get its own on-call rotation, or stay with the team that builds it?",
    "Is the retry policy of {component} still right after the last vendor change?",
    "Who should be paged when {component} fails outside business hours?",
    "Can {component} tolerate running an hour behind during peak?",
]
TRANSPORTS = [
    "an internal HTTP API",
    "a Kafka topic",
    "a shared Postgres table",
    "gRPC",
    "a Redis stream",
    "files dropped in an S3 prefix",
    "a signed webhook",
]

# Extra observations: (makers they fit, text).
EXTRA_OBS = [
    (
        ("bug_fix", "incident", "decision", "fact", "measurement", "upgrade", "runbook"),
        "Tracked in {ticket}; the ticket has the graphs and the discussion that led here.",
    ),
    (
        ("bug_fix", "decision", "fact", "upgrade", "architecture"),
        "Owner: {person} from the {team}, who is also the person to ask about edge cases.",
    ),
    (
        ("bug_fix", "fact", "upgrade"),
        "Verified on staging by {person} on a {weekday} before it went to production.",
    ),
    (
        ("decision", "architecture", "note"),
        "Discussed in the {weekday} sync with the {team}; nobody objected to the approach.",
    ),
    (
        ("bug_fix", "measurement", "incident"),
        "The {component_short} board in Grafana shows the before and after for this change.",
    ),
    (
        ("bug_fix", "decision", "architecture"),
        "{person} wrote the original implementation of {component} and reviewed this change.",
    ),
    (
        ("bug_fix", "fact", "upgrade", "measurement"),
        "The change shipped in release {ver} on a {weekday} and has been quiet since then.",
    ),
    (
        ("bug_fix", "incident"),
        "Related alerts for {component} were tuned at the same time to avoid paging noise.",
    ),
    (
        ("decision", "architecture", "note", "runbook"),
        "{person2} asked to be kept in the loop because the {team} depends on this behaviour.",
    ),
    (
        ("bug_fix", "incident"),
        "Customers were not affected as far as we can tell from support tickets and logs.",
    ),
]


# --- composition --------------------------------------------------------------------------------

STOP = {
    "a",
    "an",
    "the",
    "of",
    "to",
    "for",
    "in",
    "on",
    "and",
    "or",
    "with",
    "by",
    "is",
    "are",
    "its",
    "it",
}


def slug(text: str, words: int = 6) -> str:
    """kebab-case of the first `words` meaningful ASCII words of `text`."""
    ascii_text = text.lower().replace("á", "a").replace("í", "i").replace("ó", "o")
    parts = [w for w in re.split(r"[^a-z0-9]+", ascii_text) if w and w not in STOP]
    return "-".join(parts[:words])


def fits(kinds: tuple[str, ...], kind: str) -> bool:
    return kind in kinds


class Composer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, seq: Any) -> Any:
        return self.rng.choice(list(seq))

    def pick_for(self, items: Any, kind: str) -> Any:
        """A random item whose first field (its kinds) admits `kind`, or None."""
        fitting = [it for it in items if fits(it[0], kind)]
        return self.rng.choice(fitting) if fitting else None

    def ctx(self, project: str) -> dict:
        r = self.rng
        p = PROJECTS[project]
        component, kind = self.pick(p["components"].items())
        others = [c for c, k in p["components"].items() if c != component and k in BACKEND]
        return {
            "project": project,
            "kind": kind,
            "component": component,
            "Component": component[0].upper() + component[1:],
            "component_short": component.replace("the ", "", 1),
            "component2": self.pick(others),
            "person": self.pick(PEOPLE),
            "person2": self.pick(PEOPLE),
            "team": self.pick(TEAMS),
            "weekday": self.pick(WEEKDAYS),
            "month": self.pick(MONTHS),
            "region": self.pick(REGIONS),
            "env": self.pick(ENVS),
            "ticket": f"{p['key']}-{r.randint(100, 4999)}",
            "ms": self.pick(["80", "120", "150", "250", "400"]),
            "rps": self.pick(["40", "120", "300", "800"]),
            "q": r.randint(1, 4),
            "ver": f"{r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}",
            "minutes": self.pick(["12", "25", "40", "55", "90"]),
            "hours": self.pick(["two", "three", "four", "six"]),
        }

    # Each maker returns (type, topic for the name, observations, extra tags) or None when no
    # fragment fits the component's kind.

    def bug_fix(self, c: dict[str, Any]) -> Made | None:
        _, symptoms, cause, fix = self.pick_for(BUGS, c["kind"])
        symptom = self.pick(symptoms)
        forms = [
            [f"{c['Component']} {symptom}. Root cause: {cause}.", f"Fix: {fix}."],
            [f"{c['Component']} {symptom}; the root cause was {cause}, and the fix was to {fix}."],
            [
                f"Bug in {c['component_short']}: it {symptom}.",
                f"{c['person']} traced it to {cause}; we now {fix}.",
            ],
            [
                f"Fixed {c['ticket']}: {c['component']} {symptom}. The cause was {cause}.",
                f"Resolution: {fix}. A regression test covers it.",
            ],
        ]
        return "bug_fix", slug(symptom), self.pick(forms), ["bug"]

    def incident(self, c: dict[str, Any]) -> Made | None:
        _, what, trigger, follow = self.pick_for(INCIDENTS, c["kind"])
        forms = [
            [
                f"Incident on a {c['weekday']} in {c['month']}: {c['component']} {what} for {c['minutes']} minutes, triggered by {trigger}.",
                follow,
            ],
            [
                f"{c['Component']} {what} for about {c['hours']} hours after {trigger}.",
                f"Detected by an alert, mitigated by {c['person']}. {follow}",
            ],
            [
                f"SEV2 in {c['region']}: {c['component']} {what}. Trigger: {trigger}.",
                follow,
                f"Incident commander was {c['person']}; postmortem in {c['ticket']}.",
            ],
        ]
        return "incident", slug(what), self.pick(forms), ["incident"]

    def decision(self, c: dict[str, Any]) -> Made | None:
        _, choice, alt, reason = self.pick_for(DECISIONS, c["kind"])
        revisit = self.pick(REVISIT).format(**c)
        forms = [
            [f"For {c['component']} we chose {choice} over {alt}, because {reason}.", revisit],
            [
                f"Decision ({c['ticket']}): {c['component']} uses {choice} rather than {alt}; {reason}."
            ],
            [
                f"{c['person']} proposed {choice} for {c['component']} instead of {alt}. Accepted, since {reason}.",
                revisit,
            ],
            [f"We considered {alt} for {c['component']} and went with {choice}: {reason}."],
        ]
        return "decision", slug(choice), self.pick(forms), ["decision"]

    def convention(self, c: dict[str, Any]) -> Made | None:
        subject, rule, why = self.pick(CONVENTIONS)
        why = why.format(**c)
        forms = [
            [f"{subject} {rule}, because {why}."],
            [
                f"Convention in {c['project']}: {subject[0].lower() + subject[1:]} {rule}. Reason: {why}."
            ],
            [f"{subject} {rule}.", f"Agreed because {why}; enforced in review by the {c['team']}."],
        ]
        return "convention", slug(subject + " " + rule), self.pick(forms), ["convention"]

    def fact(self, c: dict[str, Any]) -> Made | None:
        setting, value, why = self.pick(SETTINGS[c["kind"]])
        forms = [
            (setting, [f"In {c['component']}, {setting} is {value} because {why}."]),
            (
                setting,
                [
                    f"{c['Component']}: {setting} is set to {value}.",
                    f"Reason: {why}. Changed by {c['person']} in {c['ticket']}.",
                ],
            ),
        ]
        if c["kind"] in BACKEND:
            forms += [
                (
                    "runs-on",
                    [
                        f"{c['Component']} runs on {self.pick(PLATFORMS)} in {c['region']} with {self.pick(['two', 'three', 'four', 'six', 'twelve'])} replicas; the {c['team']} owns it."
                    ],
                ),
                (
                    "depends on " + c["component2"].replace("the ", "", 1),
                    [
                        f"{c['Component']} depends on {c['component2']} and degrades gracefully when it is unavailable, serving cached data for up to ten minutes."
                    ],
                ),
            ]
        else:
            forms.append(
                (
                    "reads-from " + c["component2"].replace("the ", "", 1),
                    [
                        f"{c['Component']} reads its data from {c['component2']} and shows the last cached copy with a banner when that is unavailable."
                    ],
                )
            )
        topic, obs = self.pick(forms)
        return "fact", slug(topic), obs, []

    def measurement(self, c: dict[str, Any]) -> Made | None:
        metric, unit = self.pick(METRICS[c["kind"]])
        change = self.pick(CHANGES[c["kind"]])
        a, after = sorted(self.rng.sample(range(20, 900), 2), reverse=True)
        b = f"{after} {unit}".strip()
        forms = [
            [f"The {metric} of {c['component']} went from {a} to {b} after {change}."],
            [
                f"Benchmark by {c['person']}: {c['component']} {metric} was {a} before and {b} after {change}, measured on {c['env']}."
            ],
            [
                f"After {change}, the {metric} of {c['component']} dropped from {a} to {b}.",
                "The numbers come from a one-hour window at peak traffic, compared with the same hour a week earlier.",
            ],
        ]
        return "fact", slug(metric + " " + change), self.pick(forms), ["performance"]

    def lesson(self, c: dict[str, Any]) -> Made | None:
        situation, lesson = self.pick(LESSONS)
        forms = [
            [f"{situation} for {c['component']} went badly.", f"Lesson: {lesson}."],
            [
                f"Lesson from {c['ticket']}: {lesson}. {situation} had cost us a day on {c['component']}."
            ],
            [
                f"Retro note ({c['person']}): {situation[0].lower() + situation[1:]} on {c['component']} caused the delay; {lesson}."
            ],
        ]
        return "lesson_learned", slug(lesson), self.pick(forms), ["retro"]

    def note(self, c: dict[str, Any]) -> Made | None:
        group = BACKEND if c["kind"] in BACKEND else (UI,)
        template = self.pick(INVESTIGATIONS[group])
        topic = template.format(**c)
        forms = [
            [f"{c['person']} is investigating {topic}. Notes so far are in {c['ticket']}."],
            [
                f"Open investigation: {topic}.",
                f"{c['person']} and {c['person2']} will report back at the {c['weekday']} sync.",
            ],
            [f"Spike planned for next sprint on {topic}; timebox three days, owner {c['person']}."],
            [
                self.pick(OPEN_QUESTIONS).format(**c)
                + f" Raised by {c['person']} in {c['ticket']}, no answer yet."
            ],
        ]
        return "note", slug(template.replace("{component}", "")), self.pick(forms), []

    def runbook(self, c: dict[str, Any]) -> Made | None:
        _, task, steps = self.pick_for(RUNBOOK_TASKS, c["kind"])
        task_text = task.format(**c)
        forms = [
            [f"To {task_text}: {steps}."],
            [
                f"Runbook, how to {task_text}.",
                f"Steps: {steps}. Ask in #{c['project']}-oncall if anything looks off.",
            ],
        ]
        return "runbook", slug(task.replace("{component}", "")), self.pick(forms), ["runbook"]

    def upgrade(self, c: dict[str, Any]) -> Made | None:
        _, lib, old, new, remark = self.pick_for(LIBRARIES, c["kind"])
        forms = [
            [f"Upgraded {lib} from {old} to {new} for {c['component']}; {remark}."],
            [
                f"The {lib} {new} upgrade for {c['component']} is done.",
                f"Notes: {remark}. {c['person']} did the migration in {c['ticket']}.",
            ],
            [
                f"{c['Component']} still runs {lib} {old}; the upgrade to {new} is planned for {c['month']}.",
                f"From the teams that already upgraded: {remark}, so budget a few days for it.",
            ],
        ]
        return "note", slug(f"{lib} {new} upgrade"), self.pick(forms), ["dependencies"]

    def meeting(self, c: dict[str, Any]) -> Made | None:
        _, template = self.pick_for(MEETING_AGREEMENTS, c["kind"])
        agreement = template.format(**c)
        forms = [
            [
                f"Agreed in the {c['weekday']} architecture sync ({c['person']}, {c['person2']}): {agreement}."
            ],
            [
                f"Meeting note from {c['month']}: {agreement}.",
                f"Action item for {c['person']}: write it up in {c['ticket']}.",
            ],
        ]
        return (
            "note",
            slug(template.replace("{component}", "").format(**c)),
            self.pick(forms),
            ["meeting"],
        )

    def ownership(self, c: dict[str, Any]) -> Made | None:
        forms = [
            [
                f"The {c['team']} owns {c['component']}; escalations go to {c['person']}, with {c['person2']} as backup."
            ],
            [
                f"{c['Component']} moved from the {self.pick(TEAMS)} to the {c['team']} in {c['month']}.",
                f"Questions about it go to {c['person']}, who did the handover.",
            ],
        ]
        return "fact", "ownership", self.pick(forms), ["ownership"]

    def customer(self, c: dict[str, Any]) -> Made | None:
        customer = self.pick(CUSTOMERS)
        remark = self.pick(CUSTOMER_NOTES).format(**c)
        forms = [
            [f"Customer {customer} on {self.pick(PLANS)} {remark}."],
            [
                f"{customer} {remark}.",
                f"Account manager: {c['person']}. Keep this in mind before changing {c['component']}.",
            ],
        ]
        return "fact", f"customer-{slug(customer)}", self.pick(forms), ["customer"]

    def architecture(self, c: dict[str, Any]) -> Made | None:
        if c["kind"] not in BACKEND:
            return None
        transport = self.pick(TRANSPORTS)
        forms = [
            [
                f"{c['Component']} talks to {c['component2']} through {transport}; a failure on either side is retried for up to an hour."
            ],
            [
                f"Architecture: {c['component']} publishes changes via {transport} and {c['component2']} consumes them.",
                f"The contract is documented in {c['ticket']}.",
            ],
        ]
        return "architecture", "to-" + slug(c["component2"]), self.pick(forms), ["architecture"]

    MAKERS = [
        ("bug_fix", 16),
        ("incident", 6),
        ("decision", 12),
        ("convention", 9),
        ("fact", 9),
        ("measurement", 8),
        ("lesson", 8),
        ("note", 8),
        ("runbook", 5),
        ("upgrade", 6),
        ("meeting", 5),
        ("ownership", 4),
        ("customer", 4),
        ("architecture", 6),
    ]

    def make(self) -> dict[str, Any] | None:
        project = self.pick(PROJECTS)
        c = self.ctx(project)
        names, weights = zip(*self.MAKERS, strict=True)
        maker = self.rng.choices(names, weights=weights)[0]
        made = getattr(self, maker)(c)
        if made is None:
            return None
        mtype, topic, obs, extra_tags = made
        extras = [text for makers, text in EXTRA_OBS if maker in makers]
        if extras and len(obs) < 3 and self.rng.random() < 0.45:
            obs = [*obs, self.pick(extras).format(**c)]
        tags = [f"project:{project}", self.pick(PROJECTS[project]["tags"]), *extra_tags]
        if maker == "convention":  # project-wide, not about one component
            name = f"{project}-{topic}"
        else:
            name = f"{project}-{slug(c['component'])}-{topic}"
        return {"name": name, "type": mtype, "observations": obs, "tags": list(dict.fromkeys(tags))}


def word_count_ok(text: str) -> bool:
    return 10 <= len(text.split()) <= 60


def merge_short(observations: list[str]) -> list[str] | None:
    """Append an observation under 10 words to the one before it (or after it, if first)."""
    out: list[str] = []
    pending = ""
    for o in observations:
        o = (pending + " " + o).strip() if pending else o
        pending = ""
        if len(o.split()) < 10:
            if out:
                out[-1] = out[-1] + " " + o
            else:
                pending = o
            continue
        out.append(o)
    if pending or not out or not all(word_count_ok(o) for o in out):
        return None
    return out


def generate(count: int, seed: int, taken: set[str]) -> list[dict]:
    rng = random.Random(seed)
    composer = Composer(rng)
    out: list[dict] = []
    seen_text: set[tuple[str, ...]] = set()
    while len(out) < count:
        m = composer.make()
        if m is None:
            continue
        obs = merge_short(m["observations"])
        if obs is None:
            continue
        m["observations"] = obs
        key = tuple(obs)
        if key in seen_text:
            continue
        seen_text.add(key)
        base = m["name"][:200].strip("-")
        name = base
        while name in taken:
            name = f"{base}-{rng.randint(100, 9999)}"
        m["name"] = name
        taken.add(name)
        out.append(m)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT, help="generated memories")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = ap.parse_args()

    hand_path = HERE / "memories_handwritten.jsonl"
    hand = [
        json.loads(line)
        for line in hand_path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    taken = {m["name"] for m in hand}
    generated = generate(args.count, args.seed, taken)
    with (HERE / "memories.jsonl").open("w", encoding="utf-8") as fh:
        for m in [*hand, *generated]:
            fh.write(json.dumps(m, ensure_ascii=False) + "\n")
    print(
        f"memories.jsonl: {len(hand)} hand-written + {len(generated)} generated = {len(hand) + len(generated)}"
    )


if __name__ == "__main__":
    main()
