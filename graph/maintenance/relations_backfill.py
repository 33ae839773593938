"""kg backfill-relations: connect orphan entities (no relation in or out) and evidence captures
with the reference's five heuristic rules (graph/maintenance/backfill_rules.py), no LLM involved.

A dry run unless `apply`: the candidates are listed and nothing is written. Applied, the
relations are created in one transaction with `metadata {source: "kg-backfill", rule,
reason}`, and the orphans considered are remembered (MetaEntry `kg_backfill_processed_v1`,
the reference's key) so that the next run skips them; `reset_idempotency` forgets them first.
Idempotent either way: a relation that exists (in either direction, for a symmetric type) is
never proposed twice, and a second run over an unchanged graph creates nothing.

Relations are not part of either index (the keyword row holds name, title, observations and
tags; the vector its text), and entity rows are not touched, so nothing needs re-indexing and
no memory's recency moves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from django.db import transaction
from pydantic import AfterValidator, Field

from graph.maintenance.backfill_rules import (
    DERIVED_TYPES,
    RULE_OF,
    SYMMETRIC_TYPES,
    Candidate,
    Node,
    Settings,
    propose,
    steps,
)
from graph.models import Entity, MetaEntry, Relation, Status, Tag
from graph.ops.entity_types import EVIDENCE_TYPES, EVIDENCES
from graph.ops.kit.fields import Output, StrictInput
from graph.project_tags import MAX_PROJECT_CHARS, PROJECT_TAG_PREFIX, project_of

IDEMPOTENCY_KEY = "kg_backfill_processed_v1"
SOURCE = "kg-backfill"
SESSION_TAG_PREFIX = "session:"
WRITE_BATCH = 500


def _project(value: str | None) -> str | None:
    if value is None:
        return None
    project = project_of(value)
    if not project:
        raise ValueError("must name a project")
    return project


class BackfillInput(StrictInput):
    project: Annotated[str | None, AfterValidator(_project)] = Field(
        default=None,
        max_length=MAX_PROJECT_CHARS,
        description="Only orphans (and evidence) filed under this project.",
    )
    apply: bool = Field(default=False, description="Write the relations (default: a dry run).")
    max_per_source: int = Field(default=3, ge=1, le=100, description="Edges per source, per rule.")
    min_shared_tags: int = Field(
        default=2, ge=1, le=50, description="Topical tags two entities must share (rule 1)."
    )
    session_cooccurrence: bool = Field(default=False, description="Enable rule 3.")
    name_tokens: bool = Field(default=False, description="Enable rule 4.")
    min_jaccard: float = Field(
        default=0.5, gt=0, le=1, description="Name-token Jaccard threshold (rule 4)."
    )
    evidence_links: bool = Field(default=True, description="Rule 5 (on by default).")
    include_archived: bool = Field(default=False, description="Archived entities take part too.")
    reset_idempotency: bool = Field(
        default=False, description="Reconsider orphans earlier runs already attempted."
    )


class CandidateOutput(Output):
    from_: str = Field(alias="from")
    to: str
    type: str
    rule: str
    reason: str


class BackfillOutput(Output):
    dryRun: bool
    rules: list[str] = Field(description="The rules that ran.")
    candidatesProposed: int
    edgesWritten: int = Field(description="Relations created (0 on a dry run).")
    byRule: dict[str, int] = Field(description="Candidates per rule.")
    orphansConsidered: int
    orphansSkippedIdempotent: int = Field(description="Orphans an earlier run attempted.")
    orphansMarkedProcessed: int
    evidenceConsidered: int
    idempotencyReset: bool
    candidates: list[CandidateOutput]


def _signal(metadata: dict[str, Any]) -> float:
    score = metadata.get("signal_score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        return float(score)
    return 1.0


def _snapshot(include_archived: bool) -> dict[int, Node]:
    """Every entity in scope, with what the rules read of it."""
    entities = Entity.objects.all()
    tags = Tag.objects.all()
    if not include_archived:
        entities = entities.filter(status=Status.ACTIVE)
        tags = tags.filter(entity__status=Status.ACTIVE)
    tags_of: dict[int, set[str]] = {}
    for entity_id, tag in tags.values_list("entity_id", "name"):
        tags_of.setdefault(entity_id, set()).add(tag)
    nodes = {}
    rows = entities.values_list("id", "name", "type", "created_at", "metadata")
    for id_, name, type_, created_at, metadata in rows:
        metadata = metadata if isinstance(metadata, dict) else {}
        own = frozenset(tags_of.get(id_, ()))
        sessions = {t[len(SESSION_TAG_PREFIX) :] for t in own if t.startswith(SESSION_TAG_PREFIX)}
        session_id = metadata.get("session_id")
        if isinstance(session_id, str) and session_id:
            sessions.add(session_id)
        nodes[id_] = Node(
            id=id_,
            name=name,
            type=type_,
            created_at=created_at,
            tags=own,
            sessions=frozenset(sessions - {""}),
            projects=frozenset(
                t[len(PROJECT_TAG_PREFIX) :] for t in own if t.startswith(PROJECT_TAG_PREFIX)
            ),
            signal=_signal(metadata),
        )
    return nodes


def _processed() -> set[int]:
    entry = MetaEntry.objects.filter(key=IDEMPOTENCY_KEY).first()
    value = entry.value if entry is not None else []
    return {i for i in value if isinstance(i, int)} if isinstance(value, list) else set()


def _write(candidates: list[Candidate]) -> int:
    """Create the candidates that do not exist yet, between entities that still do (another
    process may have written since they were proposed); returns how many were created."""
    existing = set(
        Relation.objects.filter(type__in=DERIVED_TYPES).values_list(
            "from_entity_id", "to_entity_id", "type"
        )
    )
    alive = set(Entity.objects.values_list("id", flat=True))
    new = []
    for c in candidates:
        if (c.from_id, c.to_id, c.type) in existing or not {c.from_id, c.to_id} <= alive:
            continue
        if c.type in SYMMETRIC_TYPES and (c.to_id, c.from_id, c.type) in existing:
            continue
        existing.add((c.from_id, c.to_id, c.type))
        metadata = {"source": SOURCE, "rule": RULE_OF[c.type], "reason": c.reason}
        new.append(
            Relation(from_entity_id=c.from_id, to_entity_id=c.to_id, type=c.type, metadata=metadata)
        )
    Relation.objects.bulk_create(new, batch_size=WRITE_BATCH, ignore_conflicts=True)
    return len(new)


def _mark_processed(orphans: list[int], reset: bool) -> int:
    before = set() if reset else _processed()
    after = before | set(orphans)
    if after != before or reset:
        MetaEntry.objects.update_or_create(key=IDEMPOTENCY_KEY, defaults={"value": sorted(after)})
    return len(after) - len(before)


def relations_backfill(
    *,
    data: BackfillInput,
    on_total: Callable[[int], None] | None = None,
    progress: Callable[[int], None] | None = None,
) -> BackfillOutput:
    """Propose the rules' relations; with `data.apply`, create them in one transaction.
    `on_total` hears how many steps `progress` will be called for."""
    nodes = _snapshot(data.include_archived)
    related = set(Relation.objects.values_list("from_entity_id", flat=True))
    related |= set(Relation.objects.values_list("to_entity_id", flat=True))
    orphans_all = [
        i
        for i in sorted(nodes)
        if i not in related and (data.project is None or data.project in nodes[i].projects)
    ]
    # A dry run with reset_idempotency previews the reset without making it.
    processed = set() if data.reset_idempotency else _processed()
    orphans = [i for i in orphans_all if i not in processed]
    with_evidence = set(
        Relation.objects.filter(type=EVIDENCES).values_list("from_entity_id", flat=True)
    )
    evidence = [
        i
        for i in sorted(nodes)
        if nodes[i].type in EVIDENCE_TYPES
        and i not in with_evidence
        and (data.project is None or data.project in nodes[i].projects)
    ]
    settings = Settings(
        max_per_source=data.max_per_source,
        min_shared_tags=data.min_shared_tags,
        session_cooccurrence=data.session_cooccurrence,
        name_tokens=data.name_tokens,
        min_jaccard=data.min_jaccard,
        evidence_links=data.evidence_links,
        project=data.project,
    )
    if on_total is not None:
        on_total(steps(len(orphans), len(evidence), settings))
    candidates = propose(nodes, orphans, evidence, settings, progress)
    written = marked = 0
    if data.apply:
        with transaction.atomic():
            written = _write(candidates)
            marked = _mark_processed(orphans, data.reset_idempotency)
    rules = ["tagCooccurrence", "projectClustering"]
    rules += ["sessionCooccurrence"] if data.session_cooccurrence else []
    rules += ["nameTokenSimilarity"] if data.name_tokens else []
    rules += ["evidenceLinks"] if data.evidence_links else []
    by_rule = dict.fromkeys(rules, 0)
    for c in candidates:
        by_rule[RULE_OF[c.type]] += 1
    return BackfillOutput(
        dryRun=not data.apply,
        rules=rules,
        candidatesProposed=len(candidates),
        edgesWritten=written,
        byRule=by_rule,
        orphansConsidered=len(orphans),
        orphansSkippedIdempotent=len(orphans_all) - len(orphans),
        orphansMarkedProcessed=marked,
        evidenceConsidered=len(evidence),
        idempotencyReset=data.reset_idempotency and data.apply,
        candidates=[
            CandidateOutput(
                **{"from": nodes[c.from_id].name},
                to=nodes[c.to_id].name,
                type=c.type,
                rule=RULE_OF[c.type],
                reason=c.reason,
            )
            for c in candidates
        ],
    )
