"""MEMESH_HOME/hook-outcomes.jsonl: what a capture hook could not do, one JSON line each.

A hook (`memesh hook <event>`, api/hooks/) runs inside an agent host that shows the user its
stderr and reads its stdout, so it never fails out loud: it records here and exits 0. A line
holds the event, the time, the outcome (`failed`, or `dropped` for a capture refused because
it carried a secret) and, for a failure, the error's class and a redacted one-line message;
never the payload's content. Successful runs write nothing.

Standard library and core/redact.py only (the redactor masks paths only once Django's
settings are loaded, and key shapes always): this also records the failures that happen
before Django can start — a bad MEMESH_* value in the
settings, a broken installation.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.paths import home_from_env

OUTCOMES_FILENAME = "hook-outcomes.jsonl"
# Past this size the file is moved aside (one old generation kept) before the next line.
MAX_BYTES = 1024 * 1024


def outcomes_path(env: Mapping[str, str] | None = None) -> Path:
    return home_from_env(os.environ if env is None else env) / OUTCOMES_FILENAME


def _redacted(message: str) -> str:
    from core import redact

    try:
        return redact.redact_message(message)
    except Exception:  # Django's settings did not load: keys masked, the home directory by hand
        text = redact.mask_key_shapes(message)
        home = str(Path.home())
        text = text.replace(home, "~") if home and home != "/" else text
        return " ".join(text.split())[: redact.MAX_MESSAGE_CHARS]


def record(event: str, outcome: str, *, error: BaseException | None = None, **fields: Any) -> None:
    """Append one line; a failure to write it is swallowed (the hook must still exit 0)."""
    line: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "event": event,
        "outcome": outcome,
        **{k: v for k, v in fields.items() if v is not None},
    }
    if error is not None:
        line["error"] = type(error).__name__
        message = _redacted(str(error))
        if message:
            line["message"] = message
    with contextlib.suppress(OSError, ValueError, TypeError):
        path = outcomes_path()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if path.stat().st_size > MAX_BYTES:
                os.replace(path, path.with_name(OUTCOMES_FILENAME + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
