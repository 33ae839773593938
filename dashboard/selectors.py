"""What the pages read beyond the operations' answers, through the graph's own manager
methods, one snapshot each: for the memory page, the versions a `replace` kept and the trust
history, which every read leaves out of `metadata` (graph/ops/kit/entity_view.py) but export and
memory_list carry; for the project page, the listed work items in recall's shape (the graph
view's light nodes carry no observations nor `why`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import NotFound
from graph.models import Entity
from graph.ops.kit.entity_view import EntityOutput, entity_outputs
from graph.ops.kit.trust.rules import HISTORY_KEY
from graph.storage.cursor import read_snapshot

REPLACED_KEY = "replaced_history"


@dataclass(frozen=True, slots=True)
class MemoryPage:
    output: EntityOutput
    replaced_history: list[dict[str, Any]]  # oldest first: {at, observations, ...}
    trust_history: list[dict[str, Any]]  # oldest first: {at, action, ...}


def memory_page_get(name: str) -> MemoryPage:
    """One memory by name, archived or not (NotFound when no entity has that name)."""
    objects = Entity.objects
    with read_snapshot():
        entity_id = objects.id_for_name(name)
        if entity_id is None:
            raise NotFound(f'No entity named "{name}"', field="name")
        [doc] = objects.documents([entity_id])
    [output] = entity_outputs([doc])
    return MemoryPage(
        output=output,
        replaced_history=list(doc.metadata.get(REPLACED_KEY) or []),
        trust_history=list(doc.metadata.get(HISTORY_KEY) or []),
    )


def entities_get(ids: Sequence[int]) -> list[EntityOutput]:
    """These entities in recall's shape, in the order given (ids that are no entity are left
    out): a page's few listed items, never a whole view."""
    with read_snapshot():
        docs = Entity.objects.documents(ids)
    return entity_outputs(docs)
