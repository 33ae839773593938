"""Secret redaction for anything an LLM call leaves behind: telemetry rows, errors, logs.

Two layers: the configured keys are replaced literally (whatever their shape), then key-like
patterns are masked — bearer tokens, `sk-…` keys, `api_key=…`/`token: …` pairs, and the
credentials of a URL (`https://user:secret@host`). Providers echo keys back in error bodies
("Incorrect API key provided: sk-…"), so every message passes through here before it is stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
MAX_MESSAGE_CHARS = 500

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # URL credentials: scheme://user:password@host -> scheme://***@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+(?::[^/\s@]*)?@"), r"\1" + MASK + "@"),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{6,}"), r"\1" + MASK),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}"), MASK),
    (re.compile(r"\b(?:AIza|xox[abp]-|ghp_|gho_|github_pat_)[A-Za-z0-9_-]{10,}"), MASK),
    (
        re.compile(
            r"(?i)((?:api[_-]?key|x-api-key|access[_-]?token|token|secret|password|authorization)"
            r"[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,;}]{4,}"
        ),
        r"\1" + MASK,
    ),
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every secret in `secrets` and every key-shaped substring masked."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact_message(text: str, secrets: Iterable[str] = ()) -> str:
    """A redacted, single-line message short enough to store."""
    clean = " ".join(redact(text, secrets).split())
    if len(clean) > MAX_MESSAGE_CHARS:
        clean = clean[: MAX_MESSAGE_CHARS - 1] + "…"
    return clean
