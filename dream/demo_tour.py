"""The demo tour's content (dream/demo.py seeds it): the memory of a small web-shop team
over the last six weeks, shaped to show each part of the dashboard — decisions with their
reasons, lessons with severities, a pattern and a plan (the work layer), commits and a session
summary carrying `evidences` edges to the work they support (the evidence layer), ordinary
knowledge, and one pending proposal waiting for review (a newer decision superseding an older
one, as the conflict judge would stage it).

Entries are in creation order, oldest first, so each relation's target already exists. Every
name starts with `demo-`, so a tour entity never takes the name of a memory of the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEMO_PROJECT = "memesh-demo"


@dataclass(frozen=True)
class TourEntry:
    name: str
    type: str
    days_ago: float
    title: str
    observations: tuple[str, ...]
    why: str | None = None
    tags: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()  # (relation type, target name)
    metadata: dict[str, str] = field(default_factory=dict)  # commits: hash and session_id


TOUR: tuple[TourEntry, ...] = (
    TourEntry(
        name="demo-decision-postgres",
        type="decision",
        days_ago=41,
        title="Orders, customers and invoices live in PostgreSQL",
        observations=("PostgreSQL 16 is the one primary store; Redis only caches.",),
        why=(
            "Relational data with real constraints, and the whole team knows it. Revisit if "
            "write volume outgrows a single primary."
        ),
        tags=("topic:storage",),
    ),
    TourEntry(
        name="demo-commit-3f9a2c1",
        type="commit",
        days_ago=40,
        title="feat(db): initial schema for orders and customers",
        observations=("commit 3f9a2c1: initial schema for orders and customers (PostgreSQL)",),
        relations=(("evidences", "demo-decision-postgres"),),
        metadata={"hash": "3f9a2c1", "session_id": "demo-session-01"},
    ),
    TourEntry(
        name="demo-decision-jwt-auth",
        type="decision",
        days_ago=36,
        title="API clients authenticate with short-lived JWTs",
        observations=("Access tokens live 15 minutes; a refresh token renews them.",),
        why="Stateless API servers behind the load balancer: no session store to run.",
        tags=("topic:auth",),
    ),
    TourEntry(
        name="demo-note-api-conventions",
        type="note",
        days_ago=33,
        title="API conventions",
        observations=(
            "Every route is under /v1; answers are {success, data} or {success: false, error}.",
            "Amounts are integers in cents; times are ISO 8601 in UTC.",
        ),
        tags=("topic:api",),
    ),
    TourEntry(
        name="demo-lesson-migration-lock",
        type="lesson_learned",
        days_ago=26,
        title="An index migration locked the orders table for four minutes",
        observations=(
            "Error: checkout timed out while a migration built an index on orders",
            "Root cause: CREATE INDEX without CONCURRENTLY holds a write lock on the table",
            "Fix: rebuilt the migration with CREATE INDEX CONCURRENTLY, outside a transaction",
            "Prevention: the migration linter rejects a plain CREATE INDEX on large tables",
        ),
        tags=("severity:major", "topic:storage"),
        relations=(("related-to", "demo-decision-postgres"),),
    ),
    TourEntry(
        name="demo-commit-8be41d0",
        type="commit",
        days_ago=25,
        title="fix(migrations): build the orders index concurrently",
        observations=("commit 8be41d0: build the orders index concurrently",),
        relations=(("evidences", "demo-lesson-migration-lock"),),
        metadata={"hash": "8be41d0", "session_id": "demo-session-02"},
    ),
    TourEntry(
        name="demo-decision-webhook-retries",
        type="decision",
        days_ago=21,
        title="Webhook deliveries retry with exponential backoff",
        observations=(
            "At most 8 attempts over about 6 hours, then the delivery is dead-lettered.",
        ),
        why=(
            "Payment providers retry too, so a short outage must not lose events. Revisit if "
            "a provider guarantees exactly-once delivery."
        ),
        tags=("topic:webhooks",),
    ),
    TourEntry(
        name="demo-pattern-idempotency-keys",
        type="pattern",
        days_ago=16,
        title="Every write endpoint takes an idempotency key",
        observations=(
            "The key is derived in middleware, before any I/O, and stored with the response.",
            "A repeated key returns the stored response instead of writing again.",
        ),
        tags=("topic:api",),
        relations=(("related-to", "demo-note-api-conventions"),),
    ),
    TourEntry(
        name="demo-plan-billing-v2",
        type="plan",
        days_ago=13,
        title="Billing v2: invoices from webhook events",
        observations=(
            "Steps: ingest provider webhooks, an idempotent invoice processor, the customer "
            "portal.",
            "Status: the webhook ingest is done; the invoice processor is in review.",
        ),
        tags=("topic:billing",),
        relations=(("depends-on", "demo-decision-webhook-retries"),),
    ),
    TourEntry(
        name="demo-lesson-timezone-test",
        type="lesson_learned",
        days_ago=10,
        title="A date test failed only after 22:00 UTC",
        observations=(
            "Error: test_invoice_due_date failed in the nightly CI run, never locally",
            "Root cause: the test built 'today' in local time and the code in UTC",
            "Fix: the test freezes time and builds every date in UTC",
            "Prevention: tests never read the wall clock; they take a frozen 'now'",
        ),
        tags=("severity:minor", "topic:testing"),
    ),
    TourEntry(
        name="demo-decision-server-sessions",
        type="decision",
        days_ago=6,
        title="Browser and API clients use server-side sessions in Redis",
        observations=("Sessions expire after 12 hours idle; logging out deletes the session.",),
        why=(
            "A stolen JWT stayed valid until it expired; a session is revoked at once. Redis "
            "already runs for the cache."
        ),
        tags=("topic:auth",),
    ),
    TourEntry(
        name="demo-commit-c07d9e4",
        type="commit",
        days_ago=5,
        title="feat(auth): server-side sessions in Redis",
        observations=("commit c07d9e4: server-side sessions in Redis; JWT login removed",),
        relations=(("evidences", "demo-decision-server-sessions"),),
        metadata={"hash": "c07d9e4", "session_id": "demo-session-03"},
    ),
    TourEntry(
        name="demo-lesson-webhook-replay",
        type="lesson_learned",
        days_ago=3,
        title="A replayed webhook created a second invoice",
        observations=(
            "Error: one customer received two invoices for one order",
            "Root cause: the provider retried a delivery our handler had accepted but not "
            "acknowledged in time",
            "Fix: the invoice processor keys on the event id and skips one it has seen",
            "Prevention: every webhook handler goes through the idempotency-key middleware",
        ),
        tags=("severity:critical", "topic:webhooks", "topic:billing"),
        relations=(
            ("caused-by", "demo-decision-webhook-retries"),
            ("related-to", "demo-pattern-idempotency-keys"),
        ),
    ),
    TourEntry(
        name="demo-commit-51aa7f3",
        type="commit",
        days_ago=2,
        title="fix(webhooks): skip replayed events by event id",
        observations=("commit 51aa7f3: skip replayed webhook events by their event id",),
        relations=(
            ("evidences", "demo-lesson-webhook-replay"),
            ("evidences", "demo-pattern-idempotency-keys"),
        ),
        metadata={"hash": "51aa7f3", "session_id": "demo-session-04"},
    ),
    TourEntry(
        name="demo-session-summary-billing",
        type="session-summary",
        days_ago=1,
        title="Session: the invoice processor",
        observations=(
            "Built the invoice processor on the webhook events; replays are skipped.",
            "Next: the customer portal embed.",
        ),
        tags=("topic:billing",),
        relations=(("evidences", "demo-plan-billing-v2"),),
    ),
    TourEntry(
        name="demo-note-welcome",
        type="note",
        days_ago=0,
        title="Welcome to the memesh demo tour",
        observations=(
            "These memories are a demo: a small team's decisions, lessons, commits and plan.",
            "Remove them with `memesh demo --reset` (or the dashboard's banner); memories of "
            "your own are never touched.",
        ),
    ),
)

# The pending proposal: the conflict judge's verdict on two of the tour's decisions (the
# newer supersedes the older), staged for a person to accept or reject.
PROPOSAL_FROM = "demo-decision-server-sessions"
PROPOSAL_TO = "demo-decision-jwt-auth"
PROPOSAL = {
    "from": PROPOSAL_FROM,
    "to": PROPOSAL_TO,
    "relation": "supersedes",
    "verdict": "SUPERSEDES",
    "rationale": (
        "Both decide how API clients authenticate; the newer one replaces JWTs with "
        "server-side sessions and says why, so the JWT decision no longer holds."
    ),
}
