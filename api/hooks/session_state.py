"""What the hooks remember about a running session between their processes: which
once-per-session things were already done (a reminder per tool, the memories shown for a
file). Hook state, not memory: MEMESH_HOME/hook-sessions.json (0600), the newest MAX_SESSIONS
sessions kept, read-modify-written under an exclusive lock (hooks of one session can run at
once). A state that cannot be read starts empty: at worst a reminder is shown twice.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

from core import paths

STATE_FILENAME = "hook-sessions.json"
MAX_SESSIONS = 50
MAX_KEYS = 500


def _path() -> Path:
    return paths.memesh_home() / STATE_FILENAME


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, state: dict[str, Any]) -> None:
    paths.write_private_json(path, state)


def first_time(session_id: str, key: str) -> bool:
    """True the first time `key` is asked for in `session_id` (and records it)."""
    path = _path()
    paths.ensure_private_dir(path.parent)
    lock = os.open(str(path) + ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = _load(path)
        entry = state.get(session_id)
        keys: list[str] = entry.get("keys", []) if isinstance(entry, dict) else []
        if key in keys:
            return False
        state[session_id] = {"at": time.time(), "keys": [*keys, key][-MAX_KEYS:]}
        newest = sorted(
            state.items(),
            key=lambda item: item[1].get("at", 0) if isinstance(item[1], dict) else 0,
            reverse=True,
        )
        _save(path, dict(newest[:MAX_SESSIONS]))
        return True
    finally:
        os.close(lock)
