"""memesh's configuration file, MEMESH_HOME/config.json: the one service every transport uses
(GET/POST /v1/config, POST /v1/config/test, `memesh config`).

Keys: `llm` {provider, model, apiKey, baseUrl}; `llmFallbacks` (the ordered failover chain,
written whole); `language` (the language generated memories are written in, ≤ 60 chars);
`autoCapture`, `sessionLimit`, `autoUpdate`, `setupCompleted`, `transcriptMining`, `theme`;
`embedder` (read by graph/embedding/config.py). Keys this module does not know are kept as they
are on disk.

Secrets: every API key leaves as `***` (`config_masked`); a client must never echo the mask
back, so `***` as a key is refused. A fallback entry keeps its stored key only through an
explicit `keepKeyFrom: <index it had in the loaded chain>`, honoured only when that stored
entry has the same provider, and stripped before saving. The file is written atomically
(temp file + rename) with mode 0600 under an exclusive lock, so concurrent writers never lose
each other's changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from graph.errors import InvalidInput, OperationFailed
from graph.ops.operation import describe_validation_error
from memesh_site import paths
from proposals.llm.providers import DEFAULT_MODELS, ProviderSpec
from proposals.llm.redact import MASK

CONFIG_FILENAME = "config.json"  # the same file graph/embedding/config.py reads
MAX_FALLBACKS = 10
_SECRET_KEY = re.compile(r"(?i)^(api[_-]?key|.*token|.*secret|password)$")
_URL = r"^https?://[^\s/?#]+(/[^\s?#]*)?$"
# API keys travel in HTTP headers: printable ASCII, no spaces (anything else is no key and
# could not be sent).
API_KEY_PATTERN = r"^[\x21-\x7e]+$"

Provider = Literal["anthropic", "openai", "ollama"]


def _no_mask(value: str | None) -> str | None:
    if value is not None and value.strip() == MASK:
        raise ValueError("is the mask '***': send the real key, or omit it to keep the stored one")
    return value


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
        pattern=API_KEY_PATTERN,
        description="API key (anthropic, openai). Omitted: the stored key of the same provider "
        "is kept.",
    )
    baseUrl: str | None = Field(
        None,
        max_length=500,
        pattern=_URL,
        description="Base URL (an OpenAI-compatible server, a proxy, or the Ollama host).",
    )

    _mask = field_validator("apiKey")(_no_mask)


class FallbackSettings(LLMSettings):
    """One entry of the failover chain."""

    apiKey: str | None = Field(
        None,
        max_length=500,
        pattern=API_KEY_PATTERN,
        description="API key; sets or rotates this entry's key and wins over keepKeyFrom.",
    )
    keepKeyFrom: int | None = Field(
        None,
        ge=0,
        description="Index this entry had in the loaded chain: keep the key stored there "
        "(only when that entry has the same provider). Never stored.",
    )


class EmbedderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: Literal["local", "ollama", "openai", "none"]
    model: str | None = Field(None, max_length=200)
    baseUrl: str | None = Field(None, max_length=500, pattern=_URL)
    apiKey: str | None = Field(None, max_length=500, pattern=API_KEY_PATTERN)
    dimensions: int | None = Field(None, ge=1, le=8192)
    timeout: float | None = Field(None, gt=0, le=600)

    _mask = field_validator("apiKey")(_no_mask)


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
    embedder: Literal["local", "ollama", "openai", "none"] | EmbedderSettings | None = Field(
        None, description="The embedding provider: a name or {provider, model, baseUrl, ...}."
    )


def config_path() -> Path:
    return paths.memesh_home() / CONFIG_FILENAME


def config_load() -> dict[str, Any]:
    """The stored configuration, unmasked ({} when there is no file)."""
    path = config_path()
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise OperationFailed(f"{CONFIG_FILENAME} is not readable JSON: {exc}") from None
    return raw if isinstance(raw, dict) else {}


def config_masked(value: Any) -> Any:
    """`value` with every secret-named key's non-empty value replaced by `***`, recursively."""
    if isinstance(value, dict):
        return {
            k: (MASK if _SECRET_KEY.match(str(k)) and v else config_masked(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [config_masked(v) for v in value]
    return value


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """An exclusive lock for read-modify-write across processes (a sibling lock file)."""
    paths.ensure_private_dir(paths.memesh_home())
    lock_path = paths.memesh_home() / (CONFIG_FILENAME + ".lock")
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _save(config: dict[str, Any]) -> None:
    """Write atomically with mode 0600; make sure the file's mtime moves, because readers
    (graph/embedding/config.py) cache by it."""
    path = config_path()
    try:
        before = path.stat().st_mtime_ns
    except OSError:
        before = None
    fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".json", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(config, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    after = path.stat().st_mtime_ns
    if before is not None and after <= before:
        os.utime(path, ns=(before + 1000, before + 1000))


def _parse_update(payload: object) -> ConfigUpdate:
    if not isinstance(payload, dict):
        raise InvalidInput("Request body must be a JSON object")
    try:
        return ConfigUpdate.model_validate(payload)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc)) from None


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


def config_update(payload: object) -> dict[str, Any]:
    """Apply a partial update (the POST /v1/config body) and return the masked result."""
    update = _parse_update(payload)
    with _locked():
        config = config_load()
        embedder_before = config.get("embedder")
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
        _save(config)
    masked: dict[str, Any] = config_masked(config)
    if config.get("embedder") != embedder_before:
        # Vectors of another embedder are never searched: rebuild them in the background
        # (`memesh reindex` is the synchronous twin; GET /v1/tasks/<id> reports on this one).
        from proposals.services import task_run_enqueue

        masked["reindexTaskId"] = task_run_enqueue(kind="reindex", params={}).task_id
    return masked


def parse_cli_value(raw: str) -> Any:
    """A CLI value: JSON when it parses as JSON, else the string itself."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def config_set(key: str, value: Any) -> dict[str, Any]:
    """`memesh config set KEY VALUE`; KEY may name a field of an object (`llm.model`)."""
    top, _, sub = key.partition(".")
    if not sub:
        return config_update({top: value})
    current = config_load().get(top)
    section = dict(current) if isinstance(current, dict) else {}
    section[sub] = value
    return config_update({top: section})


def config_unset(key: str) -> dict[str, Any]:
    """`memesh config unset KEY` (or `llm.baseUrl`): remove it; unknown keys are refused."""
    top, _, sub = key.partition(".")
    if top not in ConfigUpdate.model_fields:
        raise InvalidInput(f"{top}: unknown config key")
    if not sub:
        return config_update({top: None})
    current = config_load().get(top)
    if not isinstance(current, dict) or sub not in current:
        return config_masked(config_load())  # type: ignore[no-any-return]
    section = {k: v for k, v in current.items() if k != sub}
    return config_update({top: section})


def llm_chain(config: dict[str, Any] | None = None) -> list[ProviderSpec]:
    """The providers to try, in order: the primary `llm`, then `llmFallbacks`."""
    config = config_load() if config is None else config
    entries = [config.get("llm"), *(config.get("llmFallbacks") or [])]
    chain: list[ProviderSpec] = []
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("provider") not in DEFAULT_MODELS:
            continue
        provider = str(entry["provider"])
        chain.append(
            ProviderSpec(
                provider=provider,
                model=str(entry.get("model") or DEFAULT_MODELS[provider]),
                api_key=str(entry.get("apiKey") or ""),
                base_url=str(entry.get("baseUrl") or ""),
            )
        )
    return chain


def config_secrets(config: dict[str, Any] | None = None) -> list[str]:
    """Every secret value in the configuration (for literal redaction)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if _SECRET_KEY.match(str(k)) and isinstance(v, str) and v:
                    found.append(v)
                else:
                    walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(config_load() if config is None else config)
    return found


def config_get() -> dict[str, Any]:
    """GET /v1/config: the masked configuration and what this installation can do."""
    from django.db import connection

    from graph.embedding.config import load_config

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
    return {"config": config_masked(config), "capabilities": capabilities}


def config_test(payload: object) -> dict[str, Any]:
    """POST /v1/config/test: probe a provider's model list (nothing is written)."""
    from proposals.llm.probe import probe

    return probe(payload, config_load())
