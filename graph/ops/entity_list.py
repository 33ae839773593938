"""Listing and reading the graph's entities (GET /v1/entities and /v1/entities/<name>),
serialised as recall serialises them.

The listing is newest first (last write first, as recall's recent listing) and paginates with
`limit` and `offset`; `total` counts every entity the filters match, so a client knows when it
has read them all. A listing is not a search: no `match`, and no access is counted.

Not an operation of the registry: the reference names these REST routes but no MCP tool, and
the registry makes every operation a tool. The rules (bounds, the status and type filters)
live here all the same, in `EntityListInput`, so a transport only hands over its parameters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import InvalidParameter, NotFound
from graph.models import Entity, Status
from graph.ops.kit.entity_view import EntityOutput, entity_outputs
from graph.ops.kit.fields import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT, MAX_TYPE, Output
from graph.ops.kit.validation_errors import describe_validation_error, first_field

# SQLite's OFFSET is a 64-bit integer; a larger one is a bad parameter, not a 500. Far past
# any real graph, and offset + limit still fits.
MAX_OFFSET = 10**12
STATUS_ALL = "all"
STATUSES = (Status.ACTIVE.value, Status.ARCHIVED.value, STATUS_ALL)


def _bounded_int(raw: object, low: int, high: int | None) -> int:
    # The messages leave out the field and the value: the shared describer adds both.
    if isinstance(raw, int) and not isinstance(raw, bool):
        value = raw
    else:
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise ValueError("must be an integer") from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"must be {bound}")
    return value


class EntityListInput(BaseModel):
    """The listing's parameters. Values may come as query-string text: integers are parsed,
    status is case-insensitive, surrounding whitespace is ignored."""

    model_config = ConfigDict(extra="forbid")

    limit: int = Field(
        default=DEFAULT_RECALL_LIMIT,
        ge=1,
        le=MAX_RECALL_LIMIT,
        description=f"Entities per page, 1-{MAX_RECALL_LIMIT} (default {DEFAULT_RECALL_LIMIT}).",
    )
    offset: int = Field(
        default=0,
        ge=0,
        le=MAX_OFFSET,
        description=f"Entities to skip, 0-{MAX_OFFSET:_} (default 0).".replace("_", ","),
    )
    status: Literal["active", "archived", "all"] = Field(
        default="active", description="active (default), archived, or all."
    )
    type: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_TYPE,
        description="Only entities of this exact type.",
    )

    @field_validator("limit", mode="before")
    @classmethod
    def _limit(cls, raw: object) -> int:
        return _bounded_int(raw, 1, MAX_RECALL_LIMIT)

    @field_validator("offset", mode="before")
    @classmethod
    def _offset(cls, raw: object) -> int:
        return _bounded_int(raw, 0, MAX_OFFSET)

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, raw: object) -> str:
        status = str(raw).strip().lower()
        if status not in STATUSES:
            raise ValueError(f"must be one of {', '.join(STATUSES)}")
        return status

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, raw: object) -> str | None:
        if raw is None:
            return None
        type_ = str(raw).strip()
        if not type_ or len(type_) > MAX_TYPE:
            raise ValueError(f"must be a non-blank entity type of at most {MAX_TYPE} characters")
        return type_


class EntityListOutput(Output):
    entities: list[EntityOutput] = Field(description="This page, newest first.")
    total: int = Field(description="Entities matching the filters, on every page.")
    limit: int
    offset: int
    truncated: bool = Field(description="Whether entities remain after this page.")


def entity_list_input(params: Mapping[str, str]) -> EntityListInput:
    """The listing's input from query parameters; other parameters are ignored. A bad value is
    `validation.bad-param` naming it (the reference's code for a query parameter)."""
    known = {name: params[name] for name in EntityListInput.model_fields if name in params}
    try:
        return EntityListInput.model_validate(known)
    except ValidationError as exc:
        raise InvalidParameter(describe_validation_error(exc), field=first_field(exc)) from None


def entity_list(*, data: EntityListInput) -> EntityListOutput:
    entities = Entity.objects.all()
    if data.status != STATUS_ALL:
        entities = entities.filter(status=data.status)
    if data.type is not None:
        entities = entities.filter(type=data.type)
    total = entities.count()
    page = entities.order_by("-updated_at", "-id").values_list("id", flat=True)
    ids = list(page[data.offset : data.offset + data.limit])
    return EntityListOutput.model_construct(
        entities=entity_outputs(Entity.objects.documents(ids)),
        total=total,
        limit=data.limit,
        offset=data.offset,
        truncated=data.offset + len(ids) < total,
    )


def entity_get(*, name: str) -> EntityOutput:
    """One entity by name, archived or not."""
    entity_id = Entity.objects.id_for_name(name)
    if entity_id is None:
        raise NotFound(f'No entity named "{name}"', field="name")
    [entity] = entity_outputs(Entity.objects.documents([entity_id]))
    return entity
