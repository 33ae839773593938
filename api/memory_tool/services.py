"""Writes of the memory tool: each checks the tool's addresses and scope, then makes its one
change through graph's write services, so the keyword index, the vector request, provenance
and trust stay as every other write leaves them.

A new file is an entity created by `entity_remember` (type `note`, the namespace,
metadata.provenance.source_host `memory-tool`, a hypothesis as any unsourced memory, filed
under the bound project); `delete` is `entity_forget` (archive, never destroy). What
remember cannot say — `create` overwriting a file of any length, the content-addressed
`str_replace`, an `insert` at a line, `rename` — is graph/ops/revise.py: the overwritten or
edited observations are kept in metadata.replaced_history as remember's `replace` keeps
them, trust is unchanged (a rewrite is not corroboration), and the decision-type `why` rule,
which belongs to the agent transports' `replace`, does not apply. None of them stores an
observation the entity already holds (DESIGN §4 item 4).

Bound to a project (graph/ops/kit/scope.py), the tool sees only that project's scope: a file of
another project does not exist for it (and so cannot be edited, deleted or renamed), a create
onto such a name is refused, and a new file is filed under the project.

Refusals are raised (core.errors) before the first write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from api.memory_tool.lines import insert_position, plan_str_replace
from api.memory_tool.paths import MemoryFile
from api.memory_tool.selectors import memory_file_entity, memory_file_observations
from core.errors import OperationFailed
from graph.models import Entity, Status
from graph.ops.forget import ForgetInput, entity_forget
from graph.ops.kit.fields import NOTE_TYPE
from graph.ops.kit.scope import UNBOUND, ReadScope
from graph.ops.remember.schema import RememberInput
from graph.ops.remember.service import entity_remember
from graph.ops.revise import entity_rename, observations_overwrite, observations_splice

# Stamped as metadata.provenance.source_host on the entities the tool creates.
SOURCE_HOST = "memory-tool"


@dataclass(frozen=True, slots=True)
class FileWritten:
    created: bool  # False: an active file was overwritten
    lines: int  # observations the file now holds
    duplicates: int  # lines not stored because an identical one was (whitespace ignored)


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
    stored = observations_overwrite(entity_id=entity.pk, observations=lines)
    return FileWritten(created, stored, len(lines) - stored)


@transaction.atomic
def memory_file_insert(
    *, file: MemoryFile, insert_line: int, text: str, scope: ReadScope = UNBOUND
) -> bool:
    """Add `text` as an observation after the memory owning line `insert_line` (0 prepends).
    False when the entity already holds it (ignoring whitespace): nothing changes then."""
    entity = memory_file_entity(file, scope)
    texts = [o.text for o in memory_file_observations(entity)]
    position = insert_position(texts, insert_line, str(file))
    return observations_splice(entity_id=entity.pk, start=position, stop=position, text=text)


@transaction.atomic
def memory_file_str_replace(
    *, file: MemoryFile, old_str: str, new_str: str, scope: ReadScope = UNBOUND
) -> int:
    """Replace the one occurrence of `old_str` in the file with `new_str`; returns the line the
    edit began on. Untouched observations keep their rows; an edited observation that now
    equals another one of the entity is merged into it."""
    entity = memory_file_entity(file, scope)
    texts = [o.text for o in memory_file_observations(entity)]
    splice = plan_str_replace(texts, old_str, new_str, str(file))
    observations_splice(entity_id=entity.pk, start=splice.start, stop=splice.stop, text=splice.text)
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
    try:
        entity_rename(entity_id=entity.pk, name=new.name, namespace=new.namespace)
    except OperationFailed as exc:  # the name is taken: say so at the address the model used
        raise OperationFailed(f"Cannot rename to {new}: {exc.message}") from None
