"""Which embedder memesh uses: the `embedder` section of MEMESH_HOME/config.json (owned and
validated here, stored through core/config_store.py), overridden by these settings
(environment variables read in memesh_site/settings.py):

    MEMESH_EMBEDDER            local (default) | ollama | openai | none
    MEMESH_EMBEDDER_MODEL      provider's model (defaults per provider); for local:
                               minilm (all-MiniLM-L6-v2, the default) or bge-small-en-v1.5
    MEMESH_EMBEDDER_BASE_URL   provider URL (ollama, or any OpenAI-compatible API)
    MEMESH_EMBEDDER_API_KEY    API key (openai; OPENAI_API_KEY is read too)
    MEMESH_EMBEDDER_DIMENSIONS requested width, where the provider supports choosing one
    MEMESH_EMBEDDER_TIMEOUT    seconds per provider request (default 30)

In config.json, `"embedder": "ollama"` or `"embedder": {"provider": "openai", "model": …,
"baseUrl": …, "apiKey": …, "dimensions": …}`. `deterministic` is a word-hashing provider for
the test suite only: it has no notion of meaning.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core import config_store
from graph.embedding import local_models
from graph.embedding.base import EmbedderConfig

# The providers a user configures; `deterministic` is for the test suite only (environment).
ConfiguredProvider = Literal["local", "ollama", "openai", "none"]
PROVIDERS = (*get_args(ConfiguredProvider), "deterministic")
DEFAULT_PROVIDER = "local"
SECTION = "embedder"


class EmbedderSettings(BaseModel):
    """The `embedder` section of config.json in its object form."""

    model_config = ConfigDict(extra="forbid")

    provider: ConfiguredProvider
    model: str | None = Field(None, max_length=200)
    baseUrl: str | None = Field(None, max_length=500, pattern=config_store.URL_PATTERN)
    apiKey: str | None = Field(None, max_length=500, pattern=config_store.API_KEY_PATTERN)
    dimensions: int | None = Field(None, ge=1, le=8192)
    timeout: float | None = Field(None, gt=0, le=600)

    _mask = field_validator("apiKey")(config_store.refuse_mask)

    @model_validator(mode="after")
    def _known_local_model(self) -> EmbedderSettings:
        # Refused when written: once stored, every recall would fail on reading it.
        if self.provider == "local" and self.model and local_models.find(self.model) is None:
            raise ValueError(
                f"local model {self.model!r} is unknown (choose one of {local_models.names()})"
            )
        return self


# What a write of the section accepts: a provider name, or the object.
EmbedderSection = ConfiguredProvider | EmbedderSettings


def _file_section() -> dict[str, Any]:
    try:
        raw = config_store.load()
    except config_store.ConfigUnreadable as exc:
        raise ImproperlyConfigured(str(exc)) from None
    section = raw.get(SECTION)
    if section is None:
        return {}
    if isinstance(section, str):
        return {"provider": section}
    if not isinstance(section, dict):
        path = config_store.config_path()
        raise ImproperlyConfigured(f'{path}: "embedder" must be a provider name or an object')
    return section


def _overrides() -> tuple[str, str, str, str, str, int | None, float | None]:
    return (
        settings.MEMESH_EMBEDDER,
        settings.MEMESH_EMBEDDER_MODEL,
        settings.MEMESH_EMBEDDER_BASE_URL,
        settings.MEMESH_EMBEDDER_API_KEY,
        settings.OPENAI_API_KEY,
        settings.MEMESH_EMBEDDER_DIMENSIONS,
        settings.MEMESH_EMBEDDER_TIMEOUT,
    )


_cache: tuple[tuple[object, ...], EmbedderConfig] | None = None


def load_config() -> EmbedderConfig:
    """The configuration now. Every recall and every write asks, and config.json may change
    under a running process (`memesh config set embedder …` in another process, POST
    /v1/config in the server), so the answer is cached until the file's modification time
    changes. The settings are part of the key too: constant in a process, but the test suite
    overrides them per test."""
    global _cache
    key = (*_overrides(), str(config_store.config_path()), config_store.stamp())
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    config = _read_config()
    _cache = (key, config)
    return config


def _read_config() -> EmbedderConfig:
    section = _file_section()
    provider = (settings.MEMESH_EMBEDDER or section.get("provider") or DEFAULT_PROVIDER).lower()
    if provider not in PROVIDERS:
        raise ImproperlyConfigured(
            f"embedder provider {provider!r} is unknown (choose one of {', '.join(PROVIDERS)})"
        )
    api_key = settings.MEMESH_EMBEDDER_API_KEY or section.get("apiKey") or ""
    if provider == "openai" and not api_key:
        api_key = settings.OPENAI_API_KEY
    env_dims, env_timeout = settings.MEMESH_EMBEDDER_DIMENSIONS, settings.MEMESH_EMBEDDER_TIMEOUT
    raw_dims = env_dims if env_dims is not None else section.get("dimensions")
    raw_timeout = env_timeout if env_timeout is not None else (section.get("timeout") or 30)
    try:
        dimensions = int(raw_dims) if raw_dims not in (None, "") else None
        timeout = float(raw_timeout)
    except (TypeError, ValueError):
        raise ImproperlyConfigured("embedder dimensions and timeout must be numbers") from None
    if dimensions is not None and not 1 <= dimensions <= 8192:
        raise ImproperlyConfigured(f"embedder dimensions {dimensions} is outside 1–8192")
    model = settings.MEMESH_EMBEDDER_MODEL or section.get("model") or ""
    if provider == "local":
        spec = local_models.find(model)
        if spec is None:
            raise ImproperlyConfigured(
                f"local embedder model {model!r} is unknown (choose one of {local_models.names()})"
            )
        model = spec.name
    return EmbedderConfig(
        provider=provider,
        model=model,
        base_url=(settings.MEMESH_EMBEDDER_BASE_URL or section.get("baseUrl") or "").rstrip("/"),
        api_key=api_key,
        dimensions=dimensions,
        timeout=timeout,
    )
