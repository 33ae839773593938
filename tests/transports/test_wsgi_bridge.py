"""api/edge/wsgi_bridge.py: Django under ASGI, the body read on the loop and the whole answer
sent back at once. (Served end to end by tests/e2e/test_serve.py; these feed it ASGI messages.)"""

from __future__ import annotations

import json
from typing import Any

import anyio

from api.edge.wsgi_bridge import WSGIBridge
from tests.rest import asgi_scope


def echo_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    start_response("201 Created", [("Content-Type", "application/json")])
    return [json.dumps({"path": environ["PATH_INFO"], "body": body.decode()}).encode()]


def scope(body_length: int | None) -> dict[str, Any]:
    headers = [] if body_length is None else [(b"content-length", str(body_length).encode())]
    return asgi_scope("/v1/recall", headers)


def serve(
    bridge: WSGIBridge, request: dict[str, Any], messages: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    pending = list(messages)

    async def receive() -> dict[str, Any]:
        return pending.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(bridge, request, receive, send)
    return sent


def test_a_body_in_several_messages_reaches_the_app_whole():
    bridge = WSGIBridge(echo_app, threads=2, max_body=1024)
    parts = [b'{"query": ', b'"sign', b'ing"}']
    messages = [{"type": "http.request", "body": p, "more_body": True} for p in parts[:-1]]
    messages.append({"type": "http.request", "body": parts[-1], "more_body": False})

    start, body = serve(bridge, scope(sum(map(len, parts))), messages)

    assert start["status"] == 201
    assert (b"content-type", b"application/json") in start["headers"]
    assert json.loads(body["body"]) == {"path": "/v1/recall", "body": '{"query": "signing"}'}


def test_a_body_over_the_limit_is_never_read():
    """The app (Django's body-limit middleware) answers from the headers alone."""
    bridge = WSGIBridge(echo_app, threads=2, max_body=10)

    sent = serve(bridge, scope(11), [])  # nothing to receive: a read would fail the test

    assert json.loads(sent[1]["body"])["body"] == ""


def test_a_client_gone_mid_body_gets_no_answer():
    bridge = WSGIBridge(echo_app, threads=2, max_body=1024)
    messages = [
        {"type": "http.request", "body": b'{"que', "more_body": True},
        {"type": "http.disconnect"},
    ]

    assert serve(bridge, scope(20), messages) == []
