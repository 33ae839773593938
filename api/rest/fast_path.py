"""The JSON operation routes answered without Django's request cycle.

A `POST /v1/<operation>` is one operation called on a JSON body: OperationView does nothing
else. Django's handler, its middleware chain and DRF's dispatch around it cost ~0.4 ms of a
~1 ms remember (the request thread, profiled in process), a third of the server's work on the
most frequent request. The server's bridge (api/edge/wsgi_bridge.py) offers each request
here first; this module answers the ones it can answer exactly as Django would, byte for byte
(tests/transports/test_direct_routes.py holds the two side by side), and declines the rest,
which then take Django's path as before:

- only POST, only an operation's own route, only a body that was read (non-empty, within the
  1 MB limit: the 411/413 answers stay the middleware's);
- only a Host that ALLOWED_HOSTS accepts (Django answers a foreign one with its 400);
- only a body in UTF-8 (a declared other charset is decoded by Django's request).

What it keeps of Django's cycle: the request_started/request_finished signals (their receivers
tidy the connections), the response headers of the middleware (security headers, DRF's
`Allow`, Content-Length), the same parser and error envelope (a bad body, a validation error
and an unexpected exception read as they did), and django.request's log line for a 4xx/5xx.
"""

from __future__ import annotations

import codecs
import io
import logging
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core import signals
from django.http.request import split_domain_port, validate_host
from rest_framework.renderers import JSONRenderer

from api import envelope
from api.envelope import failure_for
from api.operations import OPERATIONS
from api.rest.middleware import SECURITY_HEADERS
from api.rest.parsers import AnyContentJSONParser
from api.rest.views import HTTP_CONTEXT
from graph.ops.kit.operation import Operation

Headers = list[tuple[bytes, bytes]]
Answer = tuple[int, Headers, bytes]

ROUTES: dict[str, Operation] = {
    f"/v1/{op.rest_route}": op for op in OPERATIONS.values() if op.rest and op.method == "POST"
}

# What Django's middleware and DRF put on an operation's answer besides the body's length:
# the security headers (api/rest/middleware.py; Django's SecurityMiddleware adds COOP and the
# nosniff it shares with them) and DRF's Allow for a POST-only view.
_FIXED_HEADERS: Headers = [
    (b"content-type", b"application/json"),
    (b"allow", b"POST, OPTIONS"),
    *[(name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()],
    *(
        [(b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode())]
        if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY
        else []
    ),
]


class DirectRoutes:
    """The sender of the request signals for a request answered here (Django's handler sends
    them as its class; no request environ exists, so `environ` is None)."""


_PARSER = AnyContentJSONParser()
_RENDERER = JSONRenderer()
_logger = logging.getLogger("django.request")


def answer(scope: dict[str, Any], body: bytes) -> Answer | None:
    """The answer to this request, or None when Django must answer it."""
    if scope.get("method") != "POST" or not body:
        return None
    operation = ROUTES.get(scope.get("path", ""))
    if operation is None or not _plain_request(scope):
        return None
    # Django's handler sends these around every request: their receivers tidy the
    # connections (close_old_connections) and reset the query log.
    signals.request_started.send(sender=DirectRoutes, environ=None)
    try:
        payload = _PARSER.parse(io.BytesIO(body), None, {"encoding": "utf-8"})
        status, content = 200, envelope.ok_json(operation.run_json(payload, HTTP_CONTEXT)).encode()
    except Exception as exc:  # DRF's exception handler: every failure is an envelope
        failure = failure_for(exc, where=f"{operation.name} (REST)")
        status, content = failure.status, _RENDERER.render(failure.body())
    finally:
        signals.request_finished.send(sender=DirectRoutes)
    if status >= 400:
        _log_failure(scope, status)
    return status, [*_FIXED_HEADERS, (b"content-length", str(len(content)).encode())], content


def _plain_request(scope: dict[str, Any]) -> bool:
    """A Host Django accepts and a body Django would decode as UTF-8."""
    host = content_type = None
    for name, value in scope.get("headers", ()):
        if name == b"host":
            host = value.decode("latin-1")
        elif name == b"content-type":
            content_type = value.decode("latin-1")
    if host is None:
        return False
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    return content_type is None or _utf8(content_type)


def _utf8(content_type: str) -> bool:
    for parameter in content_type.split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name == "utf-8"
            except LookupError:
                return False
    return True


def _log_failure(scope: dict[str, Any], status: int) -> None:
    """django.request's line for a failed request, as Django's handler writes it (a warning
    for a 4xx, an error for a 5xx: `Bad Request: /v1/remember`)."""
    level = logging.ERROR if status >= 500 else logging.WARNING
    path = scope.get("path", "").encode("unicode_escape").decode("ascii")
    _logger.log(level, "%s: %s", HTTPStatus(status).phrase, path, extra={"status_code": status})
