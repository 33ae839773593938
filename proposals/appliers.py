"""What accepting a proposal writes to the graph, one function per kind. Each runs inside the
accept's transaction (proposals/decisions.py), so its graph writes and the status change commit
or roll back together; the writes go through graph's write services, which keep the indexes
in step.

No confidence laundering (docs/trust.md): what an accept creates is a hypothesis derived from
the proposal's sources (graph.ops.kit.trust.rules.facets_derived: their minimum confidence, the
union of their invalidation tags and conditions, one hop further, never observed). Accepting
never promotes; only `observe` with a source does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from django.utils import timezone

from core.errors import OperationFailed
from graph.models import Entity, Relation, Status
from graph.ops.forget import ForgetInput, entity_forget
from graph.ops.kit.trust.rules import facets_derived
from graph.ops.remember.schema import RelationInput, RememberInput
from graph.ops.remember.service import entity_remember
from proposals.models import Proposal, ProposalKind
from proposals.results import AcceptResult, ProposalKindName

# Provenance of what an accept writes: the dream pipeline made it, a person let it in.
SOURCE_HOST = "dream"
RELATION_SUMMARIZES = "summarizes"
RELATION_EVIDENCE_FOR = "evidence_for"


class Unclaimable(Exception):
    """The proposal can no longer claim any source: the accept resolves it as rejected."""


def proposal_apply(proposal: Proposal) -> AcceptResult:
    """Write what a claimed proposal proposes (raises Unclaimable, or OperationFailed when its
    content cannot be stored)."""
    return _APPLIERS[ProposalKind(proposal.kind)](proposal)


def digest_apply(proposal: Proposal) -> AcceptResult:
    """The digest entity, a `summarizes` edge to each source it can still claim (one no
    other digest summarises), and those sources archived."""
    sources = _active_sources(proposal)
    claimed_elsewhere = set(
        Relation.objects.filter(to_entity__in=sources, type=RELATION_SUMMARIZES).values_list(
            "to_entity_id", flat=True
        )
    )
    sources = [s for s in sources if s.pk not in claimed_elsewhere]
    if not sources:
        raise Unclaimable("every source is already summarised by another digest, archived or gone")
    name, digest_id = _create_entity(proposal.proposed or {}, "digest", sources)
    for source in sources:
        _link(digest_id, source.pk, RELATION_SUMMARIZES)
        entity_forget(
            data=ForgetInput(
                name=source.name,
                reason=f'summarised by digest "{name}" (proposal {proposal.pk})',
            )
        )
    return _result(proposal, name, archived=len(sources), linked=len(sources))


def pattern_apply(proposal: Proposal) -> AcceptResult:
    """The pattern entity and an `evidence_for` edge from each evidence memory still active;
    nothing is archived."""
    sources = _active_sources(proposal)
    if not sources:
        raise Unclaimable("every evidence memory is archived or gone")
    name, pattern_id = _create_entity(proposal.proposed or {}, "pattern_emergent", sources)
    for source in sources:
        _link(source.pk, pattern_id, RELATION_EVIDENCE_FOR)
    return _result(proposal, name, archived=0, linked=len(sources))


def relation_apply(proposal: Proposal) -> AcceptResult:
    """The relation between the two memories, both still active; `supersedes` archives the
    superseded one, as remember does."""
    proposed = proposal.proposed or {}
    from_name, to_name = str(proposed.get("from", "")), str(proposed.get("to", ""))
    relation = str(proposed.get("relation", ""))
    active = dict(
        Entity.objects.filter(name__in=[from_name, to_name], status=Status.ACTIVE).values_list(
            "name", "type"
        )
    )
    if from_name not in active or to_name not in active or from_name == to_name:
        raise Unclaimable(f'both "{from_name}" and "{to_name}" must still be active to relate them')
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
    return _result(proposal, None, archived=len(out.superseded or []), linked=2)


def memory_apply(proposal: Proposal) -> AcceptResult:
    """The memory mined from a transcript. It has no source memories, so it is a hypothesis
    at the default confidence, one hop out (facets_derived): the model's reading of a
    conversation is not an observation against a source."""
    name, _ = _create_entity(proposal.proposed or {}, "fact", sources=[])
    return _result(proposal, name, archived=0, linked=0)


def improvement_apply(proposal: Proposal) -> AcceptResult:
    """A person agreeing with a product improvement: recorded on the proposal and its audit
    row only; the memories cited as evidence are left as they are."""
    return _result(proposal, None, archived=0, linked=0)


_APPLIERS: dict[ProposalKind, Callable[[Proposal], AcceptResult]] = {
    ProposalKind.DIGEST: digest_apply,
    ProposalKind.PATTERN_EMERGENT: pattern_apply,
    ProposalKind.RELATION: relation_apply,
    ProposalKind.MEMORY: memory_apply,
    ProposalKind.IMPROVEMENT: improvement_apply,
}


def _result(proposal: Proposal, created: str | None, *, archived: int, linked: int) -> AcceptResult:
    return {
        "proposalId": proposal.pk,
        "digestEntityName": created,
        "sourcesArchived": archived,
        "sourcesLinked": linked,
        "kind": cast(ProposalKindName, proposal.kind),
    }


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


def _create_entity(
    proposed: dict[str, Any], default_type: str, sources: list[Entity]
) -> tuple[str, int]:
    """Create the proposed entity as a hypothesis derived from `sources` (the module
    docstring's rule; a proposal with no source memories, such as one mined from a
    transcript, is a hypothesis at the default confidence); its name and id."""
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
    entity_id = Entity.objects.id_for_name(name)
    assert entity_id is not None
    return name, entity_id


def _link(from_id: int, to_id: int, type_: str) -> None:
    Relation.objects.get_or_create(
        from_entity_id=from_id,
        to_entity_id=to_id,
        type=type_,
        defaults={"created_at": timezone.now()},
    )
