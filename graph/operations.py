"""The memory operations, each defined once: schema in, one service or selector call, schema out.

Transports (REST now; MCP and the CLI later) are generated from `OPERATIONS` and differ only in
how they read input, stamp `source_host`, and render errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from graph import schemas, selectors, services
from graph.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class CallContext:
    """Facts about the caller that only the transport knows."""

    source_host: str  # "http", "cli", or the MCP client's declared name
    # The project the caller works in when a call names none: the CLI's working directory,
    # an MCP session's bound project; None where the transport cannot know (plain HTTP).
    project: str | None = None


@dataclass(frozen=True)
class Operation:
    name: str
    summary: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Callable[[Any, CallContext], BaseModel]
    examples: list[dict[str, Any]] = field(default_factory=list)
    # POST /v1/<name> exists only where the reference has that route.
    rest: bool = True

    def parse(self, payload: object) -> BaseModel:
        if payload is None:
            payload = {}
        if not isinstance(payload, Mapping):
            raise InvalidInput("Request body must be a JSON object")
        try:
            return self.input_model.model_validate(dict(payload))
        except ValidationError as exc:
            raise InvalidInput(describe_validation_error(exc), field=_first_field(exc)) from None

    def run(self, payload: object, context: CallContext) -> dict[str, Any]:
        result = self.handler(self.parse(payload), context)
        return result.model_dump(mode="json", by_alias=True)


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _first_field(exc: ValidationError) -> str | None:
    errors = exc.errors()
    return _location(errors[0]["loc"]) or None if errors else None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem, each naming its field: `title: must be at most 200 characters`."""
    parts = []
    for err in exc.errors():
        where = _location(err["loc"]) or "body"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


def _remember(data: schemas.RememberInput, ctx: CallContext) -> schemas.RememberOutput:
    return services.entity_remember(data=data, source_host=ctx.source_host)


def _recall(data: schemas.RecallInput, ctx: CallContext) -> schemas.RecallOutput:
    return selectors.entity_recall(data=data)


def _forget(data: schemas.ForgetInput, ctx: CallContext) -> schemas.ForgetOutput:
    return services.entity_forget(data=data)


REMEMBER = Operation(
    name="remember",
    summary=(
        "Store knowledge as an entity with observations, tags and relations. Calling it "
        "again with an existing name appends (observations added, tags deduplicated, the "
        "original type kept)."
    ),
    input_model=schemas.RememberInput,
    output_model=schemas.RememberOutput,
    handler=_remember,
    examples=[
        {
            "name": "auth-decision",
            "type": "decision",
            "observations": [
                "Chose JWT for authentication",
                "Using RS256 algorithm for token signing",
            ],
            "tags": ["project:myapp", "topic:auth"],
        }
    ],
)
RECALL = Operation(
    name="recall",
    summary=(
        "Search stored knowledge: terms are OR-ed and ranked by relevance, then by recency, "
        "use, confidence and impact. Call with no query to list recent memories."
    ),
    input_model=schemas.RecallInput,
    output_model=schemas.RecallOutput,
    handler=_recall,
    examples=[{"query": "authentication"}, {"query": "auth", "tag": "project:myapp"}, {}],
)
FORGET = Operation(
    name="forget",
    summary=(
        "Archive an entity (soft delete; recall hides it unless include_archived), or "
        "remove one observation from it."
    ),
    input_model=schemas.ForgetInput,
    output_model=schemas.ForgetOutput,
    handler=_forget,
    examples=[{"name": "auth-decision"}],
)

OPERATIONS: dict[str, Operation] = {op.name: op for op in (REMEMBER, RECALL, FORGET)}
