"""pin / unpin: protect an entity from the dreamer's automatic compaction, or release it.

Pinning writes `metadata.pin = true` and unpinning removes the key: exactly the flag the
dreamer reads before compacting. Neither changes searchable text or status, so the keyword
index is untouched; neither counts as a write to the memory's content, so `updated_at` (which
recency ranking reads) stays as it is.
"""

from __future__ import annotations

from django.db import transaction
from pydantic import Field

from graph.models import Entity
from graph.ops.kit.fields import Name, Output, StrictInput
from graph.ops.kit.operation import CallContext, Operation, ToolHints

PIN_KEY = "pin"


class PinInput(StrictInput):
    name: Name = Field(description="Entity name.")


class PinOutput(Output):
    name: str
    pinned: bool = Field(description="Whether the entity is pinned now (false when not found).")
    found: bool = Field(description="False when no entity has this name; nothing is changed.")


@transaction.atomic
def entity_pin_set(*, name: str, pinned: bool) -> PinOutput:
    entity = Entity.objects.select_for_update().filter(name=name).first()
    if entity is None:
        return PinOutput(name=name, pinned=False, found=False)
    metadata = dict(entity.metadata or {})
    if pinned and metadata.get(PIN_KEY) is not True:
        metadata[PIN_KEY] = True
    elif not pinned and PIN_KEY in metadata:
        del metadata[PIN_KEY]
    else:
        return PinOutput(name=entity.name, pinned=pinned, found=True)  # already so
    Entity.objects.filter(pk=entity.pk).update(metadata=metadata)
    return PinOutput(name=entity.name, pinned=pinned, found=True)


def is_pinned(entity: Entity) -> bool:
    """The dreamer's test: only a literal `true` pins (a stray "false" string does not)."""
    return bool(entity.metadata) and entity.metadata.get(PIN_KEY) is True


def _pin(data: PinInput, ctx: CallContext) -> PinOutput:
    return entity_pin_set(name=data.name, pinned=True)


def _unpin(data: PinInput, ctx: CallContext) -> PinOutput:
    return entity_pin_set(name=data.name, pinned=False)


PIN = Operation(
    name="pin",
    summary="Protect an entity from the dreamer's automatic compaction (metadata.pin = true).",
    input_model=PinInput,
    output_model=PinOutput,
    handler=_pin,
    hints=ToolHints(read_only=False, destructive=False, idempotent=True),
    examples=[{"name": "auth-architecture-decision"}],
    rest=False,  # the reference has the CLI commands only, no /v1 route
)
UNPIN = Operation(
    name="unpin",
    summary="Release an entity's pin so the dreamer may compact it again.",
    input_model=PinInput,
    output_model=PinOutput,
    handler=_unpin,
    hints=ToolHints(read_only=False, destructive=False, idempotent=True),
    examples=[{"name": "auth-architecture-decision"}],
    rest=False,
)
