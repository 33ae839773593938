"""LLM calls for the dream flows: one entry point, `complete`, over the configured provider
chain (primary `llm`, then `llmFallbacks`), with one telemetry row (`LLMAttempt`) per attempt.

Contract used by the dreamer, pattern detector, conflict judge and validator:

    result = complete(LLMRequest(flow="dreamer", system=..., prompt=..., project=...))
    result.text  # the model's reply

Raises `graph.errors.LLMNotConfigured` when no provider is configured, and `LLMUnavailable`
when every provider of the chain failed (or the chain stopped on a 400).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LLMRequest:
    flow: str  # dreamer | pattern_detector | conflict_judge | digest_validator | ...
    system: str
    prompt: str
    project: str = ""
    max_tokens: int = 1024
    temperature: float = 0.2


@dataclass(frozen=True)
class LLMResult:
    text: str
    provider: str
    model: str
    attempts: int
    fallback_used: bool


class LLMUnavailable(Exception):
    """Every provider of the chain failed; `error_class` is the last attempt's."""

    def __init__(self, message: str, *, error_class: str) -> None:
        super().__init__(message)
        self.error_class = error_class


def complete(request: LLMRequest) -> LLMResult:
    from proposals.llm.chain import complete as chain_complete

    return chain_complete(request)
