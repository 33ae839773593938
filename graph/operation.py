"""What an operation is: its schema in and out, its handler, and the caller's context.

graph/operations.py holds the registry; the operations of graph/ops/ build on these types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from graph.errors import InvalidInput


@dataclass(frozen=True, slots=True)
class CallContext:
    """Facts about the caller that only the transport knows."""

    source_host: str  # "http", "cli", or the MCP client's declared name
    # The project the caller works in when a call names none: the CLI's working directory,
    # an MCP session's bound project; None where the transport cannot know (plain HTTP).
    project: str | None = None
    # The agent guide's rules for agent-facing transports (MCP): a new decision needs `why`.
    # Plain REST keeps the reference's contract, whose own example stores a decision without.
    guide_rules: bool = False


@dataclass(frozen=True)
class Operation:
    name: str
    summary: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Callable[[Any, CallContext], BaseModel]
    examples: list[dict[str, Any]] = field(default_factory=list)
    # /v1/<route> exists only where the reference has that route; GET routes read their
    # input from the query string (a comma-separated value for a list field).
    rest: bool = True
    method: str = "POST"
    route: str = ""

    @property
    def rest_route(self) -> str:
        return self.route or self.name

    def parse(self, payload: object) -> BaseModel:
        if payload is None:
            payload = {}
        if not isinstance(payload, Mapping):
            raise InvalidInput("Request body must be a JSON object")
        try:
            return self.input_model.model_validate(dict(payload))
        except ValidationError as exc:
            raise InvalidInput(describe_validation_error(exc), field=_first_field(exc)) from None

    def call(self, payload: object, context: CallContext) -> BaseModel:
        return self.handler(self.parse(payload), context)

    def run(self, payload: object, context: CallContext) -> dict[str, Any]:
        return self.call(payload, context).model_dump(mode="json", by_alias=True)

    def run_json(self, payload: object, context: CallContext) -> str:
        """run(), answered as JSON text by pydantic's own encoder: the REST views send it as
        it comes, where dumping to Python objects and encoding those again cost a tenth of a
        recall."""
        return self.call(payload, context).model_dump_json(by_alias=True)


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
