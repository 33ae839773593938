"""Embedding providers reached over HTTP: Ollama and OpenAI (or any OpenAI-compatible server).

Both share one request loop: a bounded retry for weather (429, 5xx, network, timeout) and an
immediate stop for configuration (401/403/404, other 4xx). Every failure becomes an
`EmbedderError` whose message names the status and the URL path but never the API key.
"""

from __future__ import annotations

import email.utils
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
import numpy as np

from core import json_limits
from core.redact import redact_text

from .base import Embedder, EmbedderConfig, EmbedderError, normalise_rows

ATTEMPTS = 3
BACKOFF = (0.5, 1.0)  # waits before the 2nd and 3rd attempts when the server names none
MAX_RETRY_AFTER = 60.0
BODY_SNIPPET = 200

# The mark left where a secret was (core/redact.py masks; embedder errors say so in words).
REDACTED = "[redacted]"


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), capped.

    None when the header is absent or unreadable, so the caller falls back to its backoff.
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is always GMT, even when it fails to say so
            when = when.replace(tzinfo=UTC)
        current = datetime.now(UTC).timestamp() if now is None else now
        seconds = when.timestamp() - current
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


class _Retry(Exception):
    """One failed attempt that may be retried; `wait` is the server's Retry-After, if any."""

    def __init__(self, message: str, *, kind: str, status: int | None, wait: float | None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.wait = wait


class _RemoteEmbedder(Embedder):
    """The HTTP request loop and the reply checks both providers share."""

    provider = ""
    default_model = ""
    default_base_url = ""
    endpoint = ""
    batch_size = 32

    def __init__(
        self, config: EmbedderConfig, *, sleep: Callable[[float], None] | None = None
    ) -> None:
        self.model = config.model or self.default_model
        self.base_url = (config.base_url or self.default_base_url).rstrip("/")
        self._api_key = config.api_key
        self._requested_dimensions = config.dimensions
        self._width: int | None = config.dimensions or self._known_width()
        self._width_lock = threading.Lock()
        # Injectable so tests can record the waits instead of sleeping through them.
        self.sleep: Callable[[float], None] = sleep or time.sleep
        timeout = config.timeout if config.timeout and config.timeout > 0 else 30.0
        headers = {"User-Agent": "memesh"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # httpx.Client is safe to share between threads; its pool reuses connections.
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(5.0, timeout)), headers=headers
        )

    # -- what the providers fill in ---------------------------------------------------------

    def _known_width(self) -> int | None:
        return None

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        raise NotImplementedError

    def _rows(self, reply: Any, count: int) -> list[Any]:
        """The reply's vectors in input order; raises EmbedderError(kind="bad_response")."""
        raise NotImplementedError

    # -- the interface ----------------------------------------------------------------------

    @property
    def dimensions(self) -> int | None:
        with self._width_lock:
            return self._width

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimensions or 0), dtype=np.float32)
        parts = [
            self._embed_batch(texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        return np.concatenate(parts, axis=0)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> _RemoteEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- one batch --------------------------------------------------------------------------

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        reply = self._post(self._payload(texts))
        rows = self._rows(reply, len(texts))
        vectors = self._to_array(rows)
        self._check_width(vectors.shape[1])
        return normalise_rows(vectors)

    def _to_array(self, rows: list[Any]) -> np.ndarray:
        widths = set()
        for row in rows:
            if not isinstance(row, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in row
            ):
                raise self._bad_response("an embedding is not a list of numbers")
            widths.add(len(row))
        if len(widths) != 1 or 0 in widths:
            raise self._bad_response(f"embeddings of widths {sorted(widths)} in one reply")
        vectors = np.array(rows, dtype=np.float32)
        if not np.isfinite(vectors).all():
            raise self._bad_response("an embedding holds a non-finite value")
        return vectors

    def _check_width(self, width: int) -> None:
        with self._width_lock:
            if self._width is None:
                self._width = width  # learnt once; every later reply must agree
                return
            expected = self._width
        if width != expected:
            raise self._bad_response(f"vectors of width {width}, expected {expected}")

    def _bad_response(self, what: str) -> EmbedderError:
        return EmbedderError(self._where(f"bad response: {what}"), kind="bad_response")

    def _path(self) -> str:
        try:
            return httpx.URL(self.base_url + self.endpoint).path
        except httpx.InvalidURL:
            return self.endpoint

    def _where(self, what: str) -> str:
        # The path, not the whole URL: a base URL may carry credentials in its userinfo.
        return f"{self.provider} embeddings (POST {self._path()}): {what}"

    # -- HTTP with the retry policy ---------------------------------------------------------

    def _post(self, payload: dict[str, Any]) -> Any:
        last: _Retry | None = None
        for attempt in range(ATTEMPTS):
            if last is not None:
                wait = last.wait if last.wait is not None else BACKOFF[attempt - 1]
                self.sleep(wait)
            try:
                return self._attempt(payload)
            except _Retry as retry:
                last = retry
        assert last is not None
        raise EmbedderError(
            f"{last} (after {ATTEMPTS} attempts)", kind=last.kind, status=last.status
        )

    def _attempt(self, payload: dict[str, Any]) -> Any:
        url = self.base_url + self.endpoint
        try:
            response = self._client.post(url, json=payload)
        except httpx.TimeoutException as exc:
            raise _Retry(
                self._where(f"timed out ({type(exc).__name__})"),
                kind="timeout",
                status=None,
                wait=None,
            ) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            # A base URL without a scheme is configuration: retrying cannot help.
            raise EmbedderError(
                f"{self.provider} embeddings: unusable base URL: {self._redact(str(exc))}",
                kind="bad_request",
            ) from None
        except httpx.TransportError as exc:
            detail = self._redact(f"{type(exc).__name__}: {exc}")
            raise _Retry(
                self._where(f"network error ({detail})"), kind="network", status=None, wait=None
            ) from None

        status = response.status_code
        if 200 <= status < 300:
            try:
                # Bounded: deep nesting is a bad response, not a RecursionError.
                return json_limits.loads(response.content)
            except ValueError:
                raise self._bad_response(f"not JSON: {self._snippet(response.text)!r}") from None
        message = self._where(f"HTTP {status}: {self._snippet(response.text)}")
        if status == 429 or status >= 500:
            raise _Retry(
                message,
                kind="rate_limited" if status == 429 else "server",
                status=status,
                wait=parse_retry_after(response.headers.get("Retry-After")),
            )
        if status in (401, 403):
            kind = "auth"
        elif status == 404:
            kind = "not_found"
        else:
            kind = "bad_request"
        raise EmbedderError(message, kind=kind, status=status)

    def _redact(self, text: str) -> str:
        """Servers echo what they were sent; the key must never reach a log or a report."""
        return redact_text(text, [self._api_key] if self._api_key else [], mask=REDACTED)

    def _snippet(self, body: str) -> str:
        # Redact before truncating, so a cut can never leave a prefix of the key behind.
        text = " ".join(self._redact(body).split())
        return text if len(text) <= BODY_SNIPPET else text[:BODY_SNIPPET] + "…"


class OllamaEmbedder(_RemoteEmbedder):
    """Ollama's /api/embed, which takes a list of inputs and answers {"embeddings": [...]}."""

    provider = "ollama"
    default_model = "nomic-embed-text"
    default_base_url = "http://127.0.0.1:11434"
    endpoint = "/api/embed"
    batch_size = 32

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        # `dimensions` is not sent: older Ollama servers reject it; the width is only enforced.
        return {"model": self.model, "input": texts}

    def _rows(self, reply: Any, count: int) -> list[Any]:
        rows = reply.get("embeddings") if isinstance(reply, dict) else None
        if not isinstance(rows, list):
            raise self._bad_response("no 'embeddings' list")
        if len(rows) != count:
            raise self._bad_response(f"{len(rows)} embeddings for {count} inputs")
        return rows


KNOWN_OPENAI_WIDTHS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder(_RemoteEmbedder):
    """OpenAI's /embeddings, and any server that speaks the same format."""

    provider = "openai"
    default_model = "text-embedding-3-small"
    default_base_url = "https://api.openai.com/v1"
    endpoint = "/embeddings"
    batch_size = 64

    def _known_width(self) -> int | None:
        return KNOWN_OPENAI_WIDTHS.get(self.model)

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._requested_dimensions:
            payload["dimensions"] = self._requested_dimensions
        return payload

    def _rows(self, reply: Any, count: int) -> list[Any]:
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list):
            raise self._bad_response("no 'data' list")
        if len(data) != count:
            raise self._bad_response(f"{len(data)} embeddings for {count} inputs")
        by_index: dict[int, Any] = {}
        for item in data:
            if not isinstance(item, dict) or "embedding" not in item:
                raise self._bad_response("a 'data' item without an 'embedding'")
            index = item.get("index")
            if not isinstance(index, int) or isinstance(index, bool):
                raise self._bad_response("a 'data' item without an integer 'index'")
            by_index[index] = item["embedding"]
        # The order of `data` is not promised; the indices must cover exactly 0..count-1.
        if sorted(by_index) != list(range(count)):
            raise self._bad_response("the 'index' values do not match the inputs")
        return [by_index[i] for i in range(count)]
