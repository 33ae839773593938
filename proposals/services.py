"""Writes of the dream workflow: staging proposals, accepting and rejecting them, task runs.

Accept and reject claim the proposal with a conditional `UPDATE … WHERE status='pending'`
and check that one row changed (as healthchecks' sendalerts claims a flip), so two reviewers
racing — or one double-clicking — cannot apply a proposal twice. The whole accept is one
transaction: the graph writes (through graph's write services, which keep the indexes in
step) and the status change commit or roll back together. Every accept and reject, also a
refused one, leaves a ProposalReview row saying who did it and from where.

No confidence laundering (docs/trust.md): what an accept creates is a hypothesis derived from
the proposal's sources (graph.ops.kit.trust.rules.facets_derived: their minimum confidence, the
union of their invalidation tags and conditions, one hop further, never observed). Accepting never
promotes; only `observe` with a source does.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import InvalidInput, NotFound, OperationFailed
from graph.models import Entity, Relation, Status
from graph.ops.forget import ForgetInput, entity_forget
from graph.ops.kit.trust.rules import facets_derived
from graph.ops.remember.schema import RelationInput, RememberInput
from graph.ops.remember.service import entity_remember
from proposals.errors import HumanReviewOnly
from proposals.models import (
    Proposal,
    ProposalKind,
    ProposalReview,
    ProposalStatus,
    ReviewChannel,
    TaskRun,
    TaskStatus,
)
from proposals.schemas import MAX_REASON_CHARS
from proposals.selectors import rejected_for_state, rejected_with_fingerprint, sources_state

# Provenance of what an accept writes: the dream pipeline made it, a person let it in.
SOURCE_HOST = "dream"
RELATION_SUMMARIZES = "summarizes"
RELATION_EVIDENCE_FOR = "evidence_for"
RELATION_SUPERSEDES = "supersedes"
ACTION_ACCEPT = "accept"
ACTION_REJECT = "reject"
OUTCOME_APPLIED = "applied"
OUTCOME_REJECTED = "rejected"
OUTCOME_REFUSED = "refused"


# --- staging ------------------------------------------------------------------------------


def proposal_fingerprint(kind: str, source_ids: list[int], proposed: dict[str, Any]) -> str:
    """sha256 of kind + sorted source ids + the proposed content (canonical JSON)."""
    body = json.dumps(
        [kind, sorted(int(i) for i in source_ids), proposed], sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(body.encode()).hexdigest()


@transaction.atomic
def proposal_stage(
    *,
    kind: str,
    project: str,
    cluster_key: str,
    source_ids: list[int],
    proposed: dict[str, Any],
    llm_model: str = "",
    prompt_version: str = "",
) -> tuple[Proposal, bool]:
    """Stage a pending proposal (created True). Instead (created False): an identical pending
    one is returned, or one of this kind a person rejected while these sources were as they
    are now — a rejection is not undone by asking the model again. A proposal without sources
    (a mined memory) has no source state: the same content a person rejected is its match."""
    if kind not in ProposalKind.values:
        raise InvalidInput(f"unknown proposal kind {kind!r}", field="kind")
    fingerprint = proposal_fingerprint(kind, source_ids, proposed)
    existing = Proposal.objects.filter(
        fingerprint=fingerprint, status=ProposalStatus.PENDING
    ).first()
    if existing is not None:
        return existing, False
    state = sources_state(source_ids)
    # An improvement's sources are its evidence: another improvement may cite the same
    # memories, so only the same content a person rejected is its match.
    by_state = bool(source_ids) and kind != ProposalKind.IMPROVEMENT
    rejected = (
        rejected_for_state(kind, state) if by_state else rejected_with_fingerprint(fingerprint)
    )
    if rejected is not None:
        return rejected, False
    proposal = Proposal.objects.create(
        kind=kind,
        project=project,
        cluster_key=cluster_key[:255],
        fingerprint=fingerprint,
        source_ids=[int(i) for i in source_ids],
        sources_state=state,
        proposed=proposed,
        llm_model=llm_model[:200],
        prompt_version=prompt_version[:50],
    )
    return proposal, True


# --- review -------------------------------------------------------------------------------


class _Unclaimable(Exception):
    """The proposal can no longer claim any source: it is resolved as rejected."""


@dataclass(frozen=True)
class _Review:
    """Who reviews a proposal, how, and with which action: every outcome of that review is
    recorded in the audit trail under it."""

    proposal_id: int
    action: str
    channel: str
    reviewer: str
    origin: str

    def record(self, outcome: str, reason: str = "") -> None:
        ProposalReview.objects.create(
            proposal_id=self.proposal_id,
            action=self.action,
            outcome=outcome,
            channel=self.channel,
            reviewer=self.reviewer[:150],
            origin=self.origin[:255],
            reason=reason,
        )


def _check_channel(channel: str) -> None:
    if channel not in ReviewChannel.values:
        raise InvalidInput(
            f"channel must be one of {', '.join(ReviewChannel.values)} (got {channel!r})",
            field="channel",
        )


def _claim(proposal_id: int, to: str, reason: str = "") -> bool:
    """Flip pending -> `to`; True when this call did it (exactly one row changed)."""
    changed = Proposal.objects.filter(pk=proposal_id, status=ProposalStatus.PENDING).update(
        status=to, reviewed_at=timezone.now(), reason=reason
    )
    return changed == 1


def _person_only(proposal: Proposal, review: _Review) -> None:
    """An improvement is decided by a person, in the review page, the admin or the CLI — not
    over the REST API, which an agent can reach as well (docs/work-packages.md). The refused
    attempt is recorded like any refused review."""
    if proposal.kind != ProposalKind.IMPROVEMENT or review.channel != ReviewChannel.API:
        return
    with transaction.atomic():
        review.record(OUTCOME_REFUSED, "an improvement is reviewed by a person, not over the API")
    raise HumanReviewOnly(
        f"Improvement {proposal.pk} is accepted or rejected by a person at /review/ or with "
        "`memesh improvement accept|reject`, not over the API; nothing was changed"
    )


def _refuse(proposal: Proposal, review: _Review) -> OperationFailed:
    """Record a refused review (in its own transaction) and the error to raise."""
    with transaction.atomic():
        review.record(OUTCOME_REFUSED, f"proposal is {proposal.status}")
    return OperationFailed(
        f"Proposal {proposal.pk} is {proposal.status}, not pending; nothing was changed"
    )


def proposal_accept(
    proposal_id: int, *, channel: str, reviewer: str = "", origin: str = ""
) -> dict[str, Any]:
    """Apply a pending proposal (the reference's accept):

    - digest: creates the digest entity, a `summarizes` edge to each source it can still
      claim, and archives those sources (through graph.ops.forget.entity_forget, which
      cleans the indexes); source_ids are kept on the proposal.
    - pattern_emergent: creates the pattern entity and an `evidence_for` edge from each
      evidence memory still active; archives nothing.
    - relation: creates the relation between the two (still active) memories; `supersedes`
      archives the superseded one, as remember does.
    - memory (mined from a transcript): creates the memory; it has no sources.
    - improvement: records the acceptance only; nothing is written to the graph.

    A proposal that can no longer claim any source (all archived — summarised by another
    digest or forgotten — or deleted) raises OperationFailed and is left rejected; its audit
    row is a refused accept whose reason says so. Not pending (a double accept) raises
    OperationFailed and changes nothing. A missing id is NotFound.
    """
    _check_channel(channel)
    proposal = Proposal.objects.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal with id {proposal_id}", field="id")
    review = _Review(proposal.pk, ACTION_ACCEPT, channel, reviewer, origin)
    _person_only(proposal, review)
    result: dict[str, Any] | None = None
    try:
        with transaction.atomic():
            if _claim(proposal.pk, ProposalStatus.APPLIED):
                result = _APPLY[ProposalKind(proposal.kind)](proposal)
                review.record(OUTCOME_APPLIED)
    except _Unclaimable as exc:
        # The transaction rolled back (nothing applied); resolve the proposal as rejected. The
        # accept itself was refused, and the audit row says so: outcome `rejected` is kept for a
        # person's reject (the dreamer remembers those, proposals/selectors.py).
        reason = str(exc)
        with transaction.atomic():
            _claim(proposal.pk, ProposalStatus.REJECTED, reason)
            review.record(OUTCOME_REFUSED, f"{reason}; the proposal was marked rejected")
        raise OperationFailed(
            f"Proposal {proposal.pk} can no longer be applied ({reason}); it has been marked "
            "rejected"
        ) from None
    except OperationFailed as exc:
        # Rolled back and still pending: a person may reject it, or fix the graph and retry.
        with transaction.atomic():
            review.record(OUTCOME_REFUSED, exc.message[:MAX_REASON_CHARS])
        raise
    if result is None:
        proposal.refresh_from_db()
        raise _refuse(proposal, review)
    return result


def proposal_reject(
    proposal_id: int, *, reason: str = "", channel: str, reviewer: str = "", origin: str = ""
) -> dict[str, Any]:
    """Mark a pending proposal rejected, recording why; the source memories are untouched."""
    _check_channel(channel)
    reason = reason.strip()
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(
            f"reason: must be at most {MAX_REASON_CHARS} characters (got {len(reason)})",
            field="reason",
        )
    proposal = Proposal.objects.filter(pk=proposal_id).first()
    if proposal is None:
        raise NotFound(f"No proposal with id {proposal_id}", field="id")
    review = _Review(proposal.pk, ACTION_REJECT, channel, reviewer, origin)
    _person_only(proposal, review)
    with transaction.atomic():
        claimed = _claim(proposal.pk, ProposalStatus.REJECTED, reason)
        if claimed:
            review.record(OUTCOME_REJECTED, reason)
    if not claimed:
        proposal.refresh_from_db()
        raise _refuse(proposal, review)
    return {"id": proposal.pk, "status": ProposalStatus.REJECTED.value}


# --- applying each kind (inside accept's transaction) ----------------------------------------


def _active_sources(proposal: Proposal) -> list[Entity]:
    ids = [int(i) for i in proposal.source_ids or []]
    found = {e.pk: e for e in Entity.objects.filter(pk__in=ids, status=Status.ACTIVE)}
    return [found[i] for i in ids if i in found]


def _free_name(wanted: str) -> str:
    """`wanted`, or `wanted-2`, `-3`, … when taken: an accept never appends to an existing
    memory (names are unique across namespaces)."""
    name = wanted.strip()[:240] or "dream-proposal"
    candidate, n = name, 1
    while Entity.objects.filter(name=candidate).exists():
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def _create_entity(proposed: dict[str, Any], default_type: str, sources: list[Entity]) -> str:
    """Create the proposed entity as a hypothesis derived from `sources` (the module
    docstring's rule; a proposal with no source memories, such as one mined from a
    transcript, is a hypothesis at the default confidence)."""
    name = _free_name(str(proposed.get("name") or ""))
    observations = [str(o) for o in proposed.get("observations", []) if str(o).strip()]
    tags = [str(t) for t in proposed.get("tags", []) if str(t).strip()]
    title = proposed.get("title")
    try:
        data = RememberInput(
            name=name,
            type=str(proposed.get("type") or default_type),
            title=title if isinstance(title, str) and title.strip() else None,
            observations=observations,
            tags=tags,
        )
    except ValueError as exc:  # a proposal whose content cannot be stored
        raise OperationFailed(f"the proposed entity cannot be stored: {exc}") from None
    entity_remember(
        data=data, source_host=SOURCE_HOST, derived=facets_derived(sources, type_=data.type or "")
    )
    return name


def _link(from_id: int, to_id: int, type_: str) -> None:
    Relation.objects.get_or_create(
        from_entity_id=from_id,
        to_entity_id=to_id,
        type=type_,
        defaults={"created_at": timezone.now()},
    )


def _apply_digest(proposal: Proposal) -> dict[str, Any]:
    sources = _active_sources(proposal)
    claimed_elsewhere = set(
        Relation.objects.filter(to_entity__in=sources, type=RELATION_SUMMARIZES).values_list(
            "to_entity_id", flat=True
        )
    )
    sources = [s for s in sources if s.pk not in claimed_elsewhere]
    if not sources:
        raise _Unclaimable("every source is already summarised by another digest, archived or gone")
    name = _create_entity(proposal.proposed or {}, "digest", sources)
    digest_id = Entity.objects.id_for_name(name)
    assert digest_id is not None
    for source in sources:
        _link(digest_id, source.pk, RELATION_SUMMARIZES)
        entity_forget(
            data=ForgetInput(
                name=source.name,
                reason=f'summarised by digest "{name}" (proposal {proposal.pk})',
            )
        )
    return {
        "proposalId": proposal.pk,
        "digestEntityName": name,
        "sourcesArchived": len(sources),
        "sourcesLinked": len(sources),
        "kind": proposal.kind,
    }


def _apply_pattern(proposal: Proposal) -> dict[str, Any]:
    sources = _active_sources(proposal)
    if not sources:
        raise _Unclaimable("every evidence memory is archived or gone")
    name = _create_entity(proposal.proposed or {}, "pattern_emergent", sources)
    pattern_id = Entity.objects.id_for_name(name)
    assert pattern_id is not None
    for source in sources:
        _link(source.pk, pattern_id, RELATION_EVIDENCE_FOR)
    return {
        "proposalId": proposal.pk,
        "digestEntityName": name,
        "sourcesArchived": 0,
        "sourcesLinked": len(sources),
        "kind": proposal.kind,
    }


def _apply_relation(proposal: Proposal) -> dict[str, Any]:
    proposed = proposal.proposed or {}
    from_name, to_name = str(proposed.get("from", "")), str(proposed.get("to", ""))
    relation = str(proposed.get("relation", ""))
    active = dict(
        Entity.objects.filter(name__in=[from_name, to_name], status=Status.ACTIVE).values_list(
            "name", "type"
        )
    )
    if from_name not in active or to_name not in active or from_name == to_name:
        raise _Unclaimable(
            f'both "{from_name}" and "{to_name}" must still be active to relate them'
        )
    try:
        data = RememberInput(
            name=from_name,
            type=active[from_name],  # an existing entity keeps its type; remember needs one
            relations=[RelationInput(to=to_name, type=relation)],
        )
    except ValueError as exc:
        raise OperationFailed(f"the proposed relation cannot be stored: {exc}") from None
    # remember's own relate path: a `supersedes` archives the target and cleans its indexes.
    out = entity_remember(data=data, source_host=SOURCE_HOST)
    return {
        "proposalId": proposal.pk,
        "digestEntityName": None,
        "sourcesArchived": len(out.superseded or []),
        "sourcesLinked": 2,
        "kind": proposal.kind,
    }


def _apply_memory(proposal: Proposal) -> dict[str, Any]:
    # Mined from a transcript: no source memories, so a hypothesis at the default confidence,
    # one hop out (facets_derived) — the model's reading of a conversation is not an
    # observation against a source.
    name = _create_entity(proposal.proposed or {}, "fact", sources=[])
    return {
        "proposalId": proposal.pk,
        "digestEntityName": name,
        "sourcesArchived": 0,
        "sourcesLinked": 0,
        "kind": proposal.kind,
    }


def _apply_improvement(proposal: Proposal) -> dict[str, Any]:
    # A person agreeing with a product improvement: recorded on the proposal and its audit
    # row; the memories cited as evidence are left as they are.
    return {
        "proposalId": proposal.pk,
        "digestEntityName": None,
        "sourcesArchived": 0,
        "sourcesLinked": 0,
        "kind": proposal.kind,
    }


_APPLY: dict[ProposalKind, Callable[[Proposal], dict[str, Any]]] = {
    ProposalKind.DIGEST: _apply_digest,
    ProposalKind.PATTERN_EMERGENT: _apply_pattern,
    ProposalKind.RELATION: _apply_relation,
    ProposalKind.MEMORY: _apply_memory,
    ProposalKind.IMPROVEMENT: _apply_improvement,
}


# --- task runs --------------------------------------------------------------------------------


def task_run_execute(task_id: str, body: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Run a queued task's body, recording running -> succeeded | failed on its TaskRun.

    A task already started (a redelivered message) is not run twice."""
    from core.errors import MemeshError

    started = TaskRun.objects.filter(pk=uuid.UUID(task_id), status=TaskStatus.QUEUED).update(
        status=TaskStatus.RUNNING, started_at=timezone.now()
    )
    if started != 1:
        return
    run = TaskRun.objects.get(pk=task_id)
    try:
        result = body(dict(run.params or {}))
    except MemeshError as exc:
        _finish(task_id, TaskStatus.FAILED, error_code=exc.error_code, error=exc.message)
        return
    except Exception as exc:
        _finish(task_id, TaskStatus.FAILED, error_code="server.internal", error=_one_line(exc))
        raise
    _finish(task_id, TaskStatus.SUCCEEDED, result=result)


def _one_line(exc: Exception) -> str:
    return re.sub(r"\s+", " ", f"{type(exc).__name__}: {exc}")[:500]


def _finish(
    task_id: str,
    status: str,
    *,
    result: dict[str, Any] | None = None,
    error_code: str = "",
    error: str = "",
) -> None:
    TaskRun.objects.filter(pk=task_id).update(
        status=status,
        result=result,
        error_code=error_code,
        error=error,
        finished_at=timezone.now(),
    )
