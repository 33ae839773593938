"""The memory graph: entities with observations, tags and relations.

The keyword (FTS5) and vector (vec0) indexes are virtual tables created by migration 0002 and
maintained by `Entity.objects.index_sync` inside the same transaction as every write.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from graph.storage import backend
from graph.storage.meta import MetaManager
from graph.storage.outcomes import OutcomeManager
from graph.storage.query_vectors import QueryVectorManager

# The trust model (docs/trust.md): a memory with a source is a fact, one without is a
# hypothesis; confidence is an input whose default follows that status. Before migration 0005
# every memory started at 0.8 and gained 0.05 per new observation: that history is kept as it
# was (docs/trust.md, "The migration"), and only `observe` raises confidence now.
FACT_CONFIDENCE = 1.0
HYPOTHESIS_CONFIDENCE = 0.5


class Namespace(models.TextChoices):
    PERSONAL = "personal"
    TEAM = "team"
    GLOBAL = "global"


class Status(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"


class TrustStatus(models.TextChoices):
    """Whether a memory is attributable: `fact` has a source and was observed; `hypothesis`
    has none (or was derived from others). Separate from Status (active / archived)."""

    FACT = "fact"
    HYPOTHESIS = "hypothesis"


class MemoryKind(models.TextChoices):
    SEMANTIC = "semantic"  # what holds (a decision, a lesson, a fact about the code)
    EPISODIC = "episodic"  # what happened (a commit, a session)


class Entity(models.Model):
    name = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100)
    # NULL means "no title given", which recall reports as null.
    title = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    namespace = models.CharField(
        max_length=16, choices=Namespace.choices, default=Namespace.PERSONAL
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # 0..1, an input of remember (default by trust status); raised only by `observe`, never
    # by appending, importing or accepting a derived memory (graph/ops/kit/trust/).
    confidence = models.FloatField(default=HYPOTHESIS_CONFIDENCE)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    # Recall effectiveness, for the impact factor (graph/search/scoring.py): citations and
    # explicit feedback only, never reads (graph/ops/feedback.py counts them).
    recall_hits = models.PositiveIntegerField(default=0)
    recall_misses = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    # Time of the last write (not of the last read): recency and the recent listing use it.
    updated_at = models.DateTimeField(default=timezone.now)
    metadata = models.JSONField(default=dict, blank=True)
    # Hash of the text its vector is built from (name, title, observations), kept by
    # index_sync: an entity whose vector carries another hash is waiting to be embedded.
    embedding_hash = models.CharField(max_length=32, blank=True, default="")
    # --- provenance and trust (migration 0005; graph/ops/kit/trust/ holds the rules) ----------
    trust = models.CharField(
        max_length=16, choices=TrustStatus.choices, default=TrustStatus.HYPOTHESIS
    )
    # Where the memory can be checked (a runbook, a file, a commit); NULL: unsourced.
    source = models.CharField(max_length=500, null=True, blank=True)  # noqa: DJ001
    # temporal | paradigm | architectural | observational; a derived memory holds the union of
    # its sources' as one comma-separated value; "" for none.
    invalidation_tag = models.CharField(max_length=64, blank=True, default="")
    # The test that would retire the memory; a derived memory holds the union of its sources'
    # conditions, one per line; "" for none.
    invalidation_condition = models.TextField(blank=True, default="")
    kind = models.CharField(max_length=16, choices=MemoryKind.choices, default=MemoryKind.SEMANTIC)
    # What the memory was derived from (a superseded memory, a digest's first source). Indexed
    # under Meta.indexes; entities are archived, never deleted, so SET_NULL is for safety only.
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="derived",
        db_index=False,
    )
    # Derivation steps from an observation: 0 for a memory stated or observed itself, its
    # parent's + 1 for an unsourced derivation.
    hop_count = models.PositiveIntegerField(default=0)
    # The last time it was observed against its source; NULL: never (an unsourced memory).
    last_observed_at = models.DateTimeField(null=True, blank=True)
    # From `ttl_hours`: after this the memory is hidden from recall, briefing, export and
    # memory_list unless a call asks for include_expired. NULL: permanent.
    expires_at = models.DateTimeField(null=True, blank=True)

    objects = backend.entity_manager()

    class Meta:
        verbose_name_plural = "entities"
        indexes = [
            models.Index(fields=["status", "updated_at"], name="entity_status_updated"),
            models.Index(fields=["namespace"], name="entity_namespace"),
            models.Index(fields=["parent"], name="entity_parent"),
            models.Index(fields=["expires_at"], name="entity_expires"),
        ]

    def __str__(self) -> str:
        return self.name


class Observation(models.Model):
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="observations")
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.text[:80]


class Tag(models.Model):
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="tags")
    name = models.CharField(max_length=255)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["entity", "name"], name="tag_unique_per_entity")
        ]
        indexes = [models.Index(fields=["name"], name="tag_name")]

    def __str__(self) -> str:
        return self.name


class Relation(models.Model):
    from_entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_out")
    to_entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_in")
    type = models.CharField(max_length=100)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["from_entity", "to_entity", "type"], name="relation_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.from_entity_id} -{self.type}-> {self.to_entity_id}"


class EntityVector(models.Model):
    """An entity's vector in one index generation (graph.indexing.generations explains them).

    The float vector is kept here for exact rescoring; the generation's vec0 table holds its
    sign bits for the coarse nearest-neighbour search. Not a foreign key: a staged row may
    outlive nothing, but entities are archived rather than deleted, and swaps prune.
    """

    generation = models.PositiveIntegerField()
    entity_id = models.BigIntegerField()
    text_hash = models.CharField(max_length=32)
    embedding = models.BinaryField()
    created_at = models.DateTimeField(default=timezone.now)
    # The text's content pieces for late interaction (graph.search.late_interaction), from the
    # same model call as `embedding`; NULL where the embedder gives none. Last in the row, so
    # reading `embedding` never loads it.
    pieces = models.BinaryField(null=True, default=None)

    objects = backend.vector_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["generation", "entity_id"], name="vector_unique_per_generation"
            )
        ]
        indexes = [models.Index(fields=["entity_id"], name="vector_entity")]

    def __str__(self) -> str:
        return f"g{self.generation}:{self.entity_id}"


class QueryVector(models.Model):
    """A recall query's embedding, shared by the processes of one database
    (graph/storage/query_vectors.py). The key hashes the embedder's identity, its width and the
    query: the query's text is not stored."""

    key = models.CharField(max_length=64, primary_key=True)
    vector = models.BinaryField()
    created_at = models.DateTimeField(default=timezone.now)

    objects = QueryVectorManager()

    class Meta:
        indexes = [models.Index(fields=["created_at"], name="query_vector_created")]

    def __str__(self) -> str:
        return self.key[:12]


