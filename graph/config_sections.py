"""graph's sections of config.json, and `typed_section`: how every app declares a section whose
values a pydantic type checks (core/config_sections.py is the registry and the service).

The apps register their sections as Django starts, in every `memesh` process (a hook, `memesh
--help`), so this module imports nothing heavy: a section whose type lives in a module that
does is named "module:attribute", and that module is imported, with pydantic, on the first
check or when the API is documented. Readers keep their own rules for what a stored value
means (graph/capture/capture.py, graph/ops/peer/switch.py, graph/ops/briefing/level.py,
graph/embedding/config.py).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from core import config_sections
from core.config_sections import ConfigSection
from core.errors import InvalidInput

if TYPE_CHECKING:
    from pydantic import BaseModel

AUTO_CAPTURE_SETTING = "autoCapture"


class Constraints(TypedDict, total=False):
    """The `Field` constraints a section's value has beyond its type."""

    ge: int
    le: int
    min_length: int
    max_length: int


def typed_section(
    name: str,
    schema: object,
    description: str,
    *,
    constraints: Constraints | None = None,
    default: object = None,
    secret_fields: tuple[str, ...] = (),
    merge: Callable[[object, object], object] | None = None,
) -> ConfigSection:
    """A section whose written values must be `schema` (a type, or "module:attribute"), with
    pydantic's `Field` `constraints` (`{"ge": 1}`). An object is stored without its unset
    fields; a failed check names the section's field (`llm.apiKey: …`)."""

    @functools.cache
    def resolved() -> object:
        from pydantic import Field

        found = schema
        if isinstance(schema, str):
            module, _, attribute = schema.partition(":")
            found = getattr(importlib.import_module(module), attribute)
        return Annotated[found, Field(**constraints)] if constraints else found

    @functools.cache
    def alone() -> type[BaseModel]:
        # The section as the one field of an update, so pydantic names it in every error.
        return update_model((section,))

    def check(value: object) -> object:
        from pydantic import ValidationError

        from graph.ops.kit.validation_errors import describe_validation_error, first_field

        try:
            update = alone().model_validate({name: value})
        except ValidationError as exc:
            raise InvalidInput(describe_validation_error(exc), field=first_field(exc)) from None
        return update.model_dump(exclude_none=True)[name]

    section = ConfigSection(
        name=name,
        description=description,
        check=check,
        schema=resolved,
        default=default,
        secret_fields=secret_fields,
        merge=merge,
    )
    return section


def update_model(sections: tuple[ConfigSection, ...] | None = None) -> type[BaseModel]:
    """The update POST /v1/config takes, as a pydantic model of the declared sections (all of
    them unless named): each optional, unknown fields refused. It documents the route; the
    checks use it one section at a time."""
    from pydantic import ConfigDict, Field, create_model

    fields: dict[str, Any] = {}
    for section in config_sections.sections() if sections is None else sections:
        type_: Any = section.schema()
        fields[section.name] = (type_ | None, Field(None, description=section.description))
    return create_model(
        "ConfigUpdate",
        __config__=ConfigDict(extra="forbid"),
        __doc__="A partial update: fields not sent are kept; a field sent as null is removed.",
        **fields,
    )


SECTIONS = (
    typed_section(AUTO_CAPTURE_SETTING, bool, "Capture session memories via hooks.", default=True),
    typed_section("sessionLimit", int, "Memories per session.", constraints={"ge": 1, "le": 1000}),
    # Kept for the reference's clients; nothing in memesh reads them.
    typed_section("autoUpdate", bool, "Check for updates automatically."),
    typed_section("setupCompleted", bool, "The setup wizard has run."),
    typed_section(
        "embedder",
        "graph.embedding.config:EmbedderSection",
        "The embedding provider: a name or {provider, model, baseUrl, ...}.",
        secret_fields=("apiKey",),
    ),
    typed_section(
        "peerApi",
        bool,
        "Serve the peer-shaped compatibility surface: memory_* MCP tools and "
        "/api/v1/memories routes (also MEMESH_PEER_API=1). Off by default.",
        default=False,
    ),
    typed_section(
        "briefing",
        "graph.ops.briefing.level:Level",
        "The briefing level used when a briefing call names none: minimal, standard or full "
        "(unset: minimal).",
    ),
)
