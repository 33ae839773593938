"""Which embedder memesh uses: the `embedder` key of MEMESH_HOME/config.json, overridden by env.

    MEMESH_EMBEDDER            local (default) | ollama | openai | none
    MEMESH_EMBEDDER_MODEL      provider's model (defaults per provider)
    MEMESH_EMBEDDER_BASE_URL   provider URL (ollama, or any OpenAI-compatible API)
    MEMESH_EMBEDDER_API_KEY    API key (openai; OPENAI_API_KEY is read too)
    MEMESH_EMBEDDER_DIMENSIONS requested width, where the provider supports choosing one
    MEMESH_EMBEDDER_TIMEOUT    seconds per provider request (default 30)

In config.json, `"embedder": "ollama"` or `"embedder": {"provider": "openai", "model": …,
"baseUrl": …, "apiKey": …, "dimensions": …}`. `deterministic` is a word-hashing provider for
the test suite only: it has no notion of meaning.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from graph.embedding.base import EmbedderConfig
from memesh_site import paths

PROVIDERS = ("local", "ollama", "openai", "none", "deterministic")
DEFAULT_PROVIDER = "local"
CONFIG_FILENAME = "config.json"


def _file_section() -> dict[str, Any]:
    path = paths.memesh_home() / CONFIG_FILENAME
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ImproperlyConfigured(f"{path} is not readable JSON: {exc}") from None
    section = raw.get("embedder") if isinstance(raw, dict) else None
    if section is None:
        return {}
    if isinstance(section, str):
        return {"provider": section}
    if not isinstance(section, dict):
        raise ImproperlyConfigured(f'{path}: "embedder" must be a provider name or an object')
    return section


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


_ENV_NAMES = (
    "MEMESH_EMBEDDER",
    "MEMESH_EMBEDDER_MODEL",
    "MEMESH_EMBEDDER_BASE_URL",
    "MEMESH_EMBEDDER_API_KEY",
    "MEMESH_EMBEDDER_DIMENSIONS",
    "MEMESH_EMBEDDER_TIMEOUT",
    "OPENAI_API_KEY",
    "MEMESH_HOME",
)
_cache: tuple[tuple[object, ...], EmbedderConfig] | None = None


def load_config() -> EmbedderConfig:
    """The configuration now. Every recall and every write asks, so the answer is cached
    until the environment or config.json (by modification time) changes."""
    global _cache
    path = paths.memesh_home() / CONFIG_FILENAME
    try:
        stamp: object = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    key = (*(os.environ.get(name) for name in _ENV_NAMES), stamp)
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    config = _read_config()
    _cache = (key, config)
    return config


def _read_config() -> EmbedderConfig:
    section = _file_section()
    provider = (_env("MEMESH_EMBEDDER") or section.get("provider") or DEFAULT_PROVIDER).lower()
    if provider not in PROVIDERS:
        raise ImproperlyConfigured(
            f"embedder provider {provider!r} is unknown (choose one of {', '.join(PROVIDERS)})"
        )
    api_key = _env("MEMESH_EMBEDDER_API_KEY") or section.get("apiKey") or ""
    if provider == "openai" and not api_key:
        api_key = _env("OPENAI_API_KEY") or ""
    raw_dims = _env("MEMESH_EMBEDDER_DIMENSIONS") or section.get("dimensions")
    raw_timeout = _env("MEMESH_EMBEDDER_TIMEOUT") or section.get("timeout") or 30
    try:
        dimensions = int(raw_dims) if raw_dims not in (None, "") else None
        timeout = float(raw_timeout)
    except (TypeError, ValueError):
        raise ImproperlyConfigured("embedder dimensions and timeout must be numbers") from None
    if dimensions is not None and not 1 <= dimensions <= 8192:
        raise ImproperlyConfigured(f"embedder dimensions {dimensions} is outside 1–8192")
    return EmbedderConfig(
        provider=provider,
        model=_env("MEMESH_EMBEDDER_MODEL") or section.get("model") or "",
        base_url=(_env("MEMESH_EMBEDDER_BASE_URL") or section.get("baseUrl") or "").rstrip("/"),
        api_key=api_key,
        dimensions=dimensions,
        timeout=timeout,
    )
