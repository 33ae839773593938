"""How the trust operations (observe, supersede) name the memory they act on: by `name`, as
every memesh operation does, or by `id`, as a `[mem:<id>]` handle and the peer's tools do."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from core.errors import NotFound
from graph.errors import NameInOtherProject
from graph.models import Entity
from graph.ops.kit.fields import Name, StrictInput, field_error
from graph.ops.kit.scope import entity_projects
from graph.ops.kit.trust.fields import MemoryId
from graph.storage.project_scope import GLOBAL_NAMESPACE


class MemoryRef(StrictInput):
    """Exactly one of `name` and `id`."""

    name: Name | None = Field(default=None, description="The memory's name (or give `id`).")
    id: MemoryId | None = Field(
        default=None, description="The memory's id, as in a `[mem:<id>]` handle (or `name`)."
    )

    @model_validator(mode="after")
    def _one_reference(self) -> Self:
        if (self.name is None) == (self.id is None):
            raise field_error("name", "give exactly one of `name` and `id`")
        return self

    def entity(self) -> Entity:
        """The memory named, archived or not, or NotFound naming the field."""
        if self.name is not None:
            entity = Entity.objects.filter(name=self.name).first()
            if entity is None:
                raise NotFound(f'No memory named "{self.name}"', field="name")
            return entity
        assert self.id is not None  # _one_reference
        entity = Entity.objects.filter(pk=self.id).first()
        if entity is None:
            raise NotFound(f"No memory with id {self.id}", field="id")
        return entity

    @property
    def field(self) -> str:
        """The input field that named the memory, for errors about it."""
        return "name" if self.name is not None else "id"

    def entity_within(self, project: str | None, verb: str) -> Entity:
        """`entity()`, refused with NameInOtherProject when the caller works in `project` and
        the memory is another project's alone: a session changes the trust only of memories
        its reads can see (its project's, those of no project, global ones), as remember
        over MCP refuses another project's name. None: no project to keep to (REST, the
        CLI's reference paths)."""
        entity = self.entity()
        if project is None or entity.namespace == GLOBAL_NAMESPACE:
            return entity
        held = entity_projects(entity.pk)
        if held and project not in held:
            raise NameInOtherProject(
                f'"{entity.name}" is a memory of another project ({", ".join(sorted(held))}); '
                f"{verb} it from a session of that project",
                field=self.field,
            )
        return entity
