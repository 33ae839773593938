"""Reads behind `view`: what the root, a namespace and a file show. Only active entities are
visible to the tool (a deleted file is an archived entity, restorable by its owner), and, when
the application binds the tool to a project, only those in that project's scope
(graph/ops/kit/scope.py): another project's memory is a file that does not exist."""

from __future__ import annotations

from dataclasses import dataclass

from api.memory_tool.paths import NAMESPACES, MemoryFile
from core.errors import NotFound
from graph.models import Entity, Observation, Status, Tag
from graph.ops.kit.scope import UNBOUND, ReadScope


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One line of a namespace listing."""

    name: str
    type: str
    tags: list[str]


def memory_file_entity(file: MemoryFile, scope: ReadScope = UNBOUND) -> Entity:
    """The active entity in `scope` at exactly this address (the same name in another
    namespace is not it), or `NotFound`."""
    entity = scope.apply(
        Entity.objects.filter(name=file.name, namespace=file.namespace, status=Status.ACTIVE)
    ).first()
    if entity is None:
        raise NotFound(f"The path {file} does not exist")
    return entity


def memory_file_observations(entity: Entity) -> list[Observation]:
    """The entity's observations in id order: the order of the file's lines."""
    return list(Observation.objects.filter(entity=entity).order_by("id"))


def memory_namespace_counts(scope: ReadScope = UNBOUND) -> dict[str, int]:
    """Active entities in `scope` per namespace, every namespace present."""
    counts = dict.fromkeys(NAMESPACES, 0)
    active = scope.apply(Entity.objects.filter(status=Status.ACTIVE))
    for ns in active.values_list("namespace", flat=True):
        counts[ns] = counts.get(ns, 0) + 1
    return counts


def memory_namespace_list(namespace: str, scope: ReadScope = UNBOUND) -> list[FileEntry]:
    """The namespace's active entities in `scope` by name, with type and tags (in tag
    order)."""
    entities = list(
        scope.apply(Entity.objects.filter(namespace=namespace, status=Status.ACTIVE)).order_by(
            "name"
        )
    )
    tags: dict[int, list[str]] = {}
    for entity_id, tag in Tag.objects.filter(entity__in=entities).values_list("entity_id", "name"):
        tags.setdefault(entity_id, []).append(tag)
    return [FileEntry(e.name, e.type, tags.get(e.pk, [])) for e in entities]
