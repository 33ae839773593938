"""Claude Code's hook input, read once: the fields every event carries (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`) and the event's own (`tool_name`, `tool_input`,
`tool_response`, `prompt`, `trigger`, `source`, `stop_hook_active`), each checked for the type
it must have — a field of another type is treated as absent, never trusted.

The project is the one of the payload's `cwd` (an existing absolute directory), else of the
directory the command was started in (the caller's, when `memesh serve` runs it:
core/invocation.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from core import json_limits
from core.invocation import caller_directory
from graph.project import project_id

# graph/ops/kit/fields.py SessionId: visible ASCII, at most 128 characters.
_SESSION_ID = re.compile(r"^[\x21-\x7e]{1,128}$")


class HookInputError(ValueError):
    """The hook's input is not a JSON object."""


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class HookPayload:
    data: dict[str, Any]

    @property
    def session_id(self) -> str | None:
        value = _str(self.data.get("session_id"))
        return value if value is not None and _SESSION_ID.match(value) else None

    @property
    def transcript_path(self) -> Path | None:
        value = _str(self.data.get("transcript_path"))
        return Path(value).expanduser() if value else None

    @cached_property
    def reported_cwd(self) -> str | None:
        """The payload's `cwd`, when it names an existing absolute directory."""
        value = _str(self.data.get("cwd"))
        if value is None or not os.path.isabs(value) or not os.path.isdir(value):
            return None
        return value

    @property
    def cwd(self) -> str:
        return self.reported_cwd or caller_directory()

    @cached_property
    def project(self) -> str:
        return project_id(self.cwd)

    @property
    def tool_name(self) -> str:
        return _str(self.data.get("tool_name")) or ""

    @property
    def tool_input(self) -> dict[str, Any]:
        value = self.data.get("tool_input")
        return value if isinstance(value, dict) else {}

    @property
    def tool_response(self) -> Any:
        return self.data.get("tool_response")

    def text(self, key: str) -> str:
        value = self.data.get(key)
        return value if isinstance(value, str) else ""


def parse_payload(text: str) -> HookPayload:
    try:
        data = json_limits.loads(text)
    except ValueError as exc:  # JSONTooDeep is a ValueError too
        raise HookInputError(f"the hook input is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    return HookPayload(data)
