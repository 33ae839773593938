"""`memesh message <action>`: agents talking to each other (the `message` operation,
messaging/operation.py; docs/messages.md). `register`, `discover`, `send`, `poll`, `fetch`,
`intake`, `disposition`; who you are comes from --recipient or MEMESH_RECIPIENT.

A payload is JSON, given with --payload or read from stdin with --payload-stdin (which keeps
it out of the process list). A fetched message is printed as its fenced envelope: it is
untrusted data from another agent, and is shown only inside the fence.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from core import json_limits
from core.errors import InvalidInput
from messaging.operation import MESSAGE
from messaging.schema import MessageInput

ACTIONS = list(MessageInput.model_fields["action"].annotation.__args__)  # type: ignore[union-attr]
TEXT_OPTIONS = (
    "project",
    "recipient",
    "sender",
    "session",
    "intended_session",
    "message_id",
    "disposition",
    "note",
    "work",
    "lease_seconds",
)


def _json_payload(text: str, where: str) -> object:
    try:
        return json_limits.loads(text)
    except json_limits.JSONTooDeep as exc:
        raise InvalidInput(f"{where} {exc}", field="payload") from None
    except ValueError as exc:
        raise InvalidInput(f"{where} is not JSON: {exc}", field="payload") from None


class Command(OperationCommand):
    help = (
        "Messages between agents: register, discover, send, poll, fetch, intake, disposition "
        "(docs/messages.md)."
    )
    operation = MESSAGE

    def add_operation_arguments(self, parser: CommandParser) -> None:
        help_of = MESSAGE.field_help
        parser.add_argument("action", nargs="?", choices=ACTIONS, help=help_of("action"))
        parser.add_argument("--project", help=help_of("project"))
        parser.add_argument("--recipient", help=help_of("recipient"))
        parser.add_argument("--sender", help=help_of("sender"))
        parser.add_argument("--session", help=help_of("session"))
        parser.add_argument(
            "--intended-session", dest="intended_session", help=help_of("intended_session")
        )
        parser.add_argument("--payload", metavar="JSON", help=help_of("payload"))
        parser.add_argument(
            "--payload-stdin",
            dest="payload_stdin",
            action="store_true",
            help="Read the payload JSON from standard input.",
        )
        parser.add_argument("--message-id", dest="message_id", help=help_of("message_id"))
        parser.add_argument(
            "--disposition",
            choices=MESSAGE.field_choices("disposition"),
            help=help_of("disposition"),
        )
        parser.add_argument("--note", help=help_of("note"))
        parser.add_argument("--work", help=help_of("work"))
        parser.add_argument(
            "--lease-seconds", dest="lease_seconds", type=int, help=help_of("lease_seconds")
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        if options["action"] is None:
            raise InvalidInput("an action is required (or --input)", field="action")
        data: dict[str, Any] = {"action": options["action"], **given(options, *TEXT_OPTIONS)}
        if options["payload"] is not None and options["payload_stdin"]:
            raise InvalidInput("give --payload or --payload-stdin, not both", field="payload")
        if options["payload"] is not None:
            data["payload"] = _json_payload(options["payload"], "--payload")
        elif options["payload_stdin"]:
            data["payload"] = _json_payload(sys.stdin.read(), "the payload on stdin")
        return data

    def render(self, result: dict[str, Any]) -> None:
        self.stdout.write(self._text(result))

    def _text(self, result: dict[str, Any]) -> str:
        action = result["action"]
        if action == "register":
            agent = result["agent"]
            return (
                f"Registered {agent['recipient']} (session {agent['session']}, generation "
                f"{agent['generation']}) in {result['project']} until {agent['lease_expires_at']}."
            )
        if action == "discover":
            if not result["agents"]:
                return f"No live agents in {result['project']}."
            lines = [f"Live agents in {result['project']}:"]
            for a in result["agents"]:
                work = a["work"] if a["work"] is not None else "unknown"
                lines.append(
                    f"  {a['recipient']}  session {a['session']}  {a['host_kind']}  "
                    f"generation {a['generation']}  until {a['lease_expires_at']}  work: {work}"
                )
            return "\n".join(lines)
        if action == "send":
            return (
                f"Sent {result['message_id']} to {result['recipient']} in {result['project']} "
                f"({result['delivery']}, {result['payload_bytes']} bytes)."
            )
        if action == "poll":
            if not result["messages"]:
                return f"Nothing waits for {result['recipient']} in {result['project']}."
            lines = [f"Waiting for {result['recipient']} in {result['project']}:"]
            lines += [
                f"  {m['message_id']}  from {m['sender'] or 'unknown'}  {m['created_at']}"
                + ("  (fetched)" if m["fetched"] else "")
                for m in result["messages"]
            ]
            return "\n".join(lines)
        if action == "fetch":
            return str(result["envelope"])
        receipt = result["receipt"]
        what = receipt["disposition"] if action == "disposition" else "intake"
        return f"Recorded {what} of {result['message_id']}."
