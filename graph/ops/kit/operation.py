"""What an operation is: its schema in and out, its handler, the facts every transport needs
about it (tool hints, whether it is an MCP tool, its MCP rendering, its REST route, CLI help),
and the caller's context.

Each module of graph/ops/ defines its Operation with these types; graph/ops/registry.py lists
them. (The list cannot live here: every operation imports this module.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from core.errors import InvalidInput
from graph.ops.kit.validation_errors import describe_validation_error, first_field

M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], payload: object) -> M:
    """`payload` as `model`, or InvalidInput saying what is wrong with it (`field: problem`):
    every operation's input, and the input models of services no operation wraps."""
    # A body of `null` is not an object (the reference: 400); a missing body reaches here
    # as {} from every transport (DRF's empty body, MCP's omitted arguments, CLI flags).
    if not isinstance(payload, Mapping):
        raise InvalidInput("Request body must be a JSON object")
    try:
        return model.model_validate(dict(payload))
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc), field=first_field(exc)) from None


@dataclass(frozen=True, slots=True)
class CallContext:
    """Facts about the caller that only the transport knows."""

    source_host: str  # "http", "cli", or the MCP client's declared name
    # The project the caller works in when a call names none: the CLI's working directory,
    # an MCP session's bound project; None where the transport cannot know.
    project: str | None = None
    # The agent guide's rules for agent-facing transports (MCP): a new decision needs `why`,
    # a name another project holds is refused, a plain-name project tag is retagged.
    # Plain REST keeps the reference's contract, whose own example stores a decision without.
    guide_rules: bool = False
    # The session a call belongs to when its input names none: an MCP connection's own
    # (api/mcp_server/server.py); None on REST and the CLI, whose callers pass `session_id` instead.
    # graph/ops/feedback.py counts a memory at most once per session as a hit or a miss.
    session_id: str | None = None

    def session(self, given: str | None) -> str | None:
        """The session of a call: the one its input names, else the transport's."""
        return given if given is not None else self.session_id

    # Whether `project` also binds reads (recall, briefing, user_patterns, export) that name
    # no project: they then see that project's memories, those with no project and global
    # ones (graph/ops/kit/scope.py). False for plain HTTP: one server serves many repositories,
    # so its own directory (which still files REST's lessons) says nothing about the caller's.
    binds_reads: bool = True
    # The agent identity (principal id) the caller declared for itself: MEMESH_RECIPIENT of
    # `memesh mcp` and the CLI; None on REST, whose callers name it in the call. The
    # messaging operation (messaging/operation.py) reads it as the default sender and inbox.
    recipient: str | None = None

    # The caller's workspace roots, where the transport knows them: over MCP the ones the
    # client lists (roots/list; empty when it lists none), for an operation that asks for
    # them (Operation.wants_workspace_roots); None on REST and the CLI, whose callers name a
    # root in the input instead (dream/work_package/operation.py).
    workspace_roots: tuple[str, ...] | None = None

    @property
    def read_project(self) -> str | None:
        """The project a read that names none is bound to, if any."""
        return self.project if self.binds_reads else None


@dataclass(frozen=True, slots=True)
class ToolHints:
    """MCP's tool annotations, saying what the operation really does: read-only ones change
    nothing a user stored (recall's access counts are bookkeeping, not content); destructive
    ones can remove or overwrite what was stored; idempotent ones give the same state when
    repeated."""

    read_only: bool
    destructive: bool
    idempotent: bool


READ_ONLY = ToolHints(read_only=True, destructive=False, idempotent=True)


@dataclass(frozen=True)
class Operation:
    name: str
    summary: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    handler: Callable[[Any, CallContext], BaseModel]
    hints: ToolHints
    examples: list[dict[str, Any]] = field(default_factory=list)
    # /v1/<route> exists only where the reference has that route; GET routes read their
    # input from the query string (a comma-separated value for a list field).
    rest: bool = True
    method: str = "POST"
    route: str = ""
    # An agent tool over MCP (and in `memesh export-schema`); False for the graph half of a
    # CLI command or a REST route that the reference lists as no tool.
    tool: bool = True
    # The MCP answer's text when it is not the result's JSON: the output model in, text out.
    mcp_text: Callable[[Any], str] | None = None
    # Whether the MCP transport asks the client for its workspace roots before a call
    # (CallContext.workspace_roots): a round trip only the operations that read them pay.
    wants_workspace_roots: bool = False
    # The JSON answer written by the selector itself, for an answer too large to build as
    # output models and encode again (GET /v1/graph: every node of the graph, as SQLite's
    # json_object wrote it). It must be what `handler` answers, encoded: run_json (REST)
    # uses it, run (MCP, CLI) the handler; the operation's tests hold the two equal.
    json_handler: Callable[[Any, CallContext], str] | None = None

    @property
    def rest_route(self) -> str:
        return self.route or self.name

    def field_help(self, name: str) -> str:
        """A CLI flag's help: the input field's own description (the tool documentation)."""
        description = self.input_model.model_fields[name].description
        return description or ""

    def field_choices(self, name: str) -> list[str]:
        """The values a Literal-typed input field allows (for a CLI flag's `choices`)."""
        annotation = self.input_model.model_fields[name].annotation
        choices = [a for arg in get_args(annotation) for a in (get_args(arg) or (arg,))]
        return [c for c in choices if isinstance(c, str)]

    def parse(self, payload: object) -> BaseModel:
        return validated(self.input_model, payload)

    def call(self, payload: object, context: CallContext) -> BaseModel:
        return self.handler(self.parse(payload), context)

    def run(self, payload: object, context: CallContext) -> dict[str, Any]:
        return self.call(payload, context).model_dump(mode="json", by_alias=True)

    def run_json(self, payload: object, context: CallContext) -> str:
        """run(), answered as JSON text by pydantic's own encoder: the REST views send it as
        it comes, where dumping to Python objects and encoding those again cost a tenth of a
        recall; or the operation's json_handler's text, when it has one."""
        if self.json_handler is not None:
            return self.json_handler(self.parse(payload), context)
        return self.call(payload, context).model_dump_json(by_alias=True)
