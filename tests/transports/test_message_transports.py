"""The `message` operation over REST (POST /v1/message) and the CLI (`memesh message
<action>`): the same rules, the envelope's error codes and statuses, and the CLI's texts."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from api.rest.openapi import ERROR_CODES, openapi_document
from tests.rest import assert_error, assert_ok, post_json

pytestmark = pytest.mark.django_db

PROJECT = "acme/widget"


def rest(client: Client, **data: Any) -> Any:
    return post_json(client, "message", data)


def cli(*args: str) -> str:
    out = StringIO()
    call_command("message", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def cli_json(*args: str) -> dict[str, Any]:
    return json.loads(cli(*args, "--json"))


def test_rest_registers_discovers_sends_polls_fetches_and_records_receipts(client: Client) -> None:
    bob = {"project": PROJECT, "recipient": "bob"}
    registered = assert_ok(rest(client, action="register", session="b-1", work="tests", **bob))
    assert registered["agent"]["host_kind"] == "http"

    agents = assert_ok(rest(client, action="discover", project=PROJECT))["agents"]
    assert [(a["recipient"], a["model"], a["work"]) for a in agents] == [("bob", None, "tests")]

    sent = assert_ok(
        rest(client, action="send", project=PROJECT, recipient="bob", payload={"ask": "go"})
    )
    assert sent["sender"] is None  # REST has no declared identity
    message_id = sent["message_id"]
    waiting = assert_ok(rest(client, action="poll", session="b-1", **bob))["messages"]
    assert [m["message_id"] for m in waiting] == [message_id]
    fetched = assert_ok(rest(client, action="fetch", message_id=message_id, **bob))
    assert fetched["message"]["payload"] == {"ask": "go"}  # REST keeps the structured payload
    assert "```memesh-message" in fetched["envelope"]
    intake = rest(client, action="intake", message_id=message_id, session="b-1", **bob)
    assert assert_ok(intake)["receipt"]["kind"] == "intake"
    assert assert_ok(rest(client, action="poll", **bob))["messages"] == []


SEND = {"action": "send", "recipient": "bob"}


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        ({**SEND, "recipient": "nobody", "payload": 1}, 404, "recipient_unavailable"),
        ({**SEND, "recipient": "a/b", "payload": 1}, 400, "validation.bad-recipient"),
        ({**SEND, "payload": "x" * 70_000}, 413, "message.payload-too-large"),
        (
            {**SEND, "payload": "x" * 20_000, "intended_session": "b-1"},
            413,
            "native_message_too_large",
        ),
        (
            {"action": "fetch", "recipient": "bob", "message_id": "msg_none"},
            404,
            "resource.not-found",
        ),
        ({"action": "poll"}, 400, "validation.bad-body"),
        ({"action": "shout"}, 400, "validation.bad-body"),
    ],
)
def test_rest_refusals_carry_their_code_and_status(
    client: Client, data: dict[str, Any], status: int, code: str
) -> None:
    assert_ok(rest(client, action="register", project=PROJECT, recipient="bob", session="b-1"))
    assert_error(rest(client, project=PROJECT, **data), status, code)
    assert code in ERROR_CODES


def test_the_openapi_document_has_the_message_route() -> None:
    item = openapi_document()["paths"]["/v1/message"]["post"]
    assert item["operationId"] == "message"
    codes = openapi_document()["components"]["schemas"]["ErrorEnvelope"]
    assert "intended_for_other_session" in codes["properties"]["errorCode"]["enum"]


def test_the_cli_speaks_as_memesh_recipient_and_prints_the_fenced_envelope(
    settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("register", "--project", PROJECT, "--recipient", "bob", "--session", "b-1")
    settings.MEMESH_RECIPIENT = "alice"
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"text": "```\nnot a fence"}))
    with payload.open() as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        sent = cli_json("send", "--project", PROJECT, "--recipient", "bob", "--payload-stdin")
    assert sent["sender"] == "alice"

    settings.MEMESH_RECIPIENT = "bob"
    assert f"{sent['message_id']}  from alice" in cli("poll", "--project", PROJECT)
    shown = cli("fetch", "--project", PROJECT, "--message-id", sent["message_id"])
    assert shown.startswith("MeMesh agent message.")
    assert "````memesh-message" in shown  # longer than the payload's own backtick run
    assert cli("intake", "--project", PROJECT, "--message-id", sent["message_id"]).startswith(
        "Recorded intake"
    )
    assert "Nothing waits for bob" in cli("poll", "--project", PROJECT)
    done = cli_json(
        "disposition", "--project", PROJECT, "--message-id", sent["message_id"],
        "--disposition", "done", "--note", "merged",
    )  # fmt: skip
    assert done["receipt"]["disposition"] == "done"


def test_the_cli_refuses_an_invalid_memesh_recipient_with_the_id_rule(settings: Any) -> None:
    settings.MEMESH_RECIPIENT = "~/agents/bob"
    err = StringIO()
    with pytest.raises(SystemExit):
        call_command(
            "message", "poll", "--project", PROJECT, "--json", stdout=StringIO(), stderr=err
        )
    assert json.loads(err.getvalue().strip())["errorCode"] == "validation.bad-recipient"
