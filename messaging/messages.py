"""Messages between agents: send, poll, fetch, and the recipient's receipts (intake,
disposition). The rules, once, for every transport (docs/messages.md):

- A send names the exact project and recipient principal. Without `intended_session` it is
  durable store-and-forward: accepted when the principal is live in the project or was ever
  registered there, else `recipient_unavailable`. With `intended_session` it is an
  exact-session delivery: that session must be live now (else `recipient_unavailable`; it is
  not held for a later registration) and its complete native envelope at most 16 KiB (else
  `native_message_too_large`). The payload is at most 64 KiB as compact JSON, always.
- Poll lists what waits (no intake receipt yet) and changes nothing. Fetch returns one message
  and its envelope and records only that it was read once (`first_fetched_at`): no receipt, so
  it ends no reminder. Intake and disposition are receipts, separate facts; a message meant for
  another session refuses both with `intended_for_other_session`.
A message of another project or recipient is `resource.not-found`: an inbox is read with its
exact project and principal.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from core.errors import InvalidInput, NotFound
from messaging.errors import (
    IntendedForOtherSession,
    NativeMessageTooLarge,
    PayloadTooLarge,
    RecipientUnavailable,
)
from messaging.models import Message, Receipt, ReceiptKind
from messaging.native import (
    MAX_NATIVE_ENVELOPE_BYTES,
    MAX_PAYLOAD_BYTES,
    envelope_bytes,
    native_envelope,
    payload_bytes,
)
from messaging.registrations import principal_known_in, session_is_live

MESSAGE_ID_PREFIX = "msg_"
MAX_POLL = 100


def new_message_id() -> str:
    return MESSAGE_ID_PREFIX + secrets.token_hex(12)


def envelope_of(message: Message) -> str:
    return native_envelope(
        message_id=message.message_id,
        project=message.project,
        sender=message.sender,
        recipient=message.recipient,
        intended_session=message.intended_session,
        sent_at=message.created_at,
        payload=message.payload,
    )


@dataclass(frozen=True)
class Sent:
    message: Message
    envelope_bytes: int


@transaction.atomic
def message_send(
    *,
    project: str,
    recipient: str,
    payload: object,
    sender: str | None,
    intended_session: str | None,
    source_host: str,
    now: datetime | None = None,
) -> Sent:
    now = now or timezone.now()
    try:
        size = payload_bytes(payload)
    except ValueError as exc:
        raise InvalidInput(f"payload: must be JSON ({exc})", field="payload") from None
    if size > MAX_PAYLOAD_BYTES:
        raise PayloadTooLarge(
            f"The payload is {size} bytes as JSON; at most {MAX_PAYLOAD_BYTES} (64 KiB)",
            field="payload",
        )
    message = Message(
        message_id=new_message_id(),
        project=project,
        sender=sender,
        recipient=recipient,
        intended_session=intended_session,
        payload=payload,
        payload_bytes=size,
        source_host=source_host,
        created_at=now,
    )
    envelope_size = envelope_bytes(envelope_of(message))
    if intended_session is not None:
        if not session_is_live(
            project=project, principal=recipient, session=intended_session, now=now
        ):
            raise RecipientUnavailable(
                f"Session {intended_session} of {recipient} is not live in {project}: an "
                "exact-session delivery needs a live registration and is not held for a later "
                "one; send again when it is live, or send without intended_session"
            )
        if envelope_size > MAX_NATIVE_ENVELOPE_BYTES:
            raise NativeMessageTooLarge(
                f"The complete native envelope would be {envelope_size} bytes; at most "
                f"{MAX_NATIVE_ENVELOPE_BYTES} (16 KiB) for an exact-session delivery",
                field="payload",
            )
    elif not principal_known_in(project=project, principal=recipient):
        raise RecipientUnavailable(
            f"No agent {recipient} is live in {project}, and none was ever registered there; "
            "`message discover` lists the live ones"
        )
    message.save()
    return Sent(message=message, envelope_bytes=envelope_size)


def _waiting(project: str | None, recipient: str, session: str | None) -> QuerySet[Message]:
    """Messages for `recipient` (in `project`, or any) with no intake receipt, that `session`
    may take in: those meant for any session, and those meant for it (all, when the caller
    names no session)."""
    messages = Message.objects.filter(recipient=recipient).exclude(
        receipts__kind=ReceiptKind.INTAKE
    )
    if project is not None:
        messages = messages.filter(project=project)
    if session is not None:
        messages = messages.filter(Q(intended_session__isnull=True) | Q(intended_session=session))
    return messages


def message_poll(*, project: str, recipient: str, session: str | None) -> list[Message]:
    """What waits for `recipient` in `project`, oldest first; nothing is marked."""
    return list(_waiting(project, recipient, session).order_by("created_at", "pk")[:MAX_POLL])


def _message(project: str, recipient: str, message_id: str) -> Message:
    message = Message.objects.filter(
        message_id=message_id, project=project, recipient=recipient
    ).first()
    if message is None:
        raise NotFound(f"No message {message_id} for {recipient} in {project}", field="message_id")
    return message


@transaction.atomic
def message_fetch(
    *, project: str, recipient: str, message_id: str, now: datetime | None = None
) -> Message:
    """One message; its first fetch is noted (a delivery read, not an acknowledgement)."""
    message = _message(project, recipient, message_id)
    if message.first_fetched_at is None:
        message.first_fetched_at = now or timezone.now()
        Message.objects.filter(pk=message.pk, first_fetched_at__isnull=True).update(
            first_fetched_at=message.first_fetched_at
        )
    return message


def _check_session(message: Message, session: str | None) -> None:
    if message.intended_session is not None and message.intended_session != session:
        raise IntendedForOtherSession(
            f"Message {message.message_id} is meant for session {message.intended_session}, "
            "not this one: leave it for its session"
        )


@transaction.atomic
def message_intake(
    *,
    project: str,
    recipient: str,
    message_id: str,
    session: str | None,
    source_host: str,
    now: datetime | None = None,
) -> tuple[Message, Receipt]:
    """Record that `recipient` took the message in (once per session: again returns the
    first receipt)."""
    message = _message(project, recipient, message_id)
    _check_session(message, session)
    existing = Receipt.objects.filter(
        message=message, kind=ReceiptKind.INTAKE, session=session
    ).first()
    if existing is not None:
        return message, existing
    receipt = Receipt.objects.create(
        message=message,
        kind=ReceiptKind.INTAKE,
        principal=recipient,
        session=session,
        source_host=source_host,
        at=now or timezone.now(),
    )
    return message, receipt


@transaction.atomic
def message_disposition(
    *,
    project: str,
    recipient: str,
    message_id: str,
    disposition: str,
    note: str | None,
    session: str | None,
    source_host: str,
    now: datetime | None = None,
) -> tuple[Message, Receipt]:
    """Record what `recipient` did with the message; each call is a new receipt (the latest
    says where it stands). It implies no intake."""
    message = _message(project, recipient, message_id)
    _check_session(message, session)
    receipt = Receipt.objects.create(
        message=message,
        kind=ReceiptKind.DISPOSITION,
        principal=recipient,
        session=session,
        disposition=disposition,
        note=note,
        source_host=source_host,
        at=now or timezone.now(),
    )
    return message, receipt


def receipts_of(message: Message) -> list[Receipt]:
    return list(message.receipts.order_by("at", "pk"))


# --- the inbox as the hooks show it ------------------------------------------------------------


def waiting_by_project(*, recipient: str, session: str | None) -> dict[str, int]:
    """How many messages wait for `recipient`, per project (SessionStart's notice)."""
    rows = (
        _waiting(None, recipient, session)
        .values("project")
        .annotate(waiting=Count("pk"))
        .order_by("project")
    )
    return {row["project"]: row["waiting"] for row in rows}


def unacknowledged_ids(*, project: str, recipient: str, session: str | None) -> list[str]:
    """The ids of what waits for `recipient` in `project` (the Stop hook's block)."""
    return [
        m.message_id for m in message_poll(project=project, recipient=recipient, session=session)
    ]
