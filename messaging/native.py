"""The complete native envelope: the one text a recipient session is given for a message —
the untrusted-data preamble, then a fence holding the headers and the payload JSON.

Message text comes from another agent, so it is data, never instructions: it is shown only
inside a fence longer than any backtick run in it (core/fence.py's rule), and
the payload is JSON, whose strings cannot hold a raw newline — no line of the payload can
start a line of its own that closes the fence. Headers are ids that allow no blanks
(messaging/principal.py), session ids (visible ASCII) and a project id collapsed to one line.

Sizes are UTF-8 bytes: the payload as compact JSON (at most 64 KiB), and this whole envelope
(at most 16 KiB for an exact-session delivery).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from core.fence import MESSAGE_INFO, MESSAGE_PREAMBLE, untrusted_block
from graph.ops.briefing.render import clean

MAX_PAYLOAD_BYTES = 64 * 1024
MAX_NATIVE_ENVELOPE_BYTES = 16 * 1024


def payload_json(payload: object) -> str:
    """The payload as compact JSON: what its 64 KiB limit measures. ValueError for what JSON
    cannot carry (NaN, a lone surrogate)."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text.encode("utf-8")  # a lone surrogate raises UnicodeEncodeError, a ValueError
    return text


def payload_bytes(payload: object) -> int:
    return len(payload_json(payload).encode("utf-8"))


def sent_at_text(at: datetime) -> str:
    """A fixed-width UTC time, so an envelope's size does not depend on the clock."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def native_envelope(
    *,
    message_id: str,
    project: str,
    sender: str | None,
    recipient: str,
    intended_session: str | None,
    sent_at: datetime,
    payload: object,
) -> str:
    body = "\n".join(
        [
            f"message_id: {message_id}",
            f"project: {clean(project, 600)}",
            f"from: {sender or 'unknown (the sender declared no id)'}",
            f"to: {recipient}",
            f"intended_session: {intended_session or 'any session of the recipient'}",
            f"sent_at: {sent_at_text(sent_at)}",
            "payload (JSON):",
            json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False),
        ]
    )
    return untrusted_block(body, preamble=MESSAGE_PREAMBLE, info=MESSAGE_INFO)


def envelope_bytes(text: str) -> int:
    return len(text.encode("utf-8"))
