"""The three LLM wire formats over httpx, each with connect/read timeouts.

- anthropic: POST {base}/v1/messages with `x-api-key` and `anthropic-version`;
  GET {base}/v1/models lists models.
- openai: POST {base}/v1/chat/completions with `Authorization: Bearer`; any OpenAI-compatible
  server works by its base URL; GET {base}/v1/models.
- ollama: POST {host}/api/chat with `stream: false`; GET {host}/api/tags lists models.

A base URL may be given with or without its trailing `/v1`. A failure raises `ProviderError`
with an `error_class` the fallback chain acts on (chain.py): `bad_request` stops the chain,
every other class moves on to the next provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

from django.conf import settings

from core import json_limits
from dream.llm.types import LLMRequest

if TYPE_CHECKING:
    # httpx is imported by the first request: the Stop hook asks whether an LLM is configured
    # (this module's specs) on every turn, and importing httpx, with the command-line tools
    # it loads when they are installed, costs ~0.1 s.
    import httpx

Provider = Literal["anthropic", "openai", "ollama"]
PROVIDERS: tuple[str, ...] = get_args(Provider)
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-4o-mini",
    "ollama": "llama3.2",
}
DEFAULT_TIMEOUT_SECONDS = 60.0
CONNECT_TIMEOUT_CAP_SECONDS = 10.0


@dataclass(frozen=True)
class ProviderSpec:
    """One link of the chain: the primary `llm` or an `llmFallbacks` entry."""

    provider: str
    model: str
    api_key: str = ""
    base_url: str = ""


class ProviderError(Exception):
    """A failed attempt. `message` may still hold secrets: the caller redacts it."""

    def __init__(
        self, error_class: str, message: str, *, status: int | None = None, retry_after: str = ""
    ) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.status = status
        self.retry_after = retry_after


def timeout_seconds() -> float:
    """MEMESH_LLM_TIMEOUT_SECONDS (default 60): the read timeout of one attempt."""
    value = float(settings.MEMESH_LLM_TIMEOUT_SECONDS)
    return value if value > 0 else DEFAULT_TIMEOUT_SECONDS


def _timeout(seconds: float) -> httpx.Timeout:
    import httpx

    return httpx.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT_CAP_SECONDS))


def default_base_url(provider: str) -> str:
    """The provider's own endpoint; MEMESH_<PROVIDER>_BASE_URL (or OLLAMA_HOST) overrides."""
    if provider == "ollama":
        return (settings.OLLAMA_HOST or "http://localhost:11434").rstrip("/")
    override = {
        "anthropic": settings.MEMESH_ANTHROPIC_BASE_URL,
        "openai": settings.MEMESH_OPENAI_BASE_URL,
    }.get(provider, "")
    if override:
        return override.rstrip("/")
    return "https://api.anthropic.com" if provider == "anthropic" else "https://api.openai.com"


def api_root(provider: str, base_url: str) -> str:
    """The base URL without a trailing slash or `/v1` (the paths below add it)."""
    root = (base_url or default_base_url(provider)).rstrip("/")
    if provider == "ollama" and "://" not in root:
        root = "http://" + root  # OLLAMA_HOST is often host:port
    return root.removesuffix("/v1") if provider != "ollama" else root.removesuffix("/api")


def _headers(provider: str, api_key: str) -> dict[str, str]:
    if provider == "anthropic":
        return {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}
    if provider == "openai" and api_key:
        return {"Authorization": f"Bearer {api_key}"}
    return {}


def classify_status(status: int) -> str:
    if status == 400:
        return "bad_request"
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status == 429:
        return "rate_limit"
    if status >= 500:
        return "server"
    return "unknown"


def _request(method: str, url: str, *, seconds: float, **kwargs: Any) -> httpx.Response:
    import httpx

    try:
        return httpx.request(method, url, timeout=_timeout(seconds), **kwargs)
    except httpx.TimeoutException as exc:
        message = f"no answer within {seconds:g}s ({type(exc).__name__})"
        raise ProviderError("timeout", message) from None
    except httpx.HTTPError as exc:
        raise ProviderError("network", f"{type(exc).__name__}: {exc}") from None


