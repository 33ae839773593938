"""The briefing's levels and the `briefing` key of config.json that picks one when a call names
none (`memesh config set briefing <level>`; this module owns the key, graph/config_sections.py
declares the section that checks writes of it)."""

from __future__ import annotations

from typing import Literal, cast, get_args

from core import config_store
from core.errors import OperationFailed

Level = Literal["minimal", "standard", "full"]
LEVELS: tuple[str, ...] = get_args(Level)
DEFAULT_LEVEL: Level = "minimal"
LEVEL_SETTING = "briefing"  # the config.json key holding the level used when a call names none


def configured_level() -> Level:
    """The `briefing` key of config.json, else `minimal`. A stored value that is no level (the
    file was edited by hand) is refused with the fix, not silently replaced by a default."""
    try:
        stored = config_store.load().get(LEVEL_SETTING)
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None
    if stored is None:
        return DEFAULT_LEVEL
    if stored in LEVELS:
        return cast(Level, stored)
    raise OperationFailed(
        f"{config_store.CONFIG_FILENAME}: {LEVEL_SETTING} is {stored!r}, not one of "
        f"{', '.join(LEVELS)}: run `memesh config set {LEVEL_SETTING} <level>`, or pass a level",
        field=LEVEL_SETTING,
    )
