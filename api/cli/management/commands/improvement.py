"""`memesh improvement propose|status|accept|reject` (POST /v1/improvement for the first two;
dream/improvement.py). propose and status are the agent tool's; accept and reject are a
person's, here as in /review/, through the proposals' review services with the same audit
record (channel `cli`, the OS user, this host)."""

from __future__ import annotations

import getpass
import json
import socket
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from core.errors import Failure, InvalidInput
from dream.improvement import IMPROVEMENT, improvement_accept, improvement_reject
from proposals.models import ReviewChannel
from proposals.results import AcceptResult, RejectResult
from proposals.schemas import MAX_REASON_CHARS

HUMAN_ACTIONS = ("accept", "reject")


def _reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def _evidence(raw: str) -> list[int]:
    try:
        return [int(part) for part in raw.replace(" ", "").split(",") if part]
    except ValueError:
        raise InvalidInput(
            f"--evidence must be memory ids separated by commas (got {raw!r})", field="evidence"
        ) from None


class Command(OperationCommand):
    help = (
        f"{IMPROVEMENT.summary} A person accepts or rejects one here with "
        "`memesh improvement accept|reject ID`."
    )
    operation = IMPROVEMENT

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        # The CLI takes two actions more than the operation: a person's accept and reject,
        # which go to the review services (_review), never to the operation.
        parser.add_argument(
            "action",
            nargs="?",
            help=f"{op.field_help('action')} On the command line a person may also "
            "accept | reject ID.",
        )
        parser.add_argument(
            "id",
            nargs="?",
            type=int,
            help=f"{op.field_help('id')} accept, reject (required): its id too.",
        )
        parser.add_argument("--title", help=op.field_help("title"))
        parser.add_argument("--description", help=op.field_help("description"))
        # One comma-separated value where the field is a list.
        parser.add_argument(
            "--evidence", help=f"{op.field_help('evidence')} Comma-separated: 1,5,9."
        )
        # accept's and reject's own: no field of the operation.
        parser.add_argument(
            "--reason", default="", help=f"reject: why (at most {MAX_REASON_CHARS} characters)."
        )

    def error_text(self, failure: Failure) -> str:
        return f"{super().error_text(failure)} ({failure.error_code})"

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] in HUMAN_ACTIONS and not options["input"]:
            self._review(options)
            return
        super().handle(*args, **options)

    def _review(self, options: dict[str, Any]) -> None:
        if options["id"] is None:
            raise InvalidInput(f"{options['action']} needs the improvement's id", field="id")
        review = {
            "channel": ReviewChannel.CLI,
            "reviewer": _reviewer(),
            "origin": socket.gethostname(),
        }
        result: AcceptResult | RejectResult
        if options["action"] == "accept":
            result = improvement_accept(options["id"], **review)
        else:
            result = improvement_reject(options["id"], reason=options["reason"], **review)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            verb = "accepted" if options["action"] == "accept" else "rejected"
            self.stdout.write(f"Improvement #{options['id']} {verb}.")

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(options, "action", "title", "description", "id")
        if options["evidence"] is not None:
            payload["evidence"] = _evidence(options["evidence"])
        return payload

    def render(self, result: dict[str, Any]) -> None:
        line = f"Improvement #{result['id']} ({result['status']}): {result['title']}"
        if result.get("created") is False:
            line += " — already proposed; nothing new was staged"
        self.stdout.write(line)
        if result["reason"]:
            self.stdout.write(f"Reason: {result['reason']}")
