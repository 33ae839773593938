"""Whether a newer memesh exists: GET /v1/update-status's answer.

I/O to an update source (MEMESH_UPDATE_URL, PyPI's JSON API format), not a graph rule and not
a transport, so it lives with the installation's other facts (settings.VERSION, the install
channel) rather than in a view. The last answer is cached in this process: a failed check
falls back to it (reported as such, with its age), and `cached_only` never touches the
network.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.utils import timezone
from packaging.version import Version

UPDATE_TIMEOUT_SECONDS = 3.0
STALE_AFTER = timedelta(hours=24)
PACKAGE = "memesh"


@dataclass
class _UpdateCache:
    latest: str | None = None
    last_success: datetime | None = None
    last_attempt: datetime | None = None
    last_error: str | None = None


_update_cache = _UpdateCache()
_update_lock = threading.Lock()


def _fetch_latest(url: str) -> str:
    """The latest version the update source names (PyPI's JSON API: info.version)."""
    response = httpx.get(url, timeout=UPDATE_TIMEOUT_SECONDS, follow_redirects=True)
    response.raise_for_status()
    body = response.json()
    version = body.get("info", {}).get("version") if isinstance(body, dict) else None
    if version is None and isinstance(body, dict):
        version = body.get("version")
    if not isinstance(version, str) or not version.strip():
        raise ValueError("the update source named no version")
    Version(version)  # InvalidVersion (a ValueError) when it is not one
    return version.strip()


def _install_channel() -> str:
    return "source-checkout" if (Path(settings.BASE_DIR) / ".git").exists() else "pip"


def update_status(*, cached_only: bool) -> dict[str, Any]:
    current = settings.VERSION
    url = settings.MEMESH_UPDATE_URL
    now = timezone.now()
    live_ok = False
    reason: str | None = None
    with _update_lock:
        cache = _update_cache
        if not url:
            reason = "no update source configured"
        elif cached_only:
            reason = None if cache.latest else "no update check has succeeded yet"
        else:
            cache.last_attempt = now
            try:
                cache.latest = _fetch_latest(url)
            except (httpx.HTTPError, ValueError) as exc:
                cache.last_error = f"update source unavailable: {type(exc).__name__}"
            else:
                cache.last_success, cache.last_error, live_ok = now, None, True
            if cache.latest is None:
                reason = cache.last_error
        latest = cache.latest if url else None
        snapshot = replace(cache)
    if latest is None:
        state, freshness, source = "unknown", "unavailable", "none"
        update_available: bool | None = None
    else:
        update_available = Version(latest) > Version(current)
        state = "outdated" if update_available else "current"
        source = "live" if live_ok else "cache"
        assert snapshot.last_success is not None
        if live_ok:
            freshness = "fresh"
        elif now - snapshot.last_success > STALE_AFTER:
            freshness = "stale"
        else:
            freshness = "cached"
    channel = _install_channel()

    def iso(value: datetime | None) -> str | None:
        return value.isoformat() if value else None

    return {
        "currentVersion": current,
        "latestVersion": latest,
        "state": state,
        "reason": reason,
        "updateAvailable": update_available,
        "checkSucceeded": live_ok,
        "checkedAt": iso(snapshot.last_success) if url else None,
        "lastAttemptAt": iso(snapshot.last_attempt) if url else None,
        "lastSuccessfulCheckAt": iso(snapshot.last_success) if url else None,
        "lastError": (snapshot.last_error if url else reason),
        "source": source,
        "freshness": freshness,
        "installChannel": channel,
        "canSelfUpdate": False,
        "recommendedCommand": (
            f"pip install --upgrade {PACKAGE}" if update_available and channel == "pip" else None
        ),
    }


def reset_update_cache() -> None:
    """Forget every update check (tests)."""
    with _update_lock:
        global _update_cache
        _update_cache = _UpdateCache()
