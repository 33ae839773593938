"""Staging a proposal: what a dream flow hands over for a person to review.

A proposal is identified by its fingerprint (kind, sources and content). Staging the same
content again while it is pending returns the pending one; content a person rejected is not
staged again while its sources are as they were (proposals/source_state.py): a rejection is not
undone by asking the model again.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import transaction

from core.errors import InvalidInput
from proposals.models import Proposal, ProposalKind, ProposalStatus
from proposals.selectors import rejected_for_state, rejected_with_fingerprint, sources_state


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
