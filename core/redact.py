"""The one secret detector and redactor: one table of secret kinds (SECRET_KINDS) that every
path masking or refusing a secret reads.

Two uses of the same table:
- Masking in what memesh shows or stores of its own: LLM telemetry rows and errors, embedder
  errors, `memesh doctor` (CLI and GET /v1/doctor alike), hook outcomes, the configuration's
  output. `redact` / `redact_text` / `redact_message` mask the given secrets literally (whatever
  their shape), then every kind in the table, then the user's home directory and a MEMESH_HOME
  outside it (paths say whose machine this is; a report is pasted into bug reports). Providers
  echo keys back in error bodies ("Incorrect API key provided: sk-…"), so a message is redacted
  before it is stored or shown. `mask_secret_fields` masks the configuration document: the value
  of every secret-named key (apiKey, *token, *secret, password) becomes `***`, and nothing else
  changes — a client reads the document, edits it and sends it back, so other values (a
  baseUrl) must survive verbatim.
- Refusing in the capture paths (hooks, transcript mining, note files, work packages), which
  store what an agent session said or did without a person choosing it. `find_secret` names
  the first kind that fires, so a capture that is dropped can say why ("dropped: contains a
  private key") without repeating the secret; `mask_secrets` marks each secret as
  `[secret: <kind>]` in text handed to a third party (the transcript an LLM provider reads).

A capture path drops the whole candidate on a hit, so it reads only the kinds specific enough
that ordinary prose does not match them (`refuses_capture`): known key formats, PEM blocks,
passwords in URLs, `password=` style assignments whose value is not a placeholder. The broader
kinds (a user in a URL, any word after "Bearer", any `token:` value) are masked in output only,
where masking too much costs nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from core import paths

MASK = "***"
MAX_MESSAGE_CHARS = 500

# A configuration key whose value is a secret.
SECRET_FIELD = re.compile(r"(?i)^(api[_-]?key|.*token|.*secret|password)$")


@dataclass(frozen=True)
class SecretKind:
    # Stable: a kind's name appears in reports and hook outcome logs.
    name: str
    pattern: re.Pattern[str]
    # False for a kind that also matches ordinary prose: masked in output, never a reason to
    # drop a capture.
    refuses_capture: bool = True
    # The redactor keeps the pattern's group 1 (a scheme, `Bearer `, `api_key=`) before the mask.
    keeps_prefix: bool = False
    # What masking covers when it is more than what `pattern` matches.
    span: re.Pattern[str] | None = None

    @property
    def masked_span(self) -> re.Pattern[str]:
        return self.span or self.pattern


_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"

# In masking order: the prefix-keeping output kinds first, so `Authorization: Bearer …` and
# `api_key=…` keep their names in what is shown; a capture reports, of two kinds found at the
# same place, the earlier one here.
SECRET_KINDS: tuple[SecretKind, ...] = (
    # scheme://user:password@host -> scheme://***@host
    SecretKind(
        "url-credentials",
        re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+(?::[^/\s@]*)?(?=@)"),
        refuses_capture=False,  # ssh://git@host names a user, not a secret
        keeps_prefix=True,
    ),
    # `Authorization: Bearer <anything>` (servers echo the header they were sent).
    SecretKind(
        "bearer",
        re.compile(r"(?i)\b(bearer\s+)\S+"),
        refuses_capture=False,  # "the bearer of bad news"
        keeps_prefix=True,
    ),
    SecretKind(
        "provider-key",
        re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{6,}"),
        refuses_capture=False,  # "sk-learn-compatible"; real keys are the longer kinds below
    ),
    # `api_key=…`, `token: …`, `"password": "…"`: the value up to a delimiter (not the word
    # Bearer of `Authorization: Bearer …`, whose token the kind above masks) …
    SecretKind(
        "key-assignment",
        re.compile(
            r"(?i)((?:api[_-]?key|x-api-key|access[_-]?token|token|secret|password|authorization)"
            r"[\"']?\s*[:=]\s*[\"']?)(?!(?i:bearer)\s)[^\s\"'&,;}]{4,}"
        ),
        refuses_capture=False,  # `password = <your password>` is a placeholder
        keeps_prefix=True,
    ),
    # … and through `;` and `}`, which a value may hold.
    SecretKind(
        "key-assignment",
        re.compile(
            r"(?i)((?:api[_-]?key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"'&,]{4,}"
        ),
        refuses_capture=False,
        keeps_prefix=True,
    ),
    # The BEGIN line is what is found; masking covers the key after it, through the END line
    # (or the end of the text, when the block was cut).
    SecretKind(
        "private-key",
        re.compile(_PEM_BEGIN),
        span=re.compile(
            _PEM_BEGIN + r".*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    SecretKind("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    SecretKind(
        "aws-secret-key",
        re.compile(
            r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?"
            r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"
        ),
    ),
    SecretKind("github-token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_-]{10,}")),
    SecretKind("github-token", re.compile(r"\bgithub_pat_[A-Za-z0-9_-]{10,}")),
    SecretKind("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    SecretKind("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9_-]{10,}")),
    SecretKind(
        "slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}")
    ),
    SecretKind("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b")),
    SecretKind("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    SecretKind("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    SecretKind("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{10,}")),
    SecretKind("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    SecretKind(
        "jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")
    ),
    # scheme://user:password@host — a password in a URL (not a bare user@host).
    SecretKind(
        "url-password", re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@[^\s/]+")
    ),
    SecretKind(
        "bearer-token",
        re.compile(r"(?i)\bauthorization\s*:\s*bearer\s+[A-Za-z0-9._~+/-]{16,}=*"),
    ),
    # password = "…", api_key: …, secret=… with a value of 8+ non-space characters that is not
    # a placeholder (`<…>`, `${…}`, `***`, `xxxx`, `changeme`).
    SecretKind(
        "password-assignment",
        re.compile(
            r"(?i)\b(?:password|passwd|pwd|api[_-]?key|secret[_-]?key|client[_-]?secret|"
            r"access[_-]?token|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?"
            r"(?![<$*]|x{4}|changeme|your[_-])[^\s\"'<>]{8,}"
        ),
    ),
)

_CAPTURE_KINDS = tuple(kind for kind in SECRET_KINDS if kind.refuses_capture)


# --- masking in output -----------------------------------------------------------------------


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
    """`text` with every secret in `secrets`, every secret kind and home paths masked."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, mask)
    return redact_paths(mask_key_shapes(text, mask=mask))


