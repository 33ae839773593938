"""memesh's configuration file, MEMESH_HOME/config.json: the one service every transport uses
(GET/POST /v1/config, POST /v1/config/test, `memesh config`).

Keys: `llm` {provider, model, apiKey, baseUrl}; `llmFallbacks` (the ordered failover chain,
written whole); `language` (the language generated memories are written in, ≤ 60 chars);
`autoCapture` (its reading, with MEMESH_AUTO_CAPTURE, belongs to graph/capture/capture.py),
`sessionLimit`, `autoUpdate`, `setupCompleted`, `transcriptMining`, `theme`;
`embedder` (its shape and its reading belong to graph/embedding/config.py); `briefing` (the
briefing level used when a call names none; its values and its reading belong to
graph/ops/briefing/); `peerApi` (the compatibility surface, read by graph/ops/peer/). Keys
this module does not know are kept as they are on disk. The file itself — lock, atomic 0600
write — is core/config_store.py's; an embedder change queues a reindex in
dream/tasks.py (`config_saved`), not here.

Secrets: every API key leaves as `***` (core/redact.py's `mask_secret_fields`); a
client must never echo the mask back, so `***` as a key is refused. A fallback entry keeps its
stored key only through an explicit `keepKeyFrom: <index it had in the loaded chain>`, honoured
only when that stored entry has the same provider, and stripped before saving.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core import config_store, json_limits
from core.errors import InvalidInput, OperationFailed
from core.redact import mask_secret_fields
from dream.llm.chain import llm_chain
from dream.llm.probe import probe
from dream.llm.providers import Provider
from graph.embedding.config import EmbedderSection, load_config
from graph.ops.briefing import Level
from graph.ops.kit.validation_errors import describe_validation_error, first_field

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


class ConfigUpdate(BaseModel):
    """A partial update: fields not sent are kept; a field sent as null is removed."""

    model_config = ConfigDict(extra="forbid")

    llm: LLMSettings | None = Field(None, description="The primary LLM provider.")
    llmFallbacks: list[FallbackSettings] | None = Field(
        None,
        max_length=MAX_FALLBACKS,
        description="The ordered failover chain, replacing the stored one whole.",
    )
    language: str | None = Field(
        None,
        min_length=1,
        max_length=60,
        description="Output language of generated memories (a locale or a language name).",
    )
    autoCapture: bool | None = Field(None, description="Capture session memories via hooks.")
    sessionLimit: int | None = Field(None, ge=1, le=1000, description="Memories per session.")
    autoUpdate: bool | None = Field(None, description="Check for updates automatically.")
    setupCompleted: bool | None = Field(None, description="The setup wizard has run.")
    transcriptMining: bool | None = Field(None, description="Scheduled transcript mining.")
    theme: Literal["dark", "light", "system"] | None = Field(None, description="Dashboard theme.")
    # graph/embedding/config.py owns this section's shape.
    embedder: EmbedderSection | None = Field(
        None, description="The embedding provider: a name or {provider, model, baseUrl, ...}."
    )
    # graph/ops/peer/switch.py reads it.
    peerApi: bool | None = Field(
        None,
        description="Serve the peer-shaped compatibility surface: memory_* MCP tools and "
        "/api/v1/memories routes (also MEMESH_PEER_API=1). Off by default.",
    )
    # graph/ops/briefing/ reads it (and owns the values).
    briefing: Level | None = Field(
        None,
        description="The briefing level used when a briefing call names none: minimal, "
        "standard or full (unset: minimal).",
    )


def config_load() -> dict[str, Any]:
    """The stored configuration, unmasked ({} when there is no file)."""
    try:
        return config_store.load()
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None


def _parse_update(payload: object) -> ConfigUpdate:
    if not isinstance(payload, dict):
        raise InvalidInput("Request body must be a JSON object")
    try:
        return ConfigUpdate.model_validate(payload)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc), field=first_field(exc)) from None


def _clean(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


def _merge_llm(new: LLMSettings, stored: Any) -> dict[str, Any]:
    entry = _clean(new)
    if (
        "apiKey" not in entry
        and isinstance(stored, dict)
        and stored.get("provider") == new.provider
        and stored.get("apiKey")
    ):
        entry["apiKey"] = stored["apiKey"]
    return entry


def _merge_fallbacks(new: list[FallbackSettings], stored: Any) -> list[dict[str, Any]]:
    stored_list = stored if isinstance(stored, list) else []
    chain: list[dict[str, Any]] = []
    for item in new:
        entry = _clean(item)
        keep = entry.pop("keepKeyFrom", None)
        if "apiKey" not in entry and keep is not None and keep < len(stored_list):
            source = stored_list[keep]
            # The provider guard: a stale index never grafts one provider's key onto another.
            if (
                isinstance(source, dict)
                and source.get("provider") == item.provider
                and source.get("apiKey")
            ):
                entry["apiKey"] = source["apiKey"]
        chain.append(entry)
    return chain


@dataclass(frozen=True)
class ConfigChange:
    """A saved update: the masked configuration, and whether the embedder setting changed
    (its vectors then need rebuilding: dream.tasks.config_saved queues that)."""

    config: dict[str, Any]
    embedder_changed: bool


def config_change(payload: object) -> ConfigChange:
    """Apply a partial update (the POST /v1/config body)."""
    update = _parse_update(payload)

    def apply(config: dict[str, Any]) -> None:
        for name in update.model_fields_set:
            value = getattr(update, name)
            if value is None:
                config.pop(name, None)
            elif name == "llm":
                config["llm"] = _merge_llm(value, config.get("llm"))
            elif name == "llmFallbacks":
                config["llmFallbacks"] = _merge_fallbacks(value, config.get("llmFallbacks"))
            elif isinstance(value, BaseModel):
                config[name] = _clean(value)
            else:
                config[name] = value

    try:
        before, after = config_store.update(apply)
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None
    return ConfigChange(
        config=mask_secret_fields(after),
        embedder_changed=after.get("embedder") != before.get("embedder"),
    )


def config_update(payload: object) -> dict[str, Any]:
    """Apply a partial update and return the masked result (no reindex is queued: the
    transports call dream.tasks.config_saved for that)."""
    return config_change(payload).config


def parse_cli_value(raw: str) -> Any:
    """A CLI value: JSON when it parses as JSON, else the string itself; JSON nested past
    MAX_JSON_DEPTH is refused (JSONTooDeep), not taken for a string."""
    try:
        return json_limits.loads(raw)
    except json_limits.JSONTooDeep:
        raise
    except ValueError:
        return raw


def config_set(key: str, value: Any) -> ConfigChange:
    """`memesh config set KEY VALUE`; KEY may name a field of an object (`llm.model`)."""
    top, _, sub = key.partition(".")
    if not sub:
        return config_change({top: value})
    current = config_load().get(top)
    section = dict(current) if isinstance(current, dict) else {}
    section[sub] = value
    return config_change({top: section})


def config_unset(key: str) -> ConfigChange:
    """`memesh config unset KEY` (or `llm.baseUrl`): remove it; unknown keys are refused."""
    top, _, sub = key.partition(".")
    if top not in ConfigUpdate.model_fields:
        raise InvalidInput(f"{top}: unknown config key")
    if not sub:
        return config_change({top: None})
    current = config_load().get(top)
    if not isinstance(current, dict) or sub not in current:
        return ConfigChange(config=mask_secret_fields(config_load()), embedder_changed=False)
    section = {k: v for k, v in current.items() if k != sub}
    return config_change({top: section})


def config_get() -> dict[str, Any]:
    """GET /v1/config: the masked configuration and what this installation can do."""
    from django.db import connection

    config = config_load()
    chain = llm_chain(config)
    try:
        embeddings = load_config().provider
    except Exception:  # a broken embedder section is reported, not fatal here
        embeddings = "misconfigured"
    vectors = bool(getattr(connection, "vec_available", False))
    capabilities = {
        "fts5": True,
        "vectorSearch": vectors and embeddings not in ("none", "misconfigured"),
        "scoring": True,
        "knowledgeEvolution": True,
        "embeddings": embeddings,
        "llm": {"provider": chain[0].provider, "model": chain[0].model} if chain else None,
        "searchLevel": 2 if chain else (1 if embeddings not in ("none",) else 0),
    }
    return {"config": mask_secret_fields(config), "capabilities": capabilities}


def config_test(payload: object) -> dict[str, Any]:
    """POST /v1/config/test: probe a provider's model list (nothing is written)."""
    return probe(payload, config_load())
