"""POST /v1/config/test: does this provider credential work, and which models does it offer?

The outcome is data, never a transport error: `{valid: true, models, suggested}` or
`{valid: false, error, errorCode}` with the reference's codes — `auth`, `network`,
`no_models`, `bad_host`, `http_<status>`, `unknown`.

Which key is probed: the caller's `apiKey`; else, with `fallbackIndex`, the stored key of
that `llmFallbacks` entry (only when its provider matches); else the primary `llm` key when its
provider matches. The stored entry whose key is used also lends its `baseUrl`. A caller-supplied
Ollama `host` must be loopback (the server is not a proxy into other networks; a remote Ollama
is configured server-side with OLLAMA_HOST).
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.config_store import API_KEY_PATTERN
from core.errors import InvalidInput
from core.redact import redact_message
from dream.llm.providers import Provider, ProviderError, list_models, timeout_seconds
from graph.ops.kit.validation_errors import describe_validation_error

PROBE_TIMEOUT_CAP_SECONDS = 15.0
SMALL_TIER_HINTS = ("mini", "nano", "haiku", "flash", "lite", "small", "8b", "7b", "3b")


class ConfigTestInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Provider = Field(description="Provider to probe.")
    apiKey: str | None = Field(
        None,
        max_length=500,
        pattern=API_KEY_PATTERN,
        description="Key to test (anthropic, openai); omitted: a stored key is resolved.",
    )
    host: str | None = Field(
        None,
        max_length=500,
        description="Ollama base URL (loopback only), default http://localhost:11434.",
    )
    fallbackIndex: int | None = Field(
        None, ge=0, description="Test the stored key of llmFallbacks[index]."
    )


class ProbeModel(BaseModel):
    id: str
    created: str | None = None


class ConfigTestOutput(BaseModel):
    """The probe outcome; `valid` is the contract (the HTTP status is always 200)."""

    valid: bool
    models: list[ProbeModel] | None = None
    suggested: str | None = None
    error: str | None = None
    errorCode: str | None = Field(
        None, description="auth | network | no_models | bad_host | http_<status> | unknown"
    )


def is_loopback_url(url: str) -> bool:
    try:
        parts = urlsplit(url if "://" in url else "http://" + url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def suggest(models: list[dict[str, str | None]]) -> str | None:
    """The most recently created small-tier model, else the first entry."""
    hinted = [m for m in models if any(h in str(m["id"]).lower() for h in SMALL_TIER_HINTS)]
    if hinted:
        # Stable sort: among equal (or missing) dates, the catalogue's own order wins.
        hinted.sort(key=lambda m: m.get("created") or "", reverse=True)
        return hinted[0]["id"]
    return models[0]["id"] if models else None


def _failure(code: str, message: str, secrets: list[str]) -> dict[str, Any]:
    return {"valid": False, "error": redact_message(message, secrets), "errorCode": code}


def _stored_entry(config: dict[str, Any], request: ConfigTestInput) -> dict[str, Any] | None:
    if request.fallbackIndex is not None:
        chain = config.get("llmFallbacks")
        entry = (
            chain[request.fallbackIndex]
            if isinstance(chain, list) and request.fallbackIndex < len(chain)
            else None
        )
    else:
        entry = config.get("llm")
    if isinstance(entry, dict) and entry.get("provider") == request.provider:
        return entry
    return None


def probe(payload: object, config: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise InvalidInput("Request body must be a JSON object")
    try:
        request = ConfigTestInput.model_validate(payload)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc)) from None
    stored = _stored_entry(config, request) or {}
    api_key = request.apiKey or str(stored.get("apiKey") or "")
    secrets = [s for s in (api_key, request.apiKey or "") if s]
    base_url = str(stored.get("baseUrl") or "")
    if request.provider == "ollama":
        if request.host:
            if not is_loopback_url(request.host.strip()):
                return _failure(
                    "bad_host",
                    "The Ollama host must be a loopback address (set OLLAMA_HOST on the server "
                    "for a remote Ollama)",
                    secrets,
                )
            base_url = request.host.strip()
    elif not api_key:
        return _failure("auth", f"No API key for {request.provider}: send apiKey", secrets)
    seconds = min(timeout_seconds(), PROBE_TIMEOUT_CAP_SECONDS)
    try:
        models = list_models(request.provider, api_key=api_key, base_url=base_url, seconds=seconds)
    except ProviderError as exc:
        if exc.status in (401, 403):
            code = "auth"
        elif exc.status is not None:
            code = f"http_{exc.status}"
        elif exc.error_class in ("network", "timeout"):
            code = "network"
        else:
            code = "unknown"
        return _failure(code, exc.message, secrets)
    if not models:
        return _failure("no_models", f"{request.provider} answered with no models", secrets)
    return {"valid": True, "models": models, "suggested": suggest(models)}
