"""forget: archive an entity (never delete it), or remove one observation from it, with the
reason it was forgotten kept in its history (the trust model's tombstone: docs/trust.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import Field, model_validator

from graph.models import Entity, Observation, Status
from graph.ops.kit.fields import Name, ObservationText, Output, StrictInput
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.ops.kit.trust.fields import ReasonText
from graph.ops.kit.trust.rules import FORGOTTEN_KEY, with_event
from graph.ops.kit.trust.view import iso_text
from graph.ops.kit.writes import entity_archive, index_after_write


class ForgetInput(StrictInput):
    name: Name = Field(description="Entity to archive, or to remove an observation from.")
    observation: ObservationText | None = Field(
        default=None,
        description=(
            "Remove only this observation (exact text, every copy); the entity stays "
            "active. Omit to archive the whole entity. Nothing is ever deleted for good."
        ),
    )
    reason: ReasonText | None = Field(
        default=None,
        description=(
            "Why it is forgotten, e.g. `staging decommissioned`: kept with the memory "
            "(`metadata.forgotten`) and in its history (memory_list)."
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _reject_plural(cls, data: Any) -> Any:
        if isinstance(data, dict) and "observations" in data:
            raise ValueError(
                "`observations` is not accepted: pass one observation as `observation`"
            )
        return data


class ForgetOutput(Output):
    name: str
    archived: bool = Field(description="True when the entity is (now) archived.")
    removed: bool | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Observation mode: true when the observation was found and removed.",
    )
    removedCount: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Observation mode: how many copies were removed.",
    )
    message: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Explains a no-op (unknown name, observation not found, already archived).",
    )
    reason: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The reason recorded, when the call gave one and something was forgotten.",
    )


@transaction.atomic
def entity_forget(*, data: ForgetInput, now: datetime | None = None) -> ForgetOutput:
    """Archive an entity (never delete it), or remove one observation (every exact copy).
    A `reason` goes into the memory's trust history with what was forgotten, and, when the
    whole memory is archived, into `metadata.forgotten` {at, reason}."""
    entity = Entity.objects.filter(name=data.name).first()
    if entity is None:
        return ForgetOutput(
            name=data.name, archived=False, message=f'Entity "{data.name}" not found'
        )
    now = now or timezone.now()
    archived = entity.status == Status.ARCHIVED

    if data.observation is not None:
        # remember stores observations stripped, so the text to match is stripped too.
        deleted, _ = Observation.objects.filter(
            entity=entity, text=data.observation.strip()
        ).delete()
        if not deleted:
            return ForgetOutput(
                name=entity.name,
                archived=archived,
                removed=False,
                removedCount=0,
                message="Observation not found (it must match the stored text exactly)",
            )
        metadata = with_event(
            entity.metadata,
            "forget",
            now,
            observation=data.observation.strip(),
            reason=data.reason,
        )
        Entity.objects.filter(pk=entity.pk).update(updated_at=now, metadata=metadata)
        index_after_write([entity.pk])
        return ForgetOutput(
            name=entity.name,
            archived=archived,
            removed=True,
            removedCount=deleted,
            reason=data.reason,
        )

    if archived:
        return ForgetOutput(name=entity.name, archived=True, message="Entity was already archived")
    entity_archive(entity, now)
    metadata = with_event(entity.metadata, "forget", now, reason=data.reason)
    metadata[FORGOTTEN_KEY] = {"at": iso_text(now), "reason": data.reason}
    Entity.objects.filter(pk=entity.pk).update(metadata=metadata)
    index_after_write([entity.pk])
    return ForgetOutput(name=entity.name, archived=True, reason=data.reason)


def _forget(data: ForgetInput, ctx: CallContext) -> ForgetOutput:
    return entity_forget(data=data)


FORGET = Operation(
    name="forget",
    summary=(
        "Archive an entity (soft delete; recall hides it unless include_archived), or "
        "remove one observation from it."
    ),
    input_model=ForgetInput,
    output_model=ForgetOutput,
    handler=_forget,
    hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    examples=[{"name": "auth-decision", "reason": "superseded by the session-token design"}],
)
