"""The dream producers' own errors."""

from __future__ import annotations

from core.errors import MemeshError


class LLMNotConfigured(MemeshError):
    """The operation needs an LLM provider and none is configured."""

    error_code = "llm.not-configured"
    http_status = 400
