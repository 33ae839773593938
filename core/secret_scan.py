"""The one secret detector of the capture paths: hooks, transcript mining, note-file ingestion.

A capture path stores what an agent session said or did without a person choosing it, so a
secret in that text must not reach the graph. `find_secret` names the first detector that
fires, so a capture that is dropped can say why ("dropped: contains a private key") without
repeating the secret. core/redact.py masks secrets in what memesh *shows*; this module
decides what a capture path *refuses to store*. Its detectors are deliberately specific
(known key formats, PEM blocks, credentials in URLs, `password=` style assignments with a
value that looks like one): a capture path drops the whole candidate on a hit, and a detector
that fires on ordinary prose would drop ordinary memories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (name, pattern). Names are stable: they appear in reports and hook outcome logs.
DETECTORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    (
        "aws-secret-key",
        re.compile(
            r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
    ),
    ("github-token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b")),
    ("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}\b")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b")),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    # scheme://user:password@host — a password in a URL (not a bare user@host).
    ("url-password", re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@[^\s/]+")),
    ("bearer-token", re.compile(r"(?i)\bauthorization\s*:\s*bearer\s+[A-Za-z0-9._~+/-]{16,}=*")),
    # password = "…", api_key: …, secret=… with a value of 8+ non-space characters that is not
    # a placeholder (`<…>`, `${…}`, `***`, `xxxx`, `changeme`).
    (
        "password-assignment",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|api[_-]?key|secret[_-]?key|client[_-]?secret|"
            r"access[_-]?token|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?"
            r"(?![<$*]|x{4}|changeme|your[_-])[^\s\"'<>]{8,}"
        ),
    ),
)


@dataclass(frozen=True)
class SecretFinding:
    detector: str  # one of DETECTORS' names
    start: int  # where in the text it was found (the secret itself is never kept)


def find_secret(text: str) -> SecretFinding | None:
    """The earliest secret in `text`, by the detector that found it; None when clean."""
    found: SecretFinding | None = None
    for name, pattern in DETECTORS:
        match = pattern.search(text)
        if match is not None and (found is None or match.start() < found.start):
            found = SecretFinding(name, match.start())
    return found


def has_secret(text: str) -> bool:
    return find_secret(text) is not None


# A detector matches where a secret starts; masking must cover all of it. A PEM block's
# detector matches its BEGIN line, the key is the lines after it: masked through the END line
# (or the end of the text, when the block was cut).
_MASKED_SPANS = {
    "private-key": re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.DOTALL,
    )
}


def mask_secrets(text: str) -> str:
    """`text` with every secret any detector finds replaced by `[secret: <detector>]`: for text
    a capture path hands to a third party (the transcript an LLM provider reads), which must
    not carry the secret either."""
    for name, pattern in DETECTORS:
        text = _MASKED_SPANS.get(name, pattern).sub(f"[secret: {name}]", text)
    return text
