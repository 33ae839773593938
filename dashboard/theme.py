"""The dashboard's `theme` section of config.json (dark, light or system) and how a page reads
it. DashboardConfig.ready() registers the section (core/config_sections.py)."""

from __future__ import annotations

from typing import Literal, get_args

from core import config_sections, config_store
from graph.config_sections import typed_section

Theme = Literal["dark", "light", "system"]
THEMES: tuple[str, ...] = get_args(Theme)
THEME_SETTING = "theme"
DEFAULT_THEME = "system"

SECTION = typed_section(THEME_SETTING, Theme, "Dashboard theme.", default=DEFAULT_THEME)


def theme() -> str:
    """The stored theme, the default when it is unset, unreadable or no theme."""
    try:
        value = config_sections.setting(THEME_SETTING)
    except config_store.ConfigUnreadable:
        return DEFAULT_THEME
    return value if isinstance(value, str) and value in THEMES else DEFAULT_THEME
