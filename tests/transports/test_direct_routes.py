"""api/rest/fast_path.py: the JSON operation routes answered without Django's request cycle, side by
side with Django's own answer to the same request (the bridge's WSGI path). Each request runs
on both paths from the same database state: Django's inside a savepoint rolled back after it,
then the direct one. Served end to end, every e2e test's remember and recall takes this path."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from a2wsgi.wsgi import build_environ
from django.db import transaction
from django.urls import resolve

from api.edge.wsgi_bridge import WSGIBridge
from api.operations import OPERATIONS
from api.rest import fast_path as direct
from memesh_site.wsgi import application
from tests.rest import asgi_scope

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_test_connection")]

BRIDGE = WSGIBridge(application, threads=1, max_body=1024 * 1024)  # type: ignore[arg-type]


def scope(
    path: str,
    body: bytes,
    *,
    method: str = "POST",
    content_type: str | None = "application/json",
    host: str | None = "127.0.0.1:3737",
    query: bytes = b"",
) -> dict[str, Any]:
    headers = [(b"content-length", str(len(body)).encode())]
    if host is not None:
        headers.append((b"host", host.encode()))
    if content_type is not None:
        headers.append((b"content-type", content_type.encode()))
    return asgi_scope(path, headers, method=method, query=query)


def through_django(request: dict[str, Any], body: bytes) -> tuple[int, list[Any], bytes]:
    with transaction.atomic():
        answer = BRIDGE.run(dict(build_environ(request, io.BytesIO(body))))  # type: ignore[arg-type]
        transaction.set_rollback(True)
    return answer


def both(request: dict[str, Any], body: bytes) -> tuple[Any, Any]:
    expected = through_django(request, body)
    answered = direct.answer(request, body)
    assert answered is not None, "the direct path declined a request it serves"
    return expected, answered


def without_clock(content: bytes) -> bytes:
    """The answer with the time it was written blanked (an export says when it was made)."""
    return re.sub(rb'"\d{4}-\d\d-\d\dT[0-9:.]+Z?"', b'"<time>"', content)


def remember(name: str, **extra: Any) -> bytes:
    return json.dumps({"name": name, "type": "note", "observations": ["o"], **extra}).encode()


SEED = remember("deploy checklist", observations=["canary first, then the fleet"], tags=["ops"])

CASES = {
    "remember, new": ("/v1/remember", remember("a new one", tags=["x"])),
    "remember, existing": ("/v1/remember", remember("deploy checklist")),
    "remember, invalid field": ("/v1/remember", b'{"name": ""}'),
    "remember, unknown field": ("/v1/remember", b'{"name": "n", "colour": "red"}'),
    "not JSON": ("/v1/remember", b'{"name":'),
    "a JSON array": ("/v1/remember", b"[1, 2]"),
    "nested too deep": ("/v1/remember", b"[" * 200 + b"]" * 200),
    "not UTF-8": ("/v1/remember", b'{"name": "\xff"}'),
    "recall": ("/v1/recall", b'{"query": "canary fleet", "limit": 5}'),
    "recall, no match": ("/v1/recall", b'{"query": "zzzz"}'),
    "recall, bad limit": ("/v1/recall", b'{"query": "canary", "limit": "many"}'),
    "forget, missing": ("/v1/forget", b'{"name": "never stored"}'),
    "export": ("/v1/export", b"{}"),
    "ping": ("/v1/ping", b"{}"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_direct_answer_is_djangos_answer(case):
    application(
        dict(build_environ(scope("/v1/remember", SEED), io.BytesIO(SEED))),  # type: ignore[arg-type]
        lambda status, headers, exc_info=None: None,
    )
    path, body = CASES[case]

    (status, headers, content), (d_status, d_headers, d_content) = both(scope(path, body), body)

    assert d_status == status
    assert sorted(d_headers) == sorted(headers)
    assert without_clock(d_content) == without_clock(content)


@pytest.mark.parametrize(
    "content_type", [None, "application/x-www-form-urlencoded", "application/json; charset=utf-8"]
)
def test_a_body_is_json_whatever_its_content_type_says(content_type):
    body = b'{"query": "anything"}'
    (status, headers, content), (d_status, d_headers, d_content) = both(
        scope("/v1/recall", body, content_type=content_type), body
    )

    assert d_status == status == 200
    assert sorted(d_headers) == sorted(headers)
    assert d_content == content


def test_a_query_string_changes_nothing_on_a_post_route():
    body = b'{"query": "anything"}'
    expected, answered = both(scope("/v1/recall", body, query=b"limit=1"), body)

    assert answered[0] == expected[0] == 200
    assert answered[2] == expected[2]


@pytest.mark.parametrize(
    ("label", "request_scope", "body"),
    [
        ("a GET", scope("/v1/remember", b"", method="GET"), b""),
        ("an OPTIONS", scope("/v1/remember", b"{}", method="OPTIONS"), b"{}"),
        ("an empty body (read from the headers alone)", scope("/v1/recall", b""), b""),
        ("a trailing slash", scope("/v1/recall/", b"{}"), b"{}"),
        ("a route that is no operation", scope("/v1/entities", b"{}"), b"{}"),
        ("a GET operation's route", scope("/v1/stats", b"{}"), b"{}"),
        ("the peer API", scope("/api/v1/memory_search", b"{}"), b"{}"),
        ("a foreign Host", scope("/v1/recall", b"{}", host="evil.example"), b"{}"),
        ("no Host", scope("/v1/recall", b"{}", host=None), b"{}"),
        (
            "another charset",
            scope("/v1/recall", b"{}", content_type="application/json; charset=latin-1"),
            b"{}",
        ),
        (
            "an unknown charset",
            scope("/v1/recall", b"{}", content_type="application/json; charset=nope"),
            b"{}",
        ),
    ],
)
def test_django_answers_what_the_direct_path_declines(label, request_scope, body):
    assert direct.answer(request_scope, body) is None, label


def test_a_foreign_host_still_gets_djangos_refusal():
    body = b'{"query": "x"}'
    request = scope("/v1/recall", body, host="evil.example")

    status, _headers, content = BRIDGE.answer(request, body)

    assert status == 400
    assert json.loads(content)["errorCode"] == "request.bad-host"


def test_every_direct_route_is_the_operation_view_django_routes_it_to():
    for path, operation in direct.ROUTES.items():
        view = resolve(path).func
        assert view.view_class.operation is operation, path  # type: ignore[attr-defined]
    posted = {op.name for op in OPERATIONS.values() if op.rest and op.method == "POST"}
    assert {op.name for op in direct.ROUTES.values()} == posted


def test_a_failed_request_is_logged_as_django_logs_it(caplog):
    body = b'{"name": ""}'
    with caplog.at_level("WARNING", logger="django.request"):
        through_django(scope("/v1/remember", body), body)
        django_lines = [(r.levelname, r.getMessage()) for r in caplog.records]
        caplog.clear()
        direct.answer(scope("/v1/remember", body), body)
        direct_lines = [(r.levelname, r.getMessage()) for r in caplog.records]

    assert direct_lines == django_lines == [("WARNING", "Bad Request: /v1/remember")]
