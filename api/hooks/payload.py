"""Claude Code's hook input, read once: the fields every event carries (`session_id`,
`transcript_path`, `cwd`, `hook_event_name`) and the event's own (`tool_name`, `tool_input`,
`tool_response`, `prompt`, `trigger`, `source`, `stop_hook_active`), each checked for the type
it must have — a field of another type is treated as absent, never trusted.

Codex sends the same fields. Gemini CLI sends them too, under its own event names: its tool
events (BeforeTool, AfterTool) name its tools its way, read here as Claude Code's
(core/transcripts/gemini.py), and the first prompt of a session it runs without a terminal
carries SessionStart's context in front, wrapped in `<hook_context>`, which `prompt` leaves
out (it is memesh's own block, not what the user asked).

The project is the one of the payload's `cwd` (an existing absolute directory), else of the
directory the command was started in (the caller's, when `memesh serve` runs it:
core/invocation.py). Which host sent the input is not read from it: the hook's command names
the host (`--host`, core/hook_hosts.py), and `source_host` is what the hook's writes are
stamped with.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from core import json_limits
from core.hook_hosts import DEFAULT_HOOK_HOST, hook_source_host
from core.invocation import caller_directory
from graph.project import project_id

# graph/ops/kit/fields.py SessionId: visible ASCII, at most 128 characters.
_SESSION_ID = re.compile(r"^[\x21-\x7e]{1,128}$")
GEMINI_TOOL_EVENTS = frozenset({"BeforeTool", "AfterTool"})
# Gemini CLI escapes `<` and `>` in a hook's context, so the block cannot hold its own end tag.
_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)


class HookInputError(ValueError):
    """The hook's input is not a JSON object."""


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class HookPayload:
    data: dict[str, Any]
    host: str = DEFAULT_HOOK_HOST  # who ran the hook: `memesh hook <event> --host <host>`

    @property
    def source_host(self) -> str:
        """The stamp of what this hook stores (core/hook_hosts.py)."""
        return hook_source_host(self.host)

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
        name = _str(self.data.get("tool_name")) or ""
        if self.data.get("hook_event_name") in GEMINI_TOOL_EVENTS:
            # Imported here: the package brings the whole transcript reader, which a Claude
            # Code hook answered before Django (api/hooks/triage.py) has no use for.
            from core.transcripts import gemini

            return gemini.tool_name(name)
        return name

    @property
    def tool_input(self) -> dict[str, Any]:
        value = self.data.get("tool_input")
        return value if isinstance(value, dict) else {}

    @property
    def tool_response(self) -> Any:
        return self.data.get("tool_response")

    @property
    def prompt(self) -> str:
        """What the user typed, without the context a host put in front of it."""
        return _HOOK_CONTEXT.sub("", self.text("prompt")).strip()

    def text(self, key: str) -> str:
        value = self.data.get(key)
        return value if isinstance(value, str) else ""


def parse_payload(text: str, *, host: str = DEFAULT_HOOK_HOST) -> HookPayload:
    try:
        data = json_limits.loads(text)
    except ValueError as exc:  # JSONTooDeep is a ValueError too
        raise HookInputError(f"the hook input is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HookInputError("the hook input is not a JSON object")
    return HookPayload(data, host)
