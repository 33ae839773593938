"""Writes of the memory tool: keyword-only, each one transaction, each ending with the keyword
index in step (`graph.ops.kit.writes.index_after_write`, as every write service does).

What remember can say, remember does: a new entity is created by `entity_remember` (type,
namespace, provenance, index), `insert` appends through it (observation dedupe ignoring
whitespace, the trust rules of graph/ops/kit/trust/, the index), and `delete` is
`entity_forget` (archive, never destroy). What it cannot say is here, with the same
invariants: `create` overwriting a file (observations replaced, tags/type/title kept, trust
unchanged — a rewrite is not corroboration — and not blocked by the decision-type
`why` rule, which belongs to the agent transports' `replace`), the content-addressed
`str_replace`, and `rename`. None of them stores an observation the entity already holds
(DESIGN §4 item 4).

Bound to a project (graph/ops/kit/scope.py), the tool sees only that project's scope: a file of
another project does not exist for it (and so cannot be edited, deleted or renamed), a create
onto such a name is refused, and a new file is filed under the project.

Refusals are raised (graph.errors) before the first write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from api.memory_tool.lines import insert_position, plan_str_replace
from api.memory_tool.paths import MemoryFile
from api.memory_tool.selectors import memory_file_entity, memory_file_observations
from core.errors import OperationFailed
from graph.models import Entity, Observation, Status
from graph.ops.forget import ForgetInput, entity_forget
from graph.ops.kit.fields import NOTE_TYPE
from graph.ops.kit.scope import UNBOUND, ReadScope
from graph.ops.kit.writes import index_after_write
from graph.ops.remember.schema import RememberInput
from graph.ops.remember.service import dedupe, entity_remember
from graph.search.text import normalize_observation

# Stamped as metadata.provenance.source_host on the entities the tool creates.
SOURCE_HOST = "memory-tool"


@dataclass(frozen=True, slots=True)
class FileWritten:
    created: bool  # False: an active file was overwritten
    lines: int  # observations the file now holds
    duplicates: int  # lines not stored because an identical one was (whitespace ignored)


def _move_behind(entity: Entity, tail: Sequence[Observation]) -> None:
    """Order is by id: re-create `tail` (same text and created_at, new ids) so that what was
    just appended comes before it."""
    Observation.objects.filter(pk__in=[o.pk for o in tail]).delete()
    Observation.objects.bulk_create(
        [Observation(entity=entity, text=o.text, created_at=o.created_at) for o in tail]
    )


def _touch(entity: Entity, now: datetime, *fields: str) -> None:
    entity.updated_at = now
    entity.save(update_fields=[*fields, "updated_at"])
    index_after_write([entity.pk])


@transaction.atomic
def memory_file_create(
    *, file: MemoryFile, lines: Sequence[str], scope: ReadScope = UNBOUND
) -> FileWritten:
    """Create the entity at `file` with these observations, or overwrite its observations.

    The name is unique across namespaces, so one taken in another namespace (archived or not)
    is refused: writing anyway would write to, or move, the memory at a different address.
    So is one held by a memory outside `scope` (another project's). An archived entity at
    this address comes back. Tags, type and title are kept; a new entity is filed under the
    scope's project.
    """
    other = Entity.objects.filter(name=file.name).exclude(namespace=file.namespace).first()
    if other is not None:
        raise OperationFailed(
            f"Cannot create {file}: the name is already taken in namespace {other.namespace!r}"
        )
    entity = Entity.objects.filter(name=file.name).first()
    if entity is not None and not scope.apply(Entity.objects.filter(pk=entity.pk)).exists():
        raise OperationFailed(f"Cannot create {file}: the name is taken by another project")
    created = entity is None or entity.status != Status.ACTIVE
    if entity is None:
        out = entity_remember(
            data=RememberInput(
                name=file.name,
                type=NOTE_TYPE,
                namespace=file.namespace,
                project=scope.storage_project,
            ),
            source_host=SOURCE_HOST,
        )
        entity = Entity.objects.get(pk=out.entityId)
    stored = dedupe(lines, key=normalize_observation)
    now = timezone.now()
    Observation.objects.filter(entity=entity).delete()
    Entity.objects.observations_append(entity.pk, stored, now)
    entity.status = Status.ACTIVE
    _touch(entity, now, "status")
    return FileWritten(created, len(stored), len(lines) - len(stored))


@transaction.atomic
def memory_file_insert(
    *, file: MemoryFile, insert_line: int, text: str, scope: ReadScope = UNBOUND
) -> bool:
    """Add `text` as an observation after the memory owning line `insert_line` (0 prepends).

    Appended by `entity_remember`, then moved into place. False when the entity already holds
    it (ignoring whitespace): nothing changes then.
    """
    entity = memory_file_entity(file, scope)
    obs = memory_file_observations(entity)
    position = insert_position([o.text for o in obs], insert_line, str(file))
    out = entity_remember(
        data=RememberInput(name=entity.name, type=entity.type, observations=[text]),
        source_host=SOURCE_HOST,
    )
    if not out.observations:
        return False
    if position < len(obs):
        _move_behind(entity, obs[position:])
        index_after_write([entity.pk])  # the text's order, and so its hash, changed
    return True


@transaction.atomic
def memory_file_str_replace(
    *, file: MemoryFile, old_str: str, new_str: str, scope: ReadScope = UNBOUND
) -> int:
    """Replace the one occurrence of `old_str` in the file with `new_str`; returns the line the
    edit began on. Untouched observations keep their rows; an edited observation that now
    equals another one of the entity is merged into it."""
    entity = memory_file_entity(file, scope)
    obs = memory_file_observations(entity)
    splice = plan_str_replace([o.text for o in obs], old_str, new_str, str(file))
    changed = obs[splice.start : splice.stop]
    text = splice.text
    if text is not None:
        kept = {normalize_observation(o.text) for o in obs if o not in changed}
        if normalize_observation(text) in kept:
            text = None
    now = timezone.now()
    if text is None:
        Observation.objects.filter(pk__in=[o.pk for o in changed]).delete()
    elif changed:
        # The edited text takes the first changed observation's row.
        Observation.objects.filter(pk=changed[0].pk).update(text=text)
        Observation.objects.filter(pk__in=[o.pk for o in changed[1:]]).delete()
    else:
        Entity.objects.observations_append(entity.pk, [text], now)
        _move_behind(entity, obs[splice.start :])
    _touch(entity, now)
    return splice.line


@transaction.atomic
def memory_file_delete(*, file: MemoryFile, scope: ReadScope = UNBOUND) -> None:
    """Archive the entity at `file` (`entity_forget`): a model asked, not the person whose
    memory it is, so it stays restorable."""
    entity = memory_file_entity(file, scope)
    entity_forget(data=ForgetInput(name=entity.name))


@transaction.atomic
def memory_file_rename(*, old: MemoryFile, new: MemoryFile, scope: ReadScope = UNBOUND) -> None:
    """Rename the entity at `old` to `new` (a different namespace moves it, recording
    metadata.previous_namespace) and reindex it under the new name. A name held by any other
    entity, archived included, is refused: names are unique database-wide."""
    entity = memory_file_entity(old, scope)
    if old == new:
        raise OperationFailed(f"{old} and new_path are the same")
    holder = Entity.objects.filter(name=new.name).exclude(pk=entity.pk).first()
    if holder is not None:
        raise OperationFailed(
            f"Cannot rename to {new}: the name is already taken in namespace "
            f"{holder.namespace!r}" + (" (archived)" if holder.status == Status.ARCHIVED else "")
        )
    fields = ["name"]
    if new.namespace != entity.namespace:
        entity.metadata = {**entity.metadata, "previous_namespace": entity.namespace}
        entity.namespace = new.namespace
        fields += ["namespace", "metadata"]
    entity.name = new.name
    _touch(entity, timezone.now(), *fields)
