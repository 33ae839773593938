"""The refusals of agent messaging, each with its stable errorCode (docs/messages.md).

The agent guide names three of them, and they keep its spelling: `recipient_unavailable`,
`native_message_too_large`, `intended_for_other_session`. The two the guide does not name
follow memesh's own `family.kebab-case` style.
"""

from __future__ import annotations

from core.errors import MemeshError


class InvalidRecipient(MemeshError):
    """A principal id over 200 characters, shaped like a filesystem path, or with blanks or
    control characters (messaging/principal.py)."""

    error_code = "validation.bad-recipient"
    http_status = 400


class PayloadTooLarge(MemeshError):
    """The message's JSON payload is over 64 KiB serialized."""

    error_code = "message.payload-too-large"
    http_status = 413


class NativeMessageTooLarge(MemeshError):
    """The complete native envelope an exact-session delivery would hand the session is over
    16 KiB."""

    error_code = "native_message_too_large"
    http_status = 413


class RecipientUnavailable(MemeshError):
    """No such recipient to deliver to: an exact session that is not live, or a principal
    that is not live and was never seen in the project."""

    error_code = "recipient_unavailable"
    http_status = 404


class IntendedForOtherSession(MemeshError):
    """Intake or disposition of a message meant for another session of the principal."""

    error_code = "intended_for_other_session"
    http_status = 409


ERROR_CODES = (
    InvalidRecipient.error_code,
    PayloadTooLarge.error_code,
    NativeMessageTooLarge.error_code,
    RecipientUnavailable.error_code,
    IntendedForOtherSession.error_code,
)
