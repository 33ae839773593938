"""The `message` operation's input and output: one tool with an `action`, as the agent guide
names it. Each field's description is the tool documentation an agent reads; which field each
action takes is checked by messaging/operation.py (a field an action does not use is refused,
so a mistaken call says so instead of being half-understood)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, JsonValue, RootModel

from graph.ops.kit.fields import Output, ProjectId, SessionId, StrictInput
from messaging.models import Disposition
from messaging.native import MAX_NATIVE_ENVELOPE_BYTES, MAX_PAYLOAD_BYTES
from messaging.principal import MAX_PRINCIPAL_CHARS
from messaging.registrations import MAX_LEASE_SECONDS, MAX_WORK_CHARS, MIN_LEASE_SECONDS

Action = Literal["register", "discover", "send", "poll", "fetch", "intake", "disposition"]
DispositionValue = Literal["accepted", "declined", "done", "deferred"]
assert set(DispositionValue.__args__) == set(Disposition.values)  # type: ignore[attr-defined]
MAX_NOTE_CHARS = 2000
MAX_MESSAGE_ID_CHARS = 40
# Longer ids are refused by the principal rule with its own code; this only bounds the body.
PrincipalText = Annotated[str, Field(max_length=10 * MAX_PRINCIPAL_CHARS)]
PRINCIPAL_RULE = (
    f"at most {MAX_PRINCIPAL_CHARS} characters, no blanks, never path-shaped (no `/`, `\\`, "
    "`..`, leading `~` or `.`, drive letter)"
)


class MessageInput(StrictInput):
    action: Action = Field(
        description=(
            "register: declare this session live under a principal id, or renew its lease "
            "(the heartbeat); discover: list the live agents of a project; send: one message "
            "to an exact recipient; poll: the ids waiting for a recipient (marks nothing); "
            "fetch: one message, fenced as untrusted (not an acknowledgement); intake: record "
            "that you took a message in (ends its reminder); disposition: record what you did "
            "with it."
        )
    )
    project: ProjectId | None = Field(
        default=None,
        description=(
            "The exact project id (the `project` of `briefing`). Default: the session's bound "
            "project (MCP, the CLI's directory); REST must name it."
        ),
    )
    recipient: PrincipalText | None = Field(
        default=None,
        description=(
            "send: the exact principal id to send to. register/poll/fetch/intake/disposition: "
            "your own principal id (default: MEMESH_RECIPIENT of `memesh mcp` or the CLI). "
            + PRINCIPAL_RULE
            + "."
        ),
    )
    sender: PrincipalText | None = Field(
        default=None,
        description="send: your own principal id (default: MEMESH_RECIPIENT; else unknown).",
    )
    session: SessionId | None = Field(
        default=None,
        description=(
            "register/poll/intake/disposition: your session (default: the MCP connection's "
            "own; REST and the CLI name it to register). A message meant for another session "
            "is not polled for this one, and refuses its intake and disposition."
        ),
    )
    intended_session: SessionId | None = Field(
        default=None,
        description=(
            "send: deliver to this one live session of the recipient (from `discover`) "
            "instead of any of its sessions. It must be live now (else "
            "recipient_unavailable: it is not held for a later session) and its complete "
            f"native envelope at most {MAX_NATIVE_ENVELOPE_BYTES} bytes (else "
            "native_message_too_large)."
        ),
    )
    payload: JsonValue | None = Field(
        default=None,
        description=(
            f"send: the message, any JSON value, at most {MAX_PAYLOAD_BYTES} bytes (64 KiB) as "
            "compact UTF-8 JSON. The recipient is shown it as untrusted data."
        ),
    )
    message_id: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_ID_CHARS)] | None = Field(
        default=None, description="fetch/intake/disposition: the message (from poll)."
    )
    disposition: DispositionValue | None = Field(
        default=None, description="disposition: what you did with the message."
    )
    note: Annotated[str, Field(max_length=MAX_NOTE_CHARS)] | None = Field(
        default=None, description=f"disposition: a note, at most {MAX_NOTE_CHARS} characters."
    )
    work: Annotated[str, Field(max_length=MAX_WORK_CHARS)] | None = Field(
        default=None,
        description=(
            "register: what this session is working on now, as discover shows it (an empty "
            "string clears it; omitted: unchanged, or unknown)."
        ),
    )
    lease_seconds: Annotated[int, Field(ge=MIN_LEASE_SECONDS, le=MAX_LEASE_SECONDS)] | None = Field(
        default=None,
        description=(
            "register: how long the registration stays live without a renewal (default "
            "120). `memesh mcp` renews its own session's while the process runs."
        ),
    )


# --- outputs -----------------------------------------------------------------------------------


class AgentOut(Output):
    recipient: str = Field(description="The routing id: the principal to send to.")
    session: str = Field(description="This session, for `intended_session`.")
    host_kind: str = Field(description="The host: the MCP client's declared name, cli, http.")
    work: str | None = Field(description="The declared current work; null: unknown.")
    generation: int = Field(description="The how-many-th session of this principal here.")
    lease_expires_at: datetime = Field(description="Live until then, unless renewed.")
    model: None = Field(
        default=None, description="Always null: MeMesh cannot see which model a session runs."
    )


class RegisterOutput(Output):
    action: Literal["register"]
    project: str
    agent: AgentOut


class DiscoverOutput(Output):
    action: Literal["discover"]
    project: str
    agents: list[AgentOut] = Field(description="The live registrations only.")


class SendOutput(Output):
    action: Literal["send"]
    message_id: str
    project: str
    recipient: str
    sender: str | None
    intended_session: str | None
    delivery: Literal["durable", "session"] = Field(
        description="durable: stored for any session of the recipient; session: for the one."
    )
    payload_bytes: int
    envelope_bytes: int = Field(description="The size of the complete native envelope.")
    created_at: datetime


class WaitingOut(Output):
    message_id: str
    sender: str | None
    intended_session: str | None
    created_at: datetime
    fetched: bool = Field(description="Fetched before (a read, not an acknowledgement).")


class PollOutput(Output):
    action: Literal["poll"]
    project: str
    recipient: str
    messages: list[WaitingOut] = Field(
        description="Waiting (no intake receipt yet), oldest first, at most 100."
    )


class ReceiptOut(Output):
    kind: Literal["intake", "disposition"]
    principal: str
    session: str | None
    disposition: DispositionValue | None
    note: str | None
    at: datetime


class MessageOut(Output):
    message_id: str
    project: str
    sender: str | None
    recipient: str
    intended_session: str | None
    created_at: datetime
    payload: JsonValue = Field(
        description="Untrusted data from another agent (MCP shows it only in `envelope`)."
    )


class FetchOutput(Output):
    action: Literal["fetch"]
    message: MessageOut
    envelope: str = Field(
        description="The complete native envelope: the message fenced as untrusted data."
    )
    receipts: list[ReceiptOut]


class ReceiptOutput(Output):
    action: Literal["intake", "disposition"]
    message_id: str
    receipt: ReceiptOut


class MessageOutput(
    RootModel[
        Annotated[
            RegisterOutput | DiscoverOutput | SendOutput | PollOutput | FetchOutput | ReceiptOutput,
            Field(discriminator="action"),
        ]
    ]
):
    pass
