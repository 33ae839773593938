"""memesh's error hierarchy: each error carries the reference's stable errorCode and status.

Every transport maps them through one module, api/envelope.py (REST, the ASGI edge, MCP, CLI).
"""

from __future__ import annotations


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


class LLMNotConfigured(MemeshError):
    """The operation needs an LLM provider and none is configured."""

    error_code = "llm.not-configured"
    http_status = 400