class Outcome(models.TextChoices):
    RETURNED = "returned"  # a recall returned it to the session; no verdict yet
    HIT = "hit"  # the session cited it (or reported it as a hit)
    MISS = "miss"  # returned and not cited when the session's citations were recorded


class SessionOutcome(models.Model):
    """What one session made of one memory: the ledger that counts each memory at most once
    per session in the entity's recall_hits / recall_misses (graph/ops/feedback.py has the
    rule). Not a foreign key, like EntityVector: entities are archived, not deleted, and a
    recall's batched flush must never fail on a row that went away."""

    session_id = models.CharField(max_length=128)
    entity_id = models.BigIntegerField()
    outcome = models.CharField(max_length=8, choices=Outcome.choices)
    created_at = models.DateTimeField(default=timezone.now)
    # The last change of outcome: rows untouched for access.OUTCOME_RETENTION are pruned.
    updated_at = models.DateTimeField(default=timezone.now)

    objects = OutcomeManager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session_id", "entity_id"], name="outcome_unique_per_session"
            )
        ]
        indexes = [models.Index(fields=["updated_at"], name="outcome_updated")]

    def __str__(self) -> str:
        return f"{self.session_id}:{self.entity_id}={self.outcome}"


class MetaEntry(models.Model):
    """Key-value facts about the graph itself (index generation, embedding provider, ...)."""

    key = models.CharField(max_length=100, primary_key=True)
    value = models.JSONField(default=dict)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = MetaManager()

    class Meta:
        verbose_name_plural = "meta entries"

    def __str__(self) -> str:
        return self.key