def _check(response: httpx.Response) -> Any:
    """The JSON body of a successful response, or a ProviderError naming what went wrong."""
    if response.status_code != 200:
        detail = response.text[:300]
        retry_after = response.headers.get("Retry-After", "")
        suffix = f" (Retry-After: {retry_after})" if retry_after else ""
        raise ProviderError(
            classify_status(response.status_code),
            f"HTTP {response.status_code}{suffix}: {detail}",
            status=response.status_code,
            retry_after=retry_after,
        )
    try:
        # Bounded: a reply nested past MAX_JSON_DEPTH is a parse failure, not a RecursionError.
        return json_limits.loads(response.content)
    except ValueError:
        raise ProviderError("parse", f"the reply is not JSON: {response.text[:200]}") from None


def _text(provider: str, body: Any) -> str:
    try:
        if provider == "anthropic":
            parts = [p["text"] for p in body["content"] if p.get("type") == "text"]
            text = "".join(parts)
        elif provider == "openai":
            text = body["choices"][0]["message"]["content"]
        else:
            text = body["message"]["content"]
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ProviderError("parse", "the reply has no message text where expected") from None
    if not isinstance(text, str):
        raise ProviderError("parse", "the reply's message text is not a string")
    return text


def complete(spec: ProviderSpec, request: LLMRequest, *, seconds: float | None = None) -> str:
    """One attempt against one provider: the model's reply text."""
    seconds = timeout_seconds() if seconds is None else seconds
    root = api_root(spec.provider, spec.base_url)
    messages = [{"role": "user", "content": request.prompt}]
    body: dict[str, Any]
    if spec.provider == "anthropic":
        url = f"{root}/v1/messages"
        body = {
            "model": spec.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "messages": messages,
        }
        if request.system:
            body["system"] = request.system
    elif spec.provider == "openai":
        url = f"{root}/v1/chat/completions"
        system = [{"role": "system", "content": request.system}] if request.system else []
        body = {
            "model": spec.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "messages": system + messages,
        }
    elif spec.provider == "ollama":
        url = f"{root}/api/chat"
        system = [{"role": "system", "content": request.system}] if request.system else []
        body = {
            "model": spec.model,
            "stream": False,
            "messages": system + messages,
            "options": {"temperature": request.temperature, "num_predict": request.max_tokens},
        }
    else:
        raise ProviderError("unknown", f"unknown provider {spec.provider!r}")
    response = _request(
        "POST", url, seconds=seconds, json=body, headers=_headers(spec.provider, spec.api_key)
    )
    return _text(spec.provider, _check(response))


def _iso(value: Any) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).isoformat().replace("+00:00", "Z")
    return value if isinstance(value, str) and value else None


def list_models(
    provider: str, *, api_key: str, base_url: str, seconds: float
) -> list[dict[str, str | None]]:
    """The provider's live model catalogue as [{id, created}] (ProviderError on failure)."""
    root = api_root(provider, base_url)
    if provider == "ollama":
        body = _check(_request("GET", f"{root}/api/tags", seconds=seconds))
        rows = body.get("models") if isinstance(body, dict) else None
        id_key, created_key = "name", "modified_at"
    else:
        params = {"limit": "1000"} if provider == "anthropic" else None
        response = _request(
            "GET",
            f"{root}/v1/models",
            seconds=seconds,
            params=params,
            headers=_headers(provider, api_key),
        )
        body = _check(response)
        rows = body.get("data") if isinstance(body, dict) else None
        id_key = "id"
        created_key = "created_at" if provider == "anthropic" else "created"
    if not isinstance(rows, list):
        raise ProviderError("parse", "the model list is not where the wire format puts it")
    models: list[dict[str, str | None]] = []
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get(id_key), str) and row[id_key]:
            models.append({"id": row[id_key], "created": _iso(row.get(created_key))})
    return models
