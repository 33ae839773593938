"""Reads of the dream workflow: proposal listings and details (the reference's shapes), the
source memories beside a proposal for review, whether a cluster is worth proposing, task runs,
and the summary `memesh status` shows (`dream_status`)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import cast

from django.db.models import Count
from django.utils import timezone

from core.errors import InvalidParameter, NotFound
from graph.models import Entity, Observation, Status, Tag
from graph.ops.kit.trust.rules import facets_derived
from graph.ops.kit.trust.view import entity_trust, entity_unconfirmed
from proposals.models import (
    DREAM_RUN_KIND,
    Proposal,
    ProposalKind,
    ProposalStatus,
    TaskRun,
    TaskStatus,
)
from proposals.results import (
    AcceptTrust,
    DreamRunSummary,
    DreamStatus,
    ProposalKindName,
    ProposalListEntry,
    ProposalStatusName,
    ProposalView,
    SourceMemory,
    TaskRunView,
    TaskStatusName,
)
from proposals.source_state import SourceView, state_hash

# The audit row of a person's reject (proposals/decisions.py writes it; an accept refused
# because the sources are gone is `accept / refused`, never this).
PERSON_REJECT = {"reviews__action": "reject", "reviews__outcome": "rejected"}

STATUS_ALL = "all"
STATUS_FILTERS = (*ProposalStatus.values, STATUS_ALL)
PREVIEW_OBSERVATIONS = 3
PREVIEW_CHARS = 200
# TaskRun kinds of the dream flows (dream/tasks.py: dream_run, dream_patterns,
# dream_conflicts); read by prefix so this module need not import Celery with the tasks.
DREAM_KIND_PREFIX = "dream_"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _proposed_name(proposal: Proposal) -> str | None:
    """The digest/pattern name; a relation proposal reads as `from -relation-> to`."""
    proposed = proposal.proposed or {}
    if proposal.kind == ProposalKind.RELATION:
        return f"{proposed.get('from')} -{proposed.get('relation')}-> {proposed.get('to')}"
    name = proposed.get("title" if proposal.kind == ProposalKind.IMPROVEMENT else "name")
    return name if isinstance(name, str) else None


def _preview(proposal: Proposal) -> list[str]:
    proposed = proposal.proposed or {}
    if proposal.kind == ProposalKind.RELATION:
        lines = [str(proposed.get("rationale", ""))]
    elif proposal.kind == ProposalKind.IMPROVEMENT:
        lines = [str(proposed.get("description", ""))]
    else:
        lines = [str(o) for o in proposed.get("observations", [])]
    return [line[:PREVIEW_CHARS] for line in lines[:PREVIEW_OBSERVATIONS] if line]


def proposal_list(status: str = ProposalStatus.PENDING) -> list[ProposalListEntry]:
    """Proposals with this status (or `all`), newest first, as GET /v1/dream/proposals lists."""
    if status not in STATUS_FILTERS:
        raise InvalidParameter(
            f"status must be one of {', '.join(STATUS_FILTERS)} (got {status!r})", field="status"
        )
    qs = Proposal.objects.all()
    if status != STATUS_ALL:
        qs = qs.filter(status=status)
    return [
        {
            "id": p.pk,
            "project": p.project,
            "cluster_key": p.cluster_key,
            "source_count": len(p.source_ids or []),
            "digest_name": _proposed_name(p),
            "digest_observations_preview": _preview(p),
            "status": cast(ProposalStatusName, p.status),
            "created_at": p.created_at.isoformat(),
            "kind": cast(ProposalKindName, p.kind),
        }
        for p in qs
    ]


def proposal_get(proposal_id: int) -> Proposal:
    proposal = Proposal.objects.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal with id {proposal_id}", field="id")
    return proposal


def proposal_detail(proposal_id: int) -> ProposalView:
    """One proposal in full (GET /v1/dream/proposals/<id>; `memesh dream show`)."""
    p = proposal_get(proposal_id)
    return {
        "id": p.pk,
        "kind": cast(ProposalKindName, p.kind),
        "project": p.project,
        "cluster_key": p.cluster_key,
        "source_ids": list(p.source_ids or []),
        "proposed_digest": p.proposed or {},
        "llm_model": p.llm_model,
        "prompt_version": p.prompt_version,
        "status": cast(ProposalStatusName, p.status),
        "reason": p.reason or None,
        "created_at": p.created_at.isoformat(),
        "reviewed_at": _iso(p.reviewed_at),
    }


def proposal_sources(proposal: Proposal) -> list[SourceMemory]:
    """The memories a proposal was made from, in full, in source order, for side-by-side
    review: {id, name, type, title, observations, tags, status, trust}. `trust` is the trust
    block recall shows, plus `unconfirmed` (the briefing's words for a hypothesis or a stale
    fact, or None). A source deleted since is listed with status `missing`."""
    now = timezone.now()
    ids = [int(i) for i in proposal.source_ids or []]
    entities = {e.pk: e for e in Entity.objects.filter(pk__in=ids)}
    observations: dict[int, list[str]] = {}
    for entity_id, text in Observation.objects.filter(entity_id__in=ids).values_list(
        "entity_id", "text"
    ):
        observations.setdefault(entity_id, []).append(text)
    tags: dict[int, list[str]] = {}
    for entity_id, name in Tag.objects.filter(entity_id__in=ids).values_list("entity_id", "name"):
        tags.setdefault(entity_id, []).append(name)
    out: list[SourceMemory] = []
    for entity_id in ids:
        entity = entities.get(entity_id)
        if entity is None:
            out.append(
                {
                    "id": entity_id,
                    "name": None,
                    "type": None,
                    "title": None,
                    "observations": [],
                    "tags": [],
                    "status": "missing",
                    "trust": None,
                }
            )
            continue
        trust = {
            **entity_trust(entity, now).model_dump(),
            "unconfirmed": entity_unconfirmed(entity, now),
        }
        out.append(
            {
                "id": entity_id,
                "name": entity.name,
                "type": entity.type,
                "title": entity.title,
                "observations": observations.get(entity_id, []),
                "tags": tags.get(entity_id, []),
                "status": entity.status,
                "trust": trust,
            }
        )
    return out


def proposal_accept_preview(proposal: Proposal) -> AcceptTrust | None:
    """The trust an accept would give what the proposal creates (digest, pattern): always a
    hypothesis derived from the sources still active (graph.ops.kit.trust.rules.facets_derived);
    None for a relation or an improvement proposal, which creates no memory."""
    if proposal.kind in (ProposalKind.RELATION, ProposalKind.IMPROVEMENT):
        return None
    ids = [int(i) for i in proposal.source_ids or []]
    found = {e.pk: e for e in Entity.objects.filter(pk__in=ids, status=Status.ACTIVE)}
    facets = facets_derived([found[i] for i in ids if i in found], type_=str(proposal.kind))
    return {
        "status": facets.trust,
        "confidence": facets.confidence,
        "hop_count": facets.hop_count,
        "invalidation_tag": facets.invalidation_tag or None,
        "invalidation_conditions": facets.invalidation_condition.splitlines(),
    }


def sources_state(source_ids: list[int]) -> str:
    """The hash of these sources as they are now (proposals/source_state.py)."""
    ids = sorted({int(i) for i in source_ids})
    observations: dict[int, list[str]] = {}
    for entity_id, text in (
        Observation.objects.filter(entity_id__in=ids)
        .order_by("id")
        .values_list("entity_id", "text")
    ):
        observations.setdefault(entity_id, []).append(text)
    found = [
        SourceView(pk, name, type_, title, observations.get(pk, []))
        for pk, name, type_, title in Entity.objects.filter(pk__in=ids).values_list(
            "pk", "name", "type", "title"
        )
    ]
    return state_hash(ids, found)


def rejected_for_state(kind: str, state: str) -> Proposal | None:
    """A proposal of this kind a person rejected while its sources were in this state."""
    return (
        Proposal.objects.filter(kind=kind, status=ProposalStatus.REJECTED, sources_state=state)
        .filter(**PERSON_REJECT)
        .first()
    )


def rejected_with_fingerprint(fingerprint: str) -> Proposal | None:
    """A proposal with exactly this content a person rejected (for proposals without sources,
    whose source state says nothing)."""
    return (
        Proposal.objects.filter(fingerprint=fingerprint, status=ProposalStatus.REJECTED)
        .filter(**PERSON_REJECT)
        .first()
    )


def proposal_for_sources(kind: str, source_ids: list[int]) -> Proposal | None:
    """A proposal that makes a new one of this kind over these sources pointless (checked
    before paying for an LLM call): one pending over exactly these sources — the cluster is
    not proposed again while one waits for review — else one a person rejected while these
    sources were as they are now."""
    wanted = sorted(int(i) for i in source_ids)
    for proposal in Proposal.objects.filter(kind=kind, status=ProposalStatus.PENDING):
        if sorted(int(i) for i in proposal.source_ids or []) == wanted:
            return proposal
    return rejected_for_state(kind, sources_state(wanted))


def task_run_detail(task_id: str | uuid.UUID) -> TaskRunView:
    """A task run as GET /v1/tasks/<id> reports it."""
    run = TaskRun.objects.filter(pk=task_id).first()
    if run is None:
        raise NotFound(f"No task with id {task_id}", field="id")
    return {
        "id": str(run.pk),
        "kind": run.kind,
        "status": cast(TaskStatusName, run.status),
        "params": run.params or {},
        "result": run.result,
        "errorCode": run.error_code or None,
        "error": run.error or None,
        "createdAt": run.created_at.isoformat(),
        "startedAt": _iso(run.started_at),
        "finishedAt": _iso(run.finished_at),
    }


def dream_status() -> DreamStatus:
    """What `memesh status` says of the dream workflow and the task queue: task runs waiting
    for a worker or on one (any kind: a reindex too), proposals waiting for review, the latest
    dream task run (with its trigger), and when a proposal was last staged. A synchronous
    `memesh dream run` records no task run: the proposals it staged are its trace."""
    waiting = dict(
        TaskRun.objects.filter(status__in=[TaskStatus.QUEUED, TaskStatus.RUNNING])
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    last = (
        TaskRun.objects.filter(kind__startswith=DREAM_KIND_PREFIX).order_by("-created_at").first()
    )
    staged = Proposal.objects.order_by("-created_at", "-id").values_list("created_at", flat=True)
    return {
        "tasks": {
            "queued": waiting.get(TaskStatus.QUEUED, 0),
            "running": waiting.get(TaskStatus.RUNNING, 0),
        },
        "proposalsPending": Proposal.objects.filter(status=ProposalStatus.PENDING).count(),
        "lastDream": None if last is None else _dream_run(last),
        "lastProposalAt": _iso(staged.first()),
    }


def _dream_run(run: TaskRun) -> DreamRunSummary:
    result = run.result if isinstance(run.result, dict) else {}
    return {
        "id": str(run.pk),
        "kind": run.kind,
        "status": run.status,
        # Who queued it: "stop-hook" or "schedule" (dream/due.py); None for a run a
        # client asked for (POST /v1/dream/run {"async": true}).
        "trigger": (run.params or {}).get("trigger"),
        "errorCode": run.error_code or None,
        "proposalsCreated": result.get("proposalsCreated"),
        "createdAt": run.created_at.isoformat(),
        "finishedAt": _iso(run.finished_at),
    }


def automatic_dream_runs(limit: int = 5) -> list[DreamRunSummary]:
    """The latest dream runs the Stop hook or the schedule queued, newest first."""
    runs = TaskRun.objects.filter(kind=DREAM_RUN_KIND, params__has_key="trigger").order_by(
        "-created_at"
    )[:limit]
    return [_dream_run(run) for run in runs]
