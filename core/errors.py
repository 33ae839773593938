"""memesh's error base: each error carries the reference's stable errorCode and HTTP status,
and `Failure` is an error as every transport reports it. The apps derive their own errors from
these (graph/errors.py, proposals/errors.py, hosts/documents.py, …); every transport maps them
through one module, api/envelope.py (REST, the ASGI edge, MCP, CLI)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class MemeshError(Exception):
    error_code = "server.internal"
    http_status = 500

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(MemeshError):
    """The request body is missing, not JSON, or fails the operation's schema."""

    error_code = "validation.bad-body"
    http_status = 400


class InvalidParameter(MemeshError):
    error_code = "validation.bad-param"
    http_status = 400


class NotFound(MemeshError):
    error_code = "resource.not-found"
    http_status = 404


class OperationFailed(MemeshError):
    """Well-formed, but the operation itself refuses it."""

    error_code = "operation.failed"
    http_status = 400


class ForeignDatabase(MemeshError):
    """The database file memesh was given was not created by memesh (the original MeMesh's,
    or another program's): memesh never writes into it, not even a PRAGMA
    (core/original_memesh.py, docs/coming-from-memesh.md)."""

    error_code = "storage.foreign-database"
    http_status = 503  # like the other conditions of the file: no request can be served


@dataclass(frozen=True)
class Failure:
    """An error as every transport reports it: REST's HTTP status, the stable code, the
    message, the field at fault (when one is), and a route's legacy extra keys."""

    status: int
    error_code: str
    message: str
    field: str | None = None
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """The failure envelope."""
        body: dict[str, Any] = {
            "success": False,
            "errorCode": self.error_code,
            "error": self.message,
        }
        if self.field:
            body["field"] = self.field
        body.update(self.extra)
        return body

    def to_json(self) -> str:
        """The failure envelope as one line of JSON (MCP's text block, the CLI's stderr, the
        ASGI edge's body)."""
        return json.dumps(self.body(), ensure_ascii=False)
