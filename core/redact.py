"""The one secret redactor: everything memesh shows or stores that may carry a secret passes
through here — LLM telemetry rows and errors, embedder errors, `memesh doctor` (CLI and
GET /v1/doctor alike), the configuration's output.

Two kinds of masking:
- `redact` / `redact_text` / `redact_message`, for free text and reports: the given secrets
  literally (whatever their shape), then every key-shaped substring (SECRET_PATTERNS), then the
  user's home directory and a MEMESH_HOME outside it (paths say whose machine this is; a report
  is pasted into bug reports). Providers echo keys back in error bodies ("Incorrect API key
  provided: sk-…"), so a message is redacted before it is stored or shown.
- `mask_secret_fields`, for the configuration document: the value of every secret-named key
  (apiKey, *token, *secret, password) becomes `***`, and nothing else changes — a client reads
  the document, edits it and sends it back, so other values (a baseUrl) must survive verbatim.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from core import paths

MASK = "***"
MAX_MESSAGE_CHARS = 500

# A configuration key whose value is a secret.
SECRET_FIELD = re.compile(r"(?i)^(api[_-]?key|.*token|.*secret|password)$")

# Key-shaped text, as (pattern, group kept before the mask). The union of what the LLM chain,
# the doctor's REST view and the remote embedders used to mask separately.
SECRET_PATTERNS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # URL credentials: scheme://user:password@host -> scheme://***@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+(?::[^/\s@]*)?@"), True),
    # `Authorization: Bearer <anything>` (servers echo the header they were sent).
    (re.compile(r"(?i)\b(bearer\s+)\S+"), True),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}"), False),
    (re.compile(r"\b(?:AIza|xox[abp]-|ghp_|gho_|github_pat_)[A-Za-z0-9_-]{10,}"), False),
    # `api_key=…`, `token: …`, `"password": "…"`: the value up to a delimiter (not the word
    # Bearer of `Authorization: Bearer …`, whose token the pattern above masks) …
    (
        re.compile(
            r"(?i)((?:api[_-]?key|x-api-key|access[_-]?token|token|secret|password|authorization)"
            r"[\"']?\s*[:=]\s*[\"']?)(?!(?i:bearer)\s)[^\s\"'&,;}]{4,}"
        ),
        True,
    ),
    # … and through `;` and `}`, which a value may hold.
    (
        re.compile(
            r"(?i)((?:api[_-]?key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,]{4,}"
        ),
        True,
    ),
)


def redact_paths(text: str) -> str:
    """MEMESH_HOME as `$MEMESH_HOME` when it lies outside the home directory, then the home
    directory as `~`."""
    home = str(Path.home())
    memesh_home = str(paths.memesh_home())
    if memesh_home and memesh_home != "/" and not memesh_home.startswith(home + os.sep):
        text = text.replace(memesh_home, "$MEMESH_HOME")
    if home and home != "/":
        text = text.replace(home, "~")
    return text


def redact_text(text: str, secrets: Iterable[str] = (), *, mask: str = MASK) -> str:
    """`text` with every secret in `secrets`, every key-shaped substring and home paths masked."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, mask)
    return redact_paths(mask_key_shapes(text, mask=mask))


def mask_key_shapes(text: str, *, mask: str = MASK) -> str:
    """`text` with every key-shaped substring (SECRET_PATTERNS) masked; paths untouched (what
    can be done before Django's settings are loaded)."""
    for pattern, keeps_prefix in SECRET_PATTERNS:
        if keeps_prefix:
            text = pattern.sub(lambda m: m.group(1) + mask, text)
        else:
            text = pattern.sub(mask, text)
    return text


def redact_message(text: str, secrets: Iterable[str] = ()) -> str:
    """A redacted, single-line message short enough to store."""
    clean = " ".join(redact_text(text, secrets).split())
    if len(clean) > MAX_MESSAGE_CHARS:
        clean = clean[: MAX_MESSAGE_CHARS - 1] + "…"
    return clean


def redact(value: Any, secrets: Iterable[str] = ()) -> Any:
    """`value` (a report: str, dict, list) with secrets masked recursively: secret-named keys'
    values, and in every string what `redact_text` masks."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, dict):
        return {
            k: (MASK if SECRET_FIELD.match(str(k)) and v else redact(v, secrets))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v, secrets) for v in value]
    return value


def mask_secret_fields(value: Any) -> Any:
    """`value` with every secret-named key's non-empty value replaced by `***`, recursively."""
    if isinstance(value, dict):
        return {
            k: (MASK if SECRET_FIELD.match(str(k)) and v else mask_secret_fields(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [mask_secret_fields(v) for v in value]
    return value


def secret_values(value: Any) -> list[str]:
    """Every secret-named key's string value in `value` (for literal redaction)."""
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if SECRET_FIELD.match(str(k)) and isinstance(v, str) and v:
                found.append(v)
            else:
                found.extend(secret_values(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(secret_values(v))
    return found


def url_without_credentials(url: str) -> str:
    """The URL with any user:password@ part masked (a base URL may carry credentials)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{MASK}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))
