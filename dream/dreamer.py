"""The dreamer (`memesh dream run`, POST /v1/dream/run): compacts clusters of episodic
memories into digest proposals. It only stages proposals; nothing changes the graph until a
person accepts one (DESIGN §7).

What it reads: active memories of an episodic type (EPISODIC_TYPES: commits and session
records — never lessons, decisions, patterns, architecture notes or anything else that is
knowledge rather than a log), written inside the window, not pinned (metadata.pin, the flag
`memesh pin` sets). They are grouped per project (`project:*` tag; memories without one form
their own group), then clustered:
- "semantic" when the live vector index holds vectors for them: greedy centroid clustering
  by cosine similarity (SEMANTIC_LINK), oldest first; memories without a vector are left out
  and named in clusteringNote;
- "calendar" otherwise: one cluster per ISO week, which can join unrelated work — the result
  says so.
A cluster under MIN_CLUSTER memories is skipped with its reason, as is one whose exact
sources already have a pending digest, or had a digest a person rejected while they were as
they are now (both checked before paying for a call; proposals/source_state.py). Each LLM
call counts against max_llm_calls; with `validate` a second call checks the digest
(prompts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypedDict

import numpy as np
from django.utils import timezone

from dream import prompts
from dream.llm.types import LLMRequest, LLMUnavailable
from dream.passes import (
    DIGEST_TYPE,
    EPISODIC_TYPES,
    PassRun,
    SkippedCluster,
    load_memories,
    normalise_project,
    pass_start,
    projects_of,
)
from dream.validator import validate_digest
from graph.indexing import generations
from graph.models import Entity, EntityVector, Status
from graph.ops.pin import is_pinned
from graph.project_tags import PROJECT_TAG_PREFIX
from proposals.models import Proposal, ProposalKind, ProposalStatus
from proposals.selectors import proposal_for_sources
from proposals.staging import proposal_stage

MIN_CLUSTER = 5
# Cosine similarity to a cluster's centroid needed to join it. Same-topic work notes sit
# around 0.5–0.7 on MiniLM; unrelated ones below 0.3.
SEMANTIC_LINK = 0.5
MAX_CLUSTER = 40  # memories shown to the model at once


# --- reading the candidates ----------------------------------------------------------------


def live_vectors(entity_ids: Sequence[int]) -> dict[int, np.ndarray] | None:
    """The live generation's vectors of these entities; None when there is no vector index."""
    if not entity_ids or not generations.vectors_supported():
        return None
    gen = generations.live_generation()
    if gen is None:
        return None
    return EntityVector.objects.floats(gen.generation, list(entity_ids))


# --- clustering -------------------------------------------------------------------------------


@dataclass
class Cluster:
    project: str
    key: str
    entities: list[Entity]


def _iso_week(when: datetime) -> str:
    year, week, _ = when.isocalendar()
    return f"{year}-W{week:02d}"


def calendar_clusters(project: str, entities: Sequence[Entity]) -> list[Cluster]:
    weeks: dict[str, list[Entity]] = {}
    for e in sorted(entities, key=lambda e: (e.created_at, e.pk)):
        weeks.setdefault(_iso_week(e.created_at), []).append(e)
    return [Cluster(project, week, members) for week, members in sorted(weeks.items())]


def semantic_clusters(
    project: str, entities: Sequence[Entity], vecs: dict[int, np.ndarray]
) -> list[Cluster]:
    """Greedy centroid clustering, oldest first: each memory joins the most similar cluster
    centroid at or above SEMANTIC_LINK, else starts a cluster."""
    groups: list[tuple[np.ndarray, list[Entity]]] = []
    for e in sorted(entities, key=lambda e: (e.created_at, e.pk)):
        v = vecs[e.pk]
        best, best_sim = -1, SEMANTIC_LINK
        for n, (centroid, _) in enumerate(groups):
            norm = float(np.linalg.norm(centroid)) or 1.0
            sim = float(centroid @ v) / norm
            if sim >= best_sim:
                best, best_sim = n, sim
        if best < 0:
            groups.append((v.astype(np.float32).copy(), [e]))
        else:
            centroid, members = groups[best]
            members.append(e)
            groups[best] = (centroid + v, members)
    return [
        Cluster(project, f"semantic:{_iso_week(members[0].created_at)}:{members[0].pk}", members)
        for _, members in groups
    ]


# --- the run ------------------------------------------------------------------------------


class DreamRunResult(TypedDict):
    """What a dream pass reports (the reference's DreamerResult; schemas.DreamRunOutput
    documents it)."""

    proposalsCreated: int
    clustersScanned: int
    llmCalls: int
    skipped: list[SkippedCluster]
    durationMs: int
    clusteringMode: str | None
    clusteringNote: str | None


@dataclass
class DreamResult:
    proposalsCreated: int = 0
    clustersScanned: int = 0
    skipped: list[SkippedCluster] = field(default_factory=list)
    clusteringMode: str | None = None
    clusteringNote: str | None = None

    def skip(self, reason: str, cluster: Cluster) -> None:
        self.skipped.append(
            {"reason": reason, "project": cluster.project, "clusterKey": cluster.key}
        )

    def as_json(self, run: PassRun) -> DreamRunResult:
        return {
            "proposalsCreated": self.proposalsCreated,
            "clustersScanned": self.clustersScanned,
            "llmCalls": run.budget.used,
            "skipped": self.skipped,
            "durationMs": run.duration_ms(),
            "clusteringMode": self.clusteringMode,
            "clusteringNote": self.clusteringNote,
        }


