"""supersede: correct a memory by a new one that replaces it; the old one is kept and linked.

The new memory is stored by remember's own service with a `supersedes` relation to the old
one, which archives it (never deletes it) and records `metadata.superseded_by` on it. The new
one's `parent_id` is the old one: without a `source` it is a hypothesis derived from it (one
hop further, no more confident, keeping its invalidation conditions); with one, a fact.
It keeps the old memory's type and tags unless the call gives others, and lives where the
old one lived (no project is added on the caller's behalf).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import Field

from core.errors import OperationFailed
from graph.models import Entity, Status, Tag
from graph.ops.kit.fields import (
    MAX_OBSERVATIONS,
    MAX_TAGS,
    Name,
    ObservationText,
    Output,
    TagName,
    TypeName,
    WhyText,
)
from graph.ops.kit.memory_ref import MemoryRef
from graph.ops.kit.operation import CallContext, Operation, ToolHints, validated
from graph.ops.kit.trust.fields import (
    ProvenanceInput,
)
from graph.ops.remember.schema import RememberInput, RememberOutput
from graph.ops.remember.service import RELATION_SUPERSEDES, entity_remember


class SupersedeInput(ProvenanceInput, MemoryRef):
    new_name: Name | None = Field(
        default=None,
        description=(
            "Name of the new memory; it must not exist yet. Default: the old name with the "
            "next free `-v<N>` suffix."
        ),
    )
    observations: list[ObservationText] = Field(
        min_length=1,
        max_length=MAX_OBSERVATIONS,
        description="What the new memory holds (the corrected statement).",
    )
    type: TypeName | None = Field(default=None, description="Default: the old memory's type.")
    title: str | None = Field(default=None, description="Title of the new memory.")
    tags: list[TagName] | None = Field(
        default=None,
        max_length=MAX_TAGS,
        description="Tags of the new memory. Default: the old memory's tags.",
    )
    why: WhyText | None = Field(
        default=None,
        description="For a decision: its reason and what would make it stop holding.",
    )


class SupersededMemory(Output):
    id: int
    name: str
    status: str = Field(description="`archived`: kept, linked, hidden from recall by default.")
    superseded_by: int = Field(description="Id of the memory that replaces it.")


class SupersedeOutput(Output):
    superseded: SupersededMemory
    new: RememberOutput = Field(description="The new memory, as remember reports it.")


def _free_version_name(name: str) -> str:
    base = name[:240]
    n = 2
    while Entity.objects.filter(name=f"{base}-v{n}").exists():
        n += 1
    return f"{base}-v{n}"


@transaction.atomic
def memory_supersede(
    *,
    data: SupersedeInput,
    source_host: str,
    require_why: bool = False,
    project: str | None = None,
    now: datetime | None = None,
) -> SupersedeOutput:
    """Store the new memory and archive the old one (module docstring has the rules); a
    caller working in `project` supersedes only memories its reads see."""
    now = now or timezone.now()
    old = data.entity_within(project, "supersede")
    if old.status != Status.ACTIVE:
        raise OperationFailed(
            f'"{old.name}" is already archived: supersede the memory that replaced it',
            field="name" if data.name is not None else "id",
        )
    new_name = data.new_name or _free_version_name(old.name)
    if Entity.objects.filter(name=new_name).exists():
        raise OperationFailed(
            f'new_name: "{new_name}" already exists; supersede creates a new memory',
            field="new_name",
        )
    tags = (
        data.tags
        if data.tags is not None
        else list(Tag.objects.filter(entity=old).values_list("name", flat=True))
    )
    fields: dict[str, Any] = {
        "name": new_name,
        "type": data.type or old.type,
        "title": data.title,
        "observations": data.observations,
        "tags": tags,
        "namespace": old.namespace,
        "relations": [{"to": old.name, "type": RELATION_SUPERSEDES}],
        "why": data.why,
        "parent_id": old.pk,
        **{key: getattr(data, key) for key in ProvenanceInput.model_fields},
    }
    # Checked as remember checks its input; no `project` is passed to the service, so the
    # new memory is filed only by the tags it carries.
    remember_input = validated(
        RememberInput, {key: value for key, value in fields.items() if value is not None}
    )
    new = entity_remember(
        data=remember_input, source_host=source_host, require_why=require_why, now=now
    )
    return SupersedeOutput(
        superseded=SupersededMemory(
            id=old.pk, name=old.name, status=Status.ARCHIVED, superseded_by=new.entityId
        ),
        new=new,
    )


def _supersede(data: SupersedeInput, ctx: CallContext) -> SupersedeOutput:
    return memory_supersede(
        data=data,
        source_host=ctx.source_host,
        require_why=ctx.guide_rules,
        project=ctx.project if ctx.guide_rules else None,
    )


SUPERSEDE = Operation(
    name="supersede",
    summary=(
        "Correct a memory: store a new one that replaces it. The old one is archived, kept "
        "and linked (`supersedes`), never deleted; the new one takes the same provenance "
        "fields as remember."
    ),
    input_model=SupersedeInput,
    output_model=SupersedeOutput,
    handler=_supersede,
    hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    examples=[
        {
            "name": "auth-decision",
            "new_name": "auth-decision-v2",
            "observations": ["Moved to session tokens; JWT only for service-to-service"],
            "why": "revocation is simpler with sessions; revisit if we go multi-region",
            "source": "docs/adr/0012-sessions.md",
        }
    ],
)
