"""The shapes of config.json's `llm` and `llmFallbacks` sections (dream/config.py declares the
sections; the chain that reads them is chain.py)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core import config_store
from dream.llm.providers import Provider

MAX_FALLBACKS = 10


class LLMSettings(BaseModel):
    """The primary LLM provider."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = Field(description="Which wire format: anthropic, openai or ollama.")
    model: str | None = Field(
        None, min_length=1, max_length=200, description="Model id (default per provider)."
    )
    apiKey: str | None = Field(
        None,
        max_length=500,
        pattern=config_store.API_KEY_PATTERN,
        description="API key (anthropic, openai). Omitted: the stored key of the same provider "
        "is kept.",
    )
    baseUrl: str | None = Field(
        None,
        max_length=500,
        pattern=config_store.URL_PATTERN,
        description="Base URL (an OpenAI-compatible server, a proxy, or the Ollama host).",
    )

    _mask = field_validator("apiKey")(config_store.refuse_mask)


class FallbackSettings(LLMSettings):
    """One entry of the failover chain."""

    apiKey: str | None = Field(
        None,
        max_length=500,
        pattern=config_store.API_KEY_PATTERN,
        description="API key; sets or rotates this entry's key and wins over keepKeyFrom.",
    )
    keepKeyFrom: int | None = Field(
        None,
        ge=0,
        description="Index this entry had in the loaded chain: keep the key stored there "
        "(only when that entry has the same provider). Never stored.",
    )


FallbackChain = Annotated[list[FallbackSettings], Field(max_length=MAX_FALLBACKS)]
