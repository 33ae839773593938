"""The demo tour (POST /v1/demo/seed and /v1/demo/reset; `memesh demo [--reset]`): a small,
realistic graph (dream/demo_tour.py) that shows the dashboard at work before the user has
memories of their own, and removes itself without a trace.

- Seed writes each tour entity through remember (graph/ops/remember/service.py: indexes in
  step, relations and `why` as any write's), then marks it `metadata.demo = true` and
  `metadata.untrusted = true` (a briefing never presents the tour as the user's knowledge)
  and dates it (graph.ops.kit.writes.entity_annotate), and stages the tour's one pending proposal
  through proposal_stage. It is idempotent: an entity already there is left as it is (a second seed
  inserts nothing; after a partial reset only what is missing), and the proposal is staged
  once — not again while any demo proposal exists, whatever its status. A tour name that a
  memory of the user's holds (no `demo` mark) is skipped, with every relation and the
  proposal touching it: a seed never writes to a memory of the user's.
- Reset deletes exactly the entities marked `metadata.demo = true` — whatever was written to
  them since, and with every relation touching them — through graph.ops.kit.writes.entities_delete
  (keyword and vector indexes in the same transaction), and the demo proposals with their
  review records. Nothing else is touched.
Each is one transaction: all or nothing. The counts say how many demo entities were written
(`inserted`) or deleted (`removed`).

This lives in the dream app, not in graph/ops/, because the tour includes a proposal and graph
never imports proposals (DESIGN §2); api/operations.py serves these operations beside graph's.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import Field

from dream.demo_tour import DEMO_PROJECT, PROPOSAL, PROPOSAL_FROM, PROPOSAL_TO, TOUR
from graph.models import Entity
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.ops.kit.writes import entities_delete, entity_annotate
from graph.ops.remember.schema import RelationInput, RememberInput
from graph.ops.remember.service import entity_remember
from proposals.models import Proposal, ProposalKind
from proposals.staging import proposal_stage

DEMO_KEY = "demo"  # metadata.demo = true marks a tour entity
DEMO_CLUSTER_KEY = "demo:tour"  # marks the tour's proposal
DEMO_PROMPT_VERSION = "demo"  # staged by the tour, not by a model


class DemoInput(StrictInput):
    pass


class DemoOutput(Output):
    inserted: int = Field(description="Demo entities written by this call.")
    removed: int = Field(description="Demo entities deleted by this call.")


def demo_entity_ids() -> list[int]:
    """Every entity marked `metadata.demo = true` (JSON true: not 1, not "true")."""
    return Entity.objects.ids_marked(DEMO_KEY)


def _is_demo(metadata: Any) -> bool:
    return isinstance(metadata, dict) and metadata.get(DEMO_KEY) is True


@transaction.atomic
def demo_seed(*, source_host: str, now: datetime | None = None) -> DemoOutput:
    """Write the tour entities that are missing and stage its proposal (the module says how)."""
    now = now or timezone.now()
    present = dict(
        Entity.objects.filter(name__in=[e.name for e in TOUR]).values_list("name", "metadata")
    )
    users = {name for name, metadata in present.items() if not _is_demo(metadata)}
    inserted = 0
    for entry in TOUR:
        if entry.name in present:
            continue
        stored = entity_remember(
            data=RememberInput(
                name=entry.name,
                type=entry.type,
                title=entry.title,
                observations=list(entry.observations),
                tags=list(entry.tags),
                relations=[
                    RelationInput(to=to, type=type_)
                    for type_, to in entry.relations
                    if to not in users
                ],
                why=entry.why,
                project=DEMO_PROJECT,
            ),
            source_host=source_host,
        )
        entity_annotate(
            entity_id=stored.entityId,
            # untrusted: the tour is fiction, never the user's knowledge, so it is never placed
            # in an agent's context unasked (briefings skip untrusted memories, DESIGN §8).
            metadata={DEMO_KEY: True, "untrusted": True, **entry.metadata},
            written_at=now - timedelta(days=entry.days_ago),
        )
        inserted += 1
    _stage_proposal(users)
    return DemoOutput(inserted=inserted, removed=0)


def _stage_proposal(users: set[str]) -> None:
    if Proposal.objects.filter(cluster_key=DEMO_CLUSTER_KEY).exists():
        return
    if users & {PROPOSAL_FROM, PROPOSAL_TO}:
        return
    ids = dict(
        Entity.objects.filter(name__in=[PROPOSAL_FROM, PROPOSAL_TO]).values_list("name", "pk")
    )
    proposal_stage(
        kind=ProposalKind.RELATION,
        project=DEMO_PROJECT,
        cluster_key=DEMO_CLUSTER_KEY,
        source_ids=sorted(ids.values()),
        proposed=dict(PROPOSAL),
        prompt_version=DEMO_PROMPT_VERSION,
    )


@transaction.atomic
def demo_reset() -> DemoOutput:
    """Delete every demo entity and the demo proposals (the module says how)."""
    Proposal.objects.filter(cluster_key=DEMO_CLUSTER_KEY).delete()
    return DemoOutput(inserted=0, removed=entities_delete(demo_entity_ids()))


def _seed(data: DemoInput, ctx: CallContext) -> DemoOutput:
    return demo_seed(source_host=ctx.source_host)


def _reset(data: DemoInput, ctx: CallContext) -> DemoOutput:
    return demo_reset()


DEMO_SEED = Operation(
    name="demo_seed",
    summary=(
        "Insert the demo tour: a small graph of decisions with their reasons, lessons, "
        "commits with evidence edges and a pending proposal, every entity marked "
        "metadata.demo = true. A second seed inserts only what is missing."
    ),
    input_model=DemoInput,
    output_model=DemoOutput,
    handler=_seed,
    hints=ToolHints(read_only=False, destructive=False, idempotent=True),
    examples=[{}],
    route="demo/seed",
    # The dashboard's onboarding and `memesh demo`; the reference lists no such tool.
    tool=False,
)

DEMO_RESET = Operation(
    name="demo_reset",
    summary=(
        "Delete every demo entity (metadata.demo = true) and the demo proposal, in one "
        "transaction, through the knowledge graph's delete (its indexes stay consistent). "
        "Memories of the user's are never touched."
    ),
    input_model=DemoInput,
    output_model=DemoOutput,
    handler=_reset,
    hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    examples=[{}],
    route="demo/reset",
    tool=False,
)
