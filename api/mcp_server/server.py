"""The MCP server: every agent-facing operation of the registry as an MCP tool.

One low-level SDK `Server` serves both transports — `memesh mcp` (stdio) and `/mcp` on
`memesh serve` (streamable HTTP). Tool names, descriptions, input schemas and annotations come
from api/tool_schemas.py, so MCP, REST and the exported schema cannot drift apart.

Result contract (what agents and their hosts rely on):
- success: one text block holding a JSON object (user_patterns: its markdown, the reference's
  MCP form). Never a bare array — Gemini CLI parses the text into structuredContent, which the
  protocol requires to be an object.
- domain errors and invalid arguments: in-band, `isError: true` with the REST failure envelope
  `{"success": false, "errorCode", "error"}` (plus `field` when one field is at fault), built
  by api/envelope.py, so the model can read and correct its call;
- an unknown tool: a JSON-RPC protocol error (INVALID_PARAMS), as the MCP spec prescribes.

Sessions for the feedback ledger (graph/ops/feedback.py), so that what recall returned to an
agent and what the agent cited meet without it naming a session (a call's own `session_id`
wins):
- `memesh mcp`: the process is the session (`mcp:<random hex>`): a host starts one server
  per agent session, and the SDK keeps no connection object across requests of the 2026
  protocol.
- /mcp: the `Mcp-Session-Id` a stateful server issued. A stateless server (several workers)
  and the 2026 protocol's requests carry none, so there a call has no session of its own.
"""

from __future__ import annotations

import json
import secrets
import unicodedata
import warnings
from collections.abc import Awaitable, Callable, Mapping
from functools import cache, partial
from typing import Any

import anyio.to_thread
import mcp_types as types
from django.conf import settings
from django.db import close_old_connections
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from api.envelope import failure_for
from api.mcp_server import http as mcp_http
from api.mcp_server.early_stdio import INSTRUCTIONS, SERVER_NAME
from core.errors import Failure
from graph.ops.kit.fields import MAX_SESSION_ID_CHARS
from graph.ops.kit.operation import CallContext, Operation

SOURCE_HOST_MAX = 64
DEFAULT_SOURCE_HOST = "mcp"  # what the reference stamps when a client declares no name
# The `initialize` names the hosts' MCP clients declare (Codex 0.169, Gemini CLI 0.61; Claude
# Code declares `claude-code`), and the host names the reference stamps for them (its list:
# claude-code, codex, gemini-cli, …) — the names the hosts' hooks carry too (`codex-hooks`:
# core/hook_hosts.py). Any other name is stamped as declared.
CLIENT_HOSTS = {
    "claude-code": "claude-code",
    "codex-mcp-client": "codex",
    "gemini-cli-mcp-client": "gemini-cli",
}

# Awaited before each tool call: `memesh mcp` migrates the database in the background so
# that `initialize` never waits for it; a call must not run against an unmigrated schema.
ReadyGate = Callable[[], Awaitable[None]]


def sanitize_client_name(name: object) -> str:
    """The provenance stamp for a client's self-declared `initialize` name.

    Control and format characters are dropped (a name is displayed and logged; bidi overrides
    and newlines could forge what a reader sees), the rest is trimmed to 64 characters, and an
    empty result becomes `mcp`; a known host's client name becomes the host's (CLIENT_HOSTS).
    Mapped or not, the name is the client's own claim: nothing authenticates it.
    """
    if not isinstance(name, str):
        return DEFAULT_SOURCE_HOST
    kept = "".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf"))
    kept = kept.strip()[:SOURCE_HOST_MAX].strip()
    return CLIENT_HOSTS.get(kept, kept) or DEFAULT_SOURCE_HOST