def episodic_candidates(project: str | None, window_days: int) -> dict[str, list[Entity]]:
    """Episodic, active, unpinned memories written in the window, per project."""
    since = timezone.now() - timedelta(days=window_days)
    entities = [
        e
        for e in Entity.objects.filter(
            status=Status.ACTIVE, type__in=EPISODIC_TYPES, created_at__gte=since
        ).order_by("created_at", "id")
        if not is_pinned(e)
    ]
    project_of = projects_of([e.pk for e in entities])
    groups: dict[str, list[Entity]] = {}
    for e in entities:
        p = project_of[e.pk]
        if project is None or p == project:
            groups.setdefault(p, []).append(e)
    return groups


def dream_run(
    *,
    project: str | None = None,
    window_days: int = 14,
    max_llm_calls: int = 5,
    validate: bool = False,
    dry_run: bool = False,
) -> DreamRunResult:
    """One dream pass; returns the reference's DreamerResult. Raises LLMNotConfigured (from
    the LLM layer) when a cluster needs a digest and no provider is configured."""
    run = pass_start(max_llm_calls=max_llm_calls, dry_run=dry_run)
    result = DreamResult()
    groups = episodic_candidates(normalise_project(project), window_days)
    all_ids = [e.pk for members in groups.values() for e in members]
    vecs = live_vectors(all_ids)
    clusters: list[Cluster] = []
    if vecs:
        result.clusteringMode = "semantic"
        missing = [e for members in groups.values() for e in members if e.pk not in vecs]
        result.clusteringNote = (
            "Grouped by embedding distance."
            if not missing
            else f"Grouped by embedding distance; {len(missing)} memories had no embedding "
            f"and were left out: {', '.join(e.name for e in missing[:10])}"
            + (", …" if len(missing) > 10 else "")
            + "."
        )
        for p, members in sorted(groups.items()):
            with_vector = [e for e in members if e.pk in vecs]
            clusters.extend(semantic_clusters(p, with_vector, vecs))
    else:
        result.clusteringMode = "calendar"
        result.clusteringNote = (
            "No memory in scope has an embedding, so memories were grouped by ISO week; "
            "a week can mix unrelated work."
        )
        for p, members in sorted(groups.items()):
            clusters.extend(calendar_clusters(p, members))

    for cluster in clusters:
        result.clustersScanned += 1
        _dream_cluster(cluster, result, run, validate=validate, dry_run=dry_run)
    return result.as_json(run)


def _dream_cluster(
    cluster: Cluster, result: DreamResult, run: PassRun, *, validate: bool, dry_run: bool
) -> None:
    size = len(cluster.entities)
    if size < MIN_CLUSTER:
        result.skip(f"cluster too small ({size} memories; at least {MIN_CLUSTER})", cluster)
        return
    members = cluster.entities[:MAX_CLUSTER]
    source_ids = [e.pk for e in members]
    blocking = proposal_for_sources(ProposalKind.DIGEST, source_ids)
    if blocking is not None:
        result.skip(_blocked_reason(blocking), cluster)
        return
    if dry_run:
        result.skip("dry run: no LLM call made", cluster)
        return
    needed = 2 if validate else 1
    if run.budget.left() < needed:
        result.skip("LLM call budget exhausted (maxLlmCalls)", cluster)
        return
    memories = load_memories(members)
    system, prompt = prompts.digest_prompt(cluster.project, cluster.key, memories, run.language)
    try:
        reply = run.budget.call(
            LLMRequest(flow="dreamer", system=system, prompt=prompt, project=cluster.project)
        )
        digest = prompts.parse_digest(reply.text)
    except LLMUnavailable as exc:
        result.skip(f"LLM unavailable ({exc.error_class})", cluster)
        return
    except prompts.Unparseable as exc:
        result.skip(f"unparseable LLM reply: {exc}", cluster)
        return

    proposed: dict[str, Any] = {
        "name": digest_name(digest.name, cluster),
        "type": DIGEST_TYPE,
        "title": digest.title,
        "observations": digest.observations,
        "tags": [f"{PROJECT_TAG_PREFIX}{cluster.project}"] if cluster.project else [],
    }
    if validate:
        verdict = validate_digest(
            digest, memories, call=run.budget.call, language=run.language, project=cluster.project
        )
        proposed["validation"] = verdict.verdict
        if verdict.verdict == "reject":
            reasons = "; ".join(w["reason"] for w in verdict.warnings if w.get("reason"))
            result.skip(
                f"validator rejected the digest{': ' + reasons if reasons else ''}", cluster
            )
            return
        if verdict.verdict == "soften":
            proposed["validation_warnings"] = verdict.warnings
    proposal, created = proposal_stage(
        kind=ProposalKind.DIGEST,
        project=cluster.project,
        cluster_key=cluster.key,
        source_ids=source_ids,
        proposed=proposed,
        llm_model=reply.model,
        prompt_version=prompts.DIGEST_PROMPT_VERSION,
    )
    if created:
        result.proposalsCreated += 1
    else:  # a review happened while the model wrote
        result.skip(_blocked_reason(proposal), cluster)


def _blocked_reason(proposal: Proposal) -> str:
    if proposal.status == ProposalStatus.REJECTED:
        return (
            f"a digest of these memories was rejected (proposal {proposal.pk}) and none of "
            "them has changed since"
        )
    return f"a digest of these memories is already pending review (proposal {proposal.pk})"


def digest_name(suggested: str, cluster: Cluster) -> str:
    base = prompts.slug(suggested, "")
    if not base:
        base = prompts.slug(f"{cluster.project} {cluster.key}", "dream")
    return base if base.startswith("digest-") else f"digest-{base}"
