"""Typed readers for MEMESH_* environment variables that fail loudly on bad values.

memesh_site/settings.py calls them, and every other module reads `django.conf.settings`; the
one other caller is memesh_site/asgi.py, for the worker count `memesh serve` hands over.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use true or false)")


def envbool_or_none(name: str) -> bool | None:
    """An optional boolean: None when unset or empty."""
    raw = os.environ.get(name)
    return None if raw is None or not raw.strip() else envbool(name, False)


def envint(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def envint_within(name: str, default: int, low: int, high: int) -> int:
    value = envint(name, default)
    if not low <= value <= high:
        raise ImproperlyConfigured(f"{name}={value} is not between {low} and {high}")
    return value


def envstr(name: str, default: str) -> str:
    raw = os.environ.get(name)
    return default if raw is None or not raw.strip() else raw.strip()


def envint_or_none(name: str) -> int | None:
    """An optional integer: None when unset or empty."""
    raw = os.environ.get(name)
    return None if raw is None or not raw.strip() else envint(name, 0)


def envfloat(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from None


def envfloat_or_none(name: str) -> float | None:
    """An optional number: None when unset or empty."""
    raw = os.environ.get(name)
    return None if raw is None or not raw.strip() else envfloat(name, 0.0)


def envpath(name: str, default: Path) -> Path:
    """A path (`~` expanded); `default` when unset or empty."""
    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser() if raw else default


def envsecret(name: str) -> str:
    """A secret exactly as set (a password may begin or end with a space); "" when unset."""
    return os.environ.get(name) or ""


def envnames(prefix: str) -> list[str]:
    """The names of the variables set (to anything but "") that start with `prefix`, sorted."""
    return sorted(name for name, value in os.environ.items() if name.startswith(prefix) and value)
