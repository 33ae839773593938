"""config.json as one registry of validated sections: the service behind GET/POST /v1/config,
`memesh config list|set|unset` and the dashboard's settings page.

Each app declares the sections it owns (`register`, from its AppConfig.ready()): graph the
embedder, the briefing level, the peer surface and capture (graph/config_sections.py); dream
the LLM chain, language and transcript mining (dream/config.py); the dashboard its theme
(dashboard/theme.py). A section says how a written value is checked, what a reader gets when
it is unset, which of its fields are secrets, and how a written value meets the stored one
(the LLM key kept across an update that omits it). This module knows no section by name; the
file itself — lock, atomic 0600 write — is core/config_store.py's.

A write is a partial update: keys not sent are kept, a key sent as null is removed, keys no
section declares are refused, and keys already on disk that no section declares are kept as
they are. Every problem of a write is reported at once, one clause per field, as
`validation.bad-body` naming the first field at fault; nothing is written then.

Secrets: every secret-named key (core/redact.py's `mask_secret_fields`), and every field a
section names as secret, leaves as `***`; a client must never echo the mask back, so the
checks refuse `***` as a key (config_store.refuse_mask).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from core import config_store, json_limits
from core.errors import InvalidInput, OperationFailed
from core.redact import MASK, mask_secret_fields

UNKNOWN_FIELD = "unknown field"  # the clause of a key no section declares, as pydantic says it


@dataclass(frozen=True)
class ConfigSection:
    """One top-level key of config.json and its rules.

    `check(value)` returns the JSON to store for a written (non-null) value, or raises
    InvalidInput whose message names the field at fault (`llm.apiKey: …`). `merge(new,
    stored)` makes the value saved from the checked one and the one on disk (unset: the checked
    value). `schema()` returns the type written values have, for the API's documentation: a
    function, because the apps declare their sections as every process starts, and importing
    the types then would slow each one down."""

    name: str
    description: str
    check: Callable[[object], object]
    schema: Callable[[], object]
    default: object = None
    secret_fields: tuple[str, ...] = ()
    merge: Callable[[object, object], object] | None = None


_sections: dict[str, ConfigSection] = {}


def register(*sections: ConfigSection) -> None:
    """Declare sections (an app's ready() does). Declaring one again replaces it."""
    for section in sections:
        _sections[section.name] = section


def sections() -> tuple[ConfigSection, ...]:
    """The declared sections, in the order they were declared."""
    return tuple(_sections.values())


def config_load() -> dict[str, Any]:
    """The stored configuration, unmasked ({} when there is no file)."""
    try:
        return config_store.load()
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None


def setting(name: str) -> object:
    """A section's stored value, or its default when it is unset or null. An unreadable file
    raises config_store.ConfigUnreadable: each reader decides what that means for it."""
    stored = config_store.load().get(name)
    return _sections[name].default if stored is None else stored


def masked(config: dict[str, Any]) -> dict[str, Any]:
    """The configuration as it may be shown: secret-named keys and declared secrets as `***`."""
    out: dict[str, Any] = mask_secret_fields(config)
    for section in _sections.values():
        if section.secret_fields and section.name in out:
            out[section.name] = _mask_fields(out[section.name], section.secret_fields)
    return out


def _mask_fields(value: object, names: tuple[str, ...]) -> object:
    if isinstance(value, dict):
        return {k: MASK if k in names and v else _mask_fields(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_fields(v, names) for v in value]
    return value


@dataclass(frozen=True)
class ConfigChange:
    """A saved update: the masked configuration, and the sections whose stored value changed
    (a transport acts on some: a new embedder queues a reindex, dream/tasks.py)."""

    config: dict[str, Any]
    changed: frozenset[str]


def _checked(payload: object) -> dict[str, object]:
    """The update's values as they will be stored (None: remove), or one InvalidInput naming
    every problem, in the order the sections were declared, unknown keys last."""
    if not isinstance(payload, dict):
        raise InvalidInput("Request body must be a JSON object")
    values: dict[str, object] = {}
    problems: list[InvalidInput] = []
    for section in _sections.values():
        if section.name not in payload:
            continue
        value = payload[section.name]
        try:
            values[section.name] = None if value is None else section.check(value)
        except InvalidInput as exc:
            problems.append(exc)
    unknown = [InvalidInput(f"{key}: {UNKNOWN_FIELD}", field=key) for key in payload]
    problems += [exc for exc in unknown if exc.field not in _sections]
    if problems:
        message = "; ".join(exc.message for exc in problems)
        raise InvalidInput(message, field=problems[0].field)
    return values


def config_change(payload: object) -> ConfigChange:
    """Apply a partial update (the POST /v1/config body)."""
    values = _checked(payload)

    def apply(config: dict[str, Any]) -> None:
        for name, value in values.items():
            merge = _sections[name].merge
            if value is None:
                config.pop(name, None)
            else:
                config[name] = merge(value, config.get(name)) if merge else value

    try:
        before, after = config_store.update(apply)
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None
    return ConfigChange(config=masked(after), changed=_changed(before, after))


def _changed(before: dict[str, Any], after: dict[str, Any]) -> frozenset[str]:
    keys: Iterable[str] = {*before, *after}
    return frozenset(k for k in keys if before.get(k) != after.get(k))


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
    if top not in _sections:
        raise InvalidInput(f"{top}: unknown config key")
    if not sub:
        return config_change({top: None})
    current = config_load().get(top)
    if not isinstance(current, dict) or sub not in current:
        return ConfigChange(config=masked(config_load()), changed=frozenset())
    section = {k: v for k, v in current.items() if k != sub}
    return config_change({top: section})