def mask_key_shapes(text: str, *, mask: str = MASK) -> str:
    """`text` with every secret of every kind (SECRET_KINDS) masked; paths untouched (what can
    be done before Django's settings are loaded)."""
    for kind in SECRET_KINDS:
        if kind.keeps_prefix:
            text = kind.masked_span.sub(lambda m: m.group(1) + mask, text)
        else:
            text = kind.masked_span.sub(mask, text)
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


# --- refusing in the capture paths -----------------------------------------------------------


@dataclass(frozen=True)
class SecretFinding:
    detector: str  # a SecretKind's name
    start: int  # where in the text it was found (the secret itself is never kept)


def find_secret(text: str) -> SecretFinding | None:
    """The earliest secret in `text` of a kind that refuses a capture, by that kind's name;
    None when clean."""
    found: SecretFinding | None = None
    for kind in _CAPTURE_KINDS:
        match = kind.pattern.search(text)
        if match is not None and (found is None or match.start() < found.start):
            found = SecretFinding(kind.name, match.start())
    return found


def has_secret(text: str) -> bool:
    return find_secret(text) is not None


def mask_secrets(text: str) -> str:
    """`text` with every secret `find_secret` finds replaced by `[secret: <kind>]`: for text a
    capture path hands to a third party, which must not carry the secret either."""
    for kind in _CAPTURE_KINDS:
        text = kind.masked_span.sub(f"[secret: {kind.name}]", text)
    return text
