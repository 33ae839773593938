"""What the dream flows send to and get back from an LLM (dream.llm.chain.complete)."""

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
