"""The one envelope every transport answers with, and the one mapping from exceptions to it.

Success is `{"success": true, "data": ...}`; failure is `{"success": false, "errorCode",
"error", "field"?}` (plus the reference's legacy extras on a few routes: `code`, `limit`,
`hint`, `replacement`; and a `hint` on every `storage.*` failure). REST sends the envelope as
the body, the ASGI edge (rate limit, bearer check, /mcp without lifespan) sends the same bytes,
MCP returns the failure JSON in-band with `isError: true`, and the CLI prints it on stderr with
--json and exits 1. Each transport only chooses how to send a `Failure`; what an exception means
is decided here, once (DESIGN §3).

`errorCode` is the stable contract (the reference's "Stable error codes"); `error` is English
prose and may be reworded.

Bad input reaches this module as a `MemeshError` already: operations turn pydantic's
ValidationError into InvalidInput where they parse (graph/ops/kit/operation.py). A raw
ValidationError arriving here is an output model failing, a server bug, so it is
`server.internal` like any other unexpected exception.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import DisallowedHost
from rest_framework import exceptions as drf

from core.errors import Failure, MemeshError
from core.json_limits import JSONTooDeep
from graph.errors import StorageError
from graph.storage.conditions import storage_error, unstorable_input

logger = logging.getLogger(__name__)


def ok(data: Any) -> dict[str, Any]:
    """The success envelope around `data`."""
    return {"success": True, "data": data}


def ok_json(data_json: str) -> str:
    """The success envelope around data already encoded as JSON (pydantic's own encoder)."""
    return '{"success":true,"data":' + data_json + "}"


INTERNAL = Failure(500, "server.internal", "Internal server error")


def _drf_failure(exc: drf.APIException) -> Failure:
    if isinstance(exc, drf.ParseError):
        return Failure(400, "validation.bad-body", f"Request body is not valid JSON: {exc.detail}")
    if isinstance(exc, drf.MethodNotAllowed):
        return Failure(405, "route.method-not-allowed", str(exc.detail))
    return Failure(exc.status_code, "server.internal", str(exc.detail))


def known_failure(exc: BaseException) -> Failure | None:
    """What `exc` means to a caller, or None when it is unexpected (a bug, or a failure no
    caller can act on)."""
    # A locked, read-only, full or failing database (graph.storage.conditions): the caller
    # gets the condition's code and what to do about it, not a 500.
    exc = storage_error(exc) or unstorable_input(exc) or exc
    if isinstance(exc, StorageError):
        return Failure(exc.http_status, exc.error_code, exc.message, extra={"hint": exc.hint})
    if isinstance(exc, MemeshError):
        return Failure(exc.http_status, exc.error_code, exc.message, exc.field)
    if isinstance(exc, drf.APIException):
        return _drf_failure(exc)
    if isinstance(exc, JSONTooDeep):
        # Raised by every transport's JSON decoding (core/json_limits.py) before a
        # parser could recurse out: bad input like any other.
        return Failure(400, "validation.bad-body", f"The JSON input {exc}")
    if isinstance(exc, DisallowedHost):
        # Loopback servers check the Host header so a web page cannot reach them through
        # DNS rebinding; MEMESH_ALLOWED_HOSTS adds names.
        return Failure(
            400, "request.bad-host", "Host header not allowed (see MEMESH_ALLOWED_HOSTS)"
        )
    return None


def failure_for(exc: BaseException, *, where: str) -> Failure:
    """`known_failure(exc)`, else `server.internal` (500). Logs what an operator should see:
    a storage condition as a warning with SQLite's own words, an unexpected exception with
    its traceback. `where` names the view, tool or command for the log."""
    failure = known_failure(exc)
    if failure is not None and storage_error(exc) is not None:
        logger.warning("%s in %s: %s", failure.error_code, where, exc.__cause__ or exc)
    elif failure is None:
        logger.exception("unexpected error in %s", where, exc_info=exc)
        failure = INTERNAL
    return failure


# --- the envelope's OpenAPI schemas -------------------------------------------------------------


def ok_schema(data_schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a success envelope around `data_schema`."""
    return {
        "type": "object",
        "required": ["success", "data"],
        "properties": {"success": {"const": True}, "data": data_schema},
    }


def failure_schema(error_codes: list[str]) -> dict[str, Any]:
    """The JSON Schema of the failure envelope (`Failure.body`), `errorCode` one of
    `error_codes`."""
    return {
        "type": "object",
        "description": "Every failure: a stable machine-readable `errorCode` and English prose.",
        "required": ["success", "errorCode", "error"],
        "properties": {
            "success": {"const": False},
            "errorCode": {"type": "string", "enum": error_codes},
            "error": {"type": "string", "minLength": 1},
            "field": {"type": "string", "description": "The input field at fault, when one is."},
            "code": {
                "type": "string",
                "description": "Legacy code kept for `route.not-found` and `payload.too-large`.",
            },
            "limit": {"type": "string", "description": "The body limit (`payload.too-large`)."},
            "hint": {
                "type": "string",
                "description": "What to do about it (`payload.too-large`, `storage.*`).",
            },
        },
    }
