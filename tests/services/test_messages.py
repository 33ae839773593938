"""Messages between agents (messaging/, docs/messages.md) through the `message` operation on the
real database: registration and discovery, the send rules and their exact byte limits, and
what poll, fetch, intake and disposition do and do not record."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from core.errors import InvalidInput, NotFound
from graph.ops.kit.operation import CallContext
from messaging.errors import (
    IntendedForOtherSession,
    InvalidRecipient,
    NativeMessageTooLarge,
    PayloadTooLarge,
    RecipientUnavailable,
)
from messaging.models import Message, Receipt, Registration
from messaging.native import MAX_NATIVE_ENVELOPE_BYTES, MAX_PAYLOAD_BYTES, native_envelope
from messaging.operation import MESSAGE
from messaging.registrations import session_leases_end, session_leases_renew

pytestmark = pytest.mark.django_db

PROJECT = "acme/widget"
ALICE = CallContext(source_host="claude-code", project=PROJECT, session_id="a-1", recipient="alice")
BOB = CallContext(source_host="codex", project=PROJECT, session_id="b-1", recipient="bob")
BOB_TWO = CallContext(source_host="codex", project=PROJECT, session_id="b-2", recipient="bob")
REST = CallContext(source_host="http", binds_reads=False)


def call(ctx: CallContext, **data: Any) -> dict[str, Any]:
    return MESSAGE.run(data, ctx)


def register(ctx: CallContext, **data: Any) -> dict[str, Any]:
    return call(ctx, action="register", **data)


def send(payload: object = None, **data: Any) -> dict[str, Any]:
    return call(ALICE, action="send", recipient="bob", payload=payload or {"ask": "review"}, **data)


def test_discover_lists_live_registrations_with_model_null_and_unknown_work() -> None:
    register(BOB, work="reviewing auth")
    register(ALICE)

    agents = call(ALICE, action="discover")["agents"]

    assert [(a["recipient"], a["session"], a["host_kind"], a["work"]) for a in agents] == [
        ("alice", "a-1", "claude-code", None),
        ("bob", "b-1", "codex", "reviewing auth"),
    ]
    assert all(a["model"] is None and a["generation"] == 1 for a in agents)


def test_a_new_session_of_a_principal_is_the_next_generation_and_a_renewal_keeps_its_own() -> None:
    assert register(BOB)["agent"]["generation"] == 1
    assert register(BOB_TWO)["agent"]["generation"] == 2
    renewed = register(BOB, work="")["agent"]
    assert (renewed["generation"], renewed["work"]) == (1, None)


def test_a_lapsed_lease_is_not_listed_and_a_renewal_does_not_revive_it() -> None:
    register(BOB)
    Registration.objects.update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    assert call(ALICE, action="discover")["agents"] == []
    assert session_leases_renew(session="b-1") == 0


def test_a_stopping_process_ends_its_leases_at_once() -> None:
    register(BOB)
    assert session_leases_end(session="b-1") == 1
    assert call(ALICE, action="discover")["agents"] == []


def test_registering_needs_a_session_where_the_transport_has_none() -> None:
    with pytest.raises(InvalidInput) as refused:
        call(REST, action="register", project=PROJECT, recipient="bob")
    assert refused.value.field == "session"


def test_a_message_to_a_principal_never_seen_in_the_project_is_recipient_unavailable() -> None:
    register(BOB)  # bob is known in acme/widget, not in another project
    with pytest.raises(RecipientUnavailable):
        send(project="other/project")
    with pytest.raises(RecipientUnavailable):
        call(ALICE, action="send", recipient="carol", payload=1)
    assert not Message.objects.exists()


def test_a_principal_once_registered_still_gets_durable_mail_after_its_lease_lapsed() -> None:
    register(BOB)
    Registration.objects.update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    sent = send()

    assert (sent["delivery"], sent["sender"], sent["intended_session"]) == (
        "durable",
        "alice",
        None,
    )


def test_the_payload_may_be_64_kib_and_not_one_byte_more() -> None:
    register(BOB)
    exact = "x" * (MAX_PAYLOAD_BYTES - 2)  # a JSON string: two quotes

    assert send(exact)["payload_bytes"] == MAX_PAYLOAD_BYTES
    with pytest.raises(PayloadTooLarge):
        send(exact + "x")
    assert Message.objects.count() == 1


def test_a_multibyte_payload_is_measured_in_utf8_bytes() -> None:
    register(BOB)
    with pytest.raises(PayloadTooLarge):
        send("é" * (MAX_PAYLOAD_BYTES // 2))  # 65,536 bytes of text, + 2 quotes


def session_envelope_size(text: str, session: str) -> int:
    """The envelope of a message of `text` from alice to bob's `session` (ids are one length,
    the time fixed width: its size is the one the send measures)."""
    return len(
        native_envelope(
            message_id="msg_" + "0" * 24,
            project=PROJECT,
            sender="alice",
            recipient="bob",
            intended_session=session,
            sent_at=timezone.now(),
            payload=text,
        ).encode("utf-8")
    )


def test_an_exact_session_envelope_may_be_16_kib_and_not_one_byte_more() -> None:
    register(BOB)
    base = session_envelope_size("", "b-1")
    exact = "y" * (MAX_NATIVE_ENVELOPE_BYTES - base)
    assert session_envelope_size(exact, "b-1") == MAX_NATIVE_ENVELOPE_BYTES

    sent = send(exact, intended_session="b-1")
    assert (sent["delivery"], sent["envelope_bytes"]) == ("session", MAX_NATIVE_ENVELOPE_BYTES)
    with pytest.raises(NativeMessageTooLarge):
        send(exact + "y", intended_session="b-1")
    # A durable message of the same size is not a native delivery: only the 64 KiB rule.
    assert send(exact + "y")["delivery"] == "durable"


def test_an_exact_session_delivery_needs_that_session_live_now() -> None:
    register(BOB)
    with pytest.raises(RecipientUnavailable):
        send(intended_session="b-9")
    Registration.objects.update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(RecipientUnavailable):
        send(intended_session="b-1")


@pytest.mark.parametrize("field", ["recipient", "sender"])
@pytest.mark.parametrize("bad", ["../bob", "a" * 201])
def test_path_shaped_or_overlong_ids_are_refused_with_their_own_code(field: str, bad: str) -> None:
    register(BOB)
    with pytest.raises(InvalidRecipient) as refused:
        call(ALICE, action="send", payload=1, **{"recipient": "bob", field: bad})
    assert refused.value.field == field
    assert not Message.objects.exists()


def test_a_field_the_action_does_not_use_is_refused() -> None:
    with pytest.raises(InvalidInput) as refused:
        call(ALICE, action="discover", payload={"x": 1})
    assert refused.value.field == "payload"


def test_poll_lists_what_waits_and_fetch_does_not_acknowledge() -> None:
    register(BOB)
    first, second = send({"n": 1})["message_id"], send({"n": 2})["message_id"]

    polled = call(BOB, action="poll")["messages"]
    assert [m["message_id"] for m in polled] == [first, second]
    assert not any(m["fetched"] for m in polled)

    fetched = call(BOB, action="fetch", message_id=first)
    assert fetched["message"]["payload"] == {"n": 1}
    assert fetched["envelope"].startswith("MeMesh agent message.")
    assert fetched["receipts"] == []
    assert not Receipt.objects.exists()
    # Still waiting: a read is no intake.
    again = call(BOB, action="poll")["messages"]
    assert [(m["message_id"], m["fetched"]) for m in again] == [(first, True), (second, False)]


def test_intake_ends_the_wait_and_disposition_is_a_separate_receipt() -> None:
    register(BOB)
    message_id = send()["message_id"]

    intake = call(BOB, action="intake", message_id=message_id)
    assert intake["receipt"] | {"at": None} == {
        "kind": "intake",
        "principal": "bob",
        "session": "b-1",
        "disposition": None,
        "note": None,
        "at": None,
    }
    assert call(BOB, action="intake", message_id=message_id)["receipt"] == intake["receipt"]
    assert call(BOB, action="poll")["messages"] == []

    done = call(BOB, action="disposition", message_id=message_id, disposition="done", note="ok")
    assert (done["receipt"]["disposition"], done["receipt"]["note"]) == ("done", "ok")
    kinds = [r["kind"] for r in call(BOB, action="fetch", message_id=message_id)["receipts"]]
    assert kinds == ["intake", "disposition"]


def test_a_disposition_implies_no_intake() -> None:
    register(BOB)
    message_id = send()["message_id"]
    call(BOB, action="disposition", message_id=message_id, disposition="declined")
    assert [m["message_id"] for m in call(BOB, action="poll")["messages"]] == [message_id]


def test_a_message_for_one_session_is_refused_to_the_other_and_not_polled_there() -> None:
    register(BOB)
    register(BOB_TWO)
    message_id = send(intended_session="b-2")["message_id"]

    assert call(BOB, action="poll")["messages"] == []
    for action in ("intake", "disposition"):
        extra = {"disposition": "accepted"} if action == "disposition" else {}
        with pytest.raises(IntendedForOtherSession):
            call(BOB, action=action, message_id=message_id, **extra)
    assert not Receipt.objects.exists()

    assert [m["message_id"] for m in call(BOB_TWO, action="poll")["messages"]] == [message_id]
    assert call(BOB_TWO, action="intake", message_id=message_id)["receipt"]["session"] == "b-2"


def test_an_inbox_is_read_with_its_exact_project_and_recipient() -> None:
    register(BOB)
    message_id = send()["message_id"]
    with pytest.raises(NotFound):
        call(ALICE, action="fetch", message_id=message_id)  # alice's inbox, not bob's
    with pytest.raises(NotFound):
        call(BOB, action="fetch", project="other/project", message_id=message_id)


def test_rest_names_the_project_and_the_recipient() -> None:
    with pytest.raises(InvalidInput) as refused:
        call(REST, action="poll", recipient="bob")
    assert refused.value.field == "project"
    with pytest.raises(InvalidInput) as refused:
        call(REST, action="poll", project=PROJECT)
    assert refused.value.field == "recipient"


def briefing(**data: Any) -> dict[str, Any]:
    from graph.ops.briefing import BRIEFING

    return BRIEFING.run(data, BOB)


def test_a_briefing_for_an_exact_project_and_recipient_lists_only_unfetched_deliveries() -> None:
    register(BOB)
    read_id = send({"n": 1})["message_id"]
    waiting_id = send({"n": "```\\nsecret text"})["message_id"]
    call(BOB, action="fetch", message_id=read_id)

    text = briefing(project=PROJECT, recipient="bob")["text"]
    assert waiting_id in text and read_id not in text
    assert "from alice" in text and "secret text" not in text  # ids only: text is fetched
    # Without a recipient, or for another one, a briefing shows no messages.
    assert waiting_id not in briefing(project=PROJECT)["text"]
    assert waiting_id not in briefing(project=PROJECT, recipient="carol")["text"]


def test_a_briefing_recipient_needs_an_exact_project_and_a_valid_id() -> None:
    with pytest.raises(InvalidInput):
        briefing(recipient="bob")
    with pytest.raises(InvalidRecipient):
        briefing(project=PROJECT, recipient="../bob")
