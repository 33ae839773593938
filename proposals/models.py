"""Dream proposals (digests, patterns, relation verdicts), their review lifecycle, the audit of
who reviewed them, the conflict judge's memory of judged pairs, LLM telemetry, and task runs.

Nothing here changes the memory graph: a proposal is applied only by the accept service, when a
person accepts it (DESIGN §7).
"""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone


class ProposalKind(models.TextChoices):
    DIGEST = "digest"
    PATTERN_EMERGENT = "pattern_emergent"
    RELATION = "relation"
    # A new memory (decision, lesson, fact) mined from a session transcript: no source entities.
    MEMORY = "memory"
    # A product improvement an agent proposes, with memories as its evidence (source_ids):
    # accepting it records a person's agreement and writes nothing to the graph.
    IMPROVEMENT = "improvement"


class ProposalStatus(models.TextChoices):
    PENDING = "pending"
    APPLIED = "applied"
    REJECTED = "rejected"


class Proposal(models.Model):
    kind = models.CharField(max_length=32, choices=ProposalKind.choices)
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    project = models.CharField(max_length=255, blank=True, default="")
    # Identifies the group of memories the proposal came from (an ISO week, a semantic cluster,
    # an entity pair); with `fingerprint` it keeps an identical pending proposal from repeating.
    cluster_key = models.CharField(max_length=255, blank=True, default="")
    # Hash of kind + sorted source ids + proposed content: an identical pending proposal is
    # never staged twice.
    fingerprint = models.CharField(max_length=64, db_index=True)
    # Entity ids the proposal was made from (kept after accept: a digest's provenance).
    source_ids = models.JSONField(default=list)
    # Hash of those sources as they were when it was staged (proposals/source_state.py): once
    # a person rejects it, the same sources unchanged are not proposed again.
    sources_state = models.CharField(max_length=64, blank=True, default="", db_index=True)
    # digest / pattern_emergent: {name, type, observations, tags, validation_warnings?};
    # relation: {from, to, relation, verdict, rationale}; memory: {name, type, title?,
    # observations, tags, evidence?, source: {transcript, sessionId, turns, at, excerpt?}};
    # improvement: {title, description, origin}. A work package's result carries
    # `origin: {by: "agent", host, packageId}` (dream/work_package/operation.py).
    proposed = models.JSONField(default=dict)
    llm_model = models.CharField(max_length=200, blank=True, default="")
    prompt_version = models.CharField(max_length=50, blank=True, default="")
    # Why it was rejected (by a person, or because it could no longer claim its sources).
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "kind"], name="proposal_status_kind"),
            models.Index(fields=["project"], name="proposal_project"),
        ]
        permissions = [("review_proposal", "Can accept or reject dream proposals")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"


class ReviewChannel(models.TextChoices):
    ADMIN = "admin"
    HTMX = "htmx"
    API = "api"
    CLI = "cli"


class ProposalReview(models.Model):
    """Audit record: one row per accept or reject, whether it took effect or was refused."""

    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="reviews")
    action = models.CharField(max_length=16)  # accept | reject
    outcome = models.CharField(max_length=16)  # applied | rejected | refused
    channel = models.CharField(max_length=16, choices=ReviewChannel.choices)
    # A user name for admin/HTMX, the OS user for the CLI, "" for an anonymous API caller.
    reviewer = models.CharField(max_length=150, blank=True, default="")
    # Where from: the client address for web and API, the host name for the CLI.
    origin = models.CharField(max_length=255, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.action} of proposal {self.proposal_id} via {self.channel}"


class JudgedPair(models.Model):
    """A pair of entities the conflict judge has ruled on; never paid for again."""

    low_entity_id = models.BigIntegerField()
    high_entity_id = models.BigIntegerField()
    verdict = models.CharField(max_length=16)  # CONTRADICTS | SUPERSEDES | DUPLICATE | UNRELATED
    judged_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["low_entity_id", "high_entity_id"], name="judged_pair_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.low_entity_id}~{self.high_entity_id}: {self.verdict}"


class LLMAttempt(models.Model):
    """Telemetry: one row per provider attempt of an LLM call. Messages are secret-redacted."""

    # All attempts of one logical call (primary and fallbacks) share it.
    call_id = models.UUIDField(default=uuid.uuid4, db_index=True)
    attempt = models.PositiveSmallIntegerField(default=0)
    flow = models.CharField(max_length=50)
    provider = models.CharField(max_length=30)
    model = models.CharField(max_length=200, blank=True, default="")
    project = models.CharField(max_length=255, blank=True, default="")
    ok = models.BooleanField()
    # auth | rate_limit | server | network | timeout | parse | bad_request | unknown
    error_class = models.CharField(max_length=30, blank=True, default="")
    message = models.TextField(blank=True, default="")
    latency_ms = models.PositiveIntegerField(default=0)
    fallback_used = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.flow}/{self.provider}: {'ok' if self.ok else self.error_class}"


class TaskStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


# The kind of a dream pass's TaskRun (dream/tasks.py queues it; dream/due.py
# reads when the last one was queued, without importing Celery).
DREAM_RUN_KIND = "dream_run"


class TaskRun(models.Model):
    """A long job enqueued for a worker (`"async": true`), reported by GET /v1/tasks/<id>.

    memesh keeps no Celery result backend: the task writes its own outcome here.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=50)  # dream_run | dream_patterns | dream_conflicts | ...
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.QUEUED)
    params = models.JSONField(default=dict)
    result = models.JSONField(null=True, blank=True)
    error_code = models.CharField(max_length=50, blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.kind} {self.id} ({self.status})"
