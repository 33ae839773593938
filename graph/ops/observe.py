"""observe: record a fresh observation of a memory — the one path that raises trust.

It re-stamps `last_observed_at`, raises confidence, and is the only way a hypothesis becomes a
fact, which needs the source it was observed in (`trust.source-required` otherwise). A fact
may be re-observed without naming its source again (its stored one is meant). An observation
with a source makes the memory attributable: hop_count goes back to 0. Archived memories are
not observed (observe what replaced them).
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from django.db import transaction
from django.utils import timezone
from pydantic import Field

from core.errors import OperationFailed
from graph.errors import SourceRequired
from graph.models import Status, TrustStatus
from graph.ops.kit.fields import Output
from graph.ops.kit.memory_ref import MemoryRef
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.ops.kit.trust.fields import ConfidenceValue, SourceText, TrustName
from graph.ops.kit.trust.rules import with_event
from graph.ops.kit.trust.view import TrustOutput, entity_trust

# What an observe without an explicit confidence adds (to at most 1.0).
OBSERVE_STEP = 0.1


class ObserveInput(MemoryRef):
    source: SourceText | None = Field(
        default=None,
        description=(
            "Where it was observed (a file, a runbook, a command's output, the user). "
            "Required to promote a hypothesis to a fact; a fact re-observed without it keeps "
            "its stored source."
        ),
    )
    confidence: ConfidenceValue | None = Field(
        default=None,
        description=(
            f"0-1: the confidence after this observation. Default: the current one raised by "
            f"{OBSERVE_STEP} (to at most 1.0)."
        ),
    )


class ObserveOutput(Output):
    id: int
    name: str
    promoted: bool = Field(description="True when this observation made a hypothesis a fact.")
    previous_status: TrustName = Field(description="The trust status before the observation.")
    previous_confidence: float = Field(description="The confidence before the observation.")
    trust: TrustOutput = Field(description="Provenance and trust after the observation.")


@transaction.atomic
def memory_observe(
    *, data: ObserveInput, project: str | None = None, now: datetime | None = None
) -> ObserveOutput:
    """Stamp a fresh observation on a memory (module docstring has the rules); a caller
    working in `project` observes only memories its reads see (MemoryRef.entity_within)."""
    now = now or timezone.now()
    entity = data.entity_within(project, "observe")
    if entity.status != Status.ACTIVE:
        raise OperationFailed(
            f'"{entity.name}" is archived: observe the memory that replaced it, or remember it '
            "again",
            field="name",
        )
    source = data.source or entity.source
    if source is None:
        raise SourceRequired(
            f'source: "{entity.name}" is a hypothesis; observing it needs the source it was '
            "observed in (the only path from hypothesis to fact)",
            field="source",
        )
    previous_status, previous_confidence = entity.trust, entity.confidence
    promoted = entity.trust == TrustStatus.HYPOTHESIS
    confidence = data.confidence
    if confidence is None:
        confidence = min(1.0, round(entity.confidence + OBSERVE_STEP, 6))
    entity.trust = TrustStatus.FACT
    entity.source = source
    entity.confidence = confidence
    entity.last_observed_at = now
    entity.hop_count = 0
    entity.metadata = with_event(
        entity.metadata,
        "observe",
        now,
        source=source,
        confidence=confidence,
        promoted=True if promoted else None,
    )
    entity.updated_at = now
    entity.save(
        update_fields=[
            "trust",
            "source",
            "confidence",
            "last_observed_at",
            "hop_count",
            "metadata",
            "updated_at",
        ]
    )
    # Nothing the keyword or vector index holds changed: no index_after_write.
    return ObserveOutput(
        id=entity.pk,
        name=entity.name,
        promoted=promoted,
        previous_status=cast(TrustName, previous_status),
        previous_confidence=previous_confidence,
        trust=entity_trust(entity, now),
    )


def _observe(data: ObserveInput, ctx: CallContext) -> ObserveOutput:
    # The agent transports keep projects apart, as remember does (keep_projects_apart).
    return memory_observe(data=data, project=ctx.project if ctx.guide_rules else None)


OBSERVE = Operation(
    name="observe",
    summary=(
        "Record a fresh observation of a memory: stamps last_observed_at and raises its "
        "confidence. The only path from hypothesis to fact, which needs a `source`."
    ),
    input_model=ObserveInput,
    output_model=ObserveOutput,
    handler=_observe,
    # Repeating it raises confidence again (up to 1.0).
    hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    examples=[{"name": "auth-decision", "source": "docs/adr/0007-jwt.md"}],
)