def drop_nulls(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Top-level `null` arguments mean "not given": Gemini CLI sends every optional parameter,
    unset ones as null. Only the top level: a null inside an array or object is a real value,
    which the operation's schema judges (and rejects where it expects a string)."""
    return {key: value for key, value in (arguments or {}).items() if value is not None}


def client_source_host(ctx: ServerRequestContext[Any, Any]) -> str:
    """The `initialize` clientInfo name of this request's connection (on the 2026 protocol, the
    per-request envelope's, which the SDK exposes the same way)."""
    params = ctx.session.client_params
    if params is None:
        # A handshake-protocol client of a multi-worker server: the name it declared in
        # `initialize` came back in the session id (api/mcp_server/http.py).
        return sanitize_client_name(mcp_http.declared_client_name.get())
    return sanitize_client_name(params.client_info.name)


def connection_session(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The feedback session of a streamable-HTTP request: its `Mcp-Session-Id`, which a
    stateful server issued; None for one the stateless server minted (it names the client,
    not a session: api/mcp_server/http.py) or a request without one (the 2026 protocol)."""
    headers = getattr(ctx.request, "headers", None)
    value = headers.get(mcp_http.SESSION_HEADER.decode()) if headers is not None else None
    if not isinstance(value, str) or not value or value.startswith(mcp_http.SESSION_PREFIX):
        return None
    return f"mcp:{value}"[:MAX_SESSION_ID_CHARS]


ROOTS_KEY = "memesh/roots"  # our key in an InputRequiredResult's input_requests
ROOTS_TIMEOUT_SECONDS = 10


async def client_roots(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> tuple[str, ...] | types.InputRequiredResult:
    """The client's workspace roots (their URIs), for an operation that reads them; empty when
    the client declared no roots capability or could not answer.

    Handshake protocol: a roots/list request to the client. 2026 protocol (no server-initiated
    requests): the call is answered with an InputRequiredResult asking for roots/list, and the
    client sends the call again carrying the answer (`input_responses`), which is read here.
    https://modelcontextprotocol.io/specification/2025-06-18/client/roots
    """
    capabilities = ctx.session.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return ()
    answered = (params.input_responses or {}).get(ROOTS_KEY)
    if isinstance(answered, types.ListRootsResult):
        return tuple(str(root.uri) for root in answered.roots)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return types.InputRequiredResult(
            result_type="input_required",
            input_requests={ROOTS_KEY: types.ListRootsRequest(method="roots/list")},
        )
    try:
        with anyio.fail_after(ROOTS_TIMEOUT_SECONDS):
            with warnings.catch_warnings():
                # Deprecated by the 2026 protocol, still how handshake clients give roots.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                listed = await ctx.session.list_roots()
    except Exception:  # a client that cannot answer has given no root; the tool says so
        return ()
    return tuple(str(root.uri) for root in listed.roots)


def error_result(failure: Failure) -> types.CallToolResult:
    """A failed call, in-band: the REST envelope's JSON (api/envelope.py) as the text."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=failure.to_json())], is_error=True
    )


def success_result(operation: Operation, result: dict[str, Any]) -> types.CallToolResult:
    if operation.mcp_text is not None:
        # The operation's own MCP form (user_patterns: markdown), from its typed output.
        text = operation.mcp_text(operation.output_model.model_validate(result))
    else:
        text = json.dumps(result, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def run_operation(operation: Operation, arguments: dict[str, Any], context: CallContext) -> Any:
    """One call on a worker thread, with the database connection refreshed around it.

    The ORM is synchronous (it raises SynchronousOnlyOperation on the event loop), and this is a
    long-lived process: a connection broken or past CONN_MAX_AGE since the last call must be
    replaced before use, and released after, as Django's request cycle would.
    """
    close_old_connections()
    try:
        return operation.run(arguments, context)
    finally:
        close_old_connections()


# The registry (every operation's models, services and their imports) loads on the first
# tools/list or call, not before `initialize` is answered.
# With the peer switch on (graph/ops/peer/switch.py), the peer's memory_* tools too: read once,
# when the process first lists or calls a tool.
@cache
def _tools() -> tuple[types.Tool, ...]:
    from api.tool_schemas import tool_definitions

    return tuple(types.Tool.model_validate(defn) for defn in tool_definitions(_agent_tools()))


@cache
def _operations() -> dict[str, Operation]:
    return {op.name: op for op in _agent_tools()}


@cache
def _agent_tools() -> list[Operation]:
    from api.operations import agent_tools

    return agent_tools()


def _input_schema(name: str) -> dict[str, Any] | None:
    tool = next((t for t in _tools() if t.name == name), None)
    return tool.input_schema if tool is not None else None


def build_server(
    *,
    project: str | None,
    ready: ReadyGate | None = None,
    one_session: bool = False,
    process_session: str | None = None,
    recipient: str | None = None,
    on_request: Callable[[str, str | None], None] | None = None,
) -> Server[Any]:
    """The MCP server for one process. `project` is the session's bound project (the server's
    working directory): where remember files a memory and learn a lesson, whose scope recall,
    briefing, user_patterns and export read (graph/ops/kit/scope.py), and whose sessions may not
    write to another project's memory by name (the agent guide's rules, `guide_rules`).
    `one_session`: the whole process is one feedback session (stdio); otherwise each request
    names its own (`connection_session`); `process_session` names it (a new one otherwise).
    `recipient`: the principal id the process declared (MEMESH_RECIPIENT: messaging/), the
    messaging operation's default sender and inbox. `on_request` hears the client's declared
    name and the tool called (None: tools/list) on each request (api/mcp_server/presence.py keeps
    the process live)."""
    own_session = (process_session or f"mcp:{secrets.token_hex(12)}") if one_session else None

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if on_request is not None:
            on_request(client_source_host(ctx), None)
        return types.ListToolsResult(tools=list(_tools()))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        operation = _operations().get(params.name)
        if operation is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        roots: tuple[str, ...] | None = None
        if operation.wants_workspace_roots:
            asked = await client_roots(ctx, params)
            if isinstance(asked, types.InputRequiredResult):
                return asked
            roots = asked
        context = CallContext(
            source_host=client_source_host(ctx),
            project=project,
            guide_rules=True,
            session_id=own_session or connection_session(ctx),
            workspace_roots=roots,
            recipient=recipient,
        )
        if on_request is not None:
            on_request(context.source_host, operation.name)
        arguments = drop_nulls(params.arguments)
        try:
            if ready is not None:
                await ready()
            result = await anyio.to_thread.run_sync(
                partial(run_operation, operation, arguments, context)
            )
        except Exception as exc:
            # Every failure in-band, an unexpected one too (like REST's 500 envelope): the agent
            # sees a failed call it may correct or retry, not a dead server.
            return error_result(failure_for(exc, where=f"tool {operation.name}"))
        return success_result(operation, result)

    return Server(
        SERVER_NAME,
        version=str(getattr(settings, "VERSION", "")),
        instructions=INSTRUCTIONS,
        get_tool_input_schema=_input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
