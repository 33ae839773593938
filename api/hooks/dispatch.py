"""Running one hook: parse the input, call the event's handler, and make sure nothing but
the handler's answer ever reaches the host.

Any failure — bad input, a locked database, a bug — is recorded in MEMESH_HOME/
hook-outcomes.jsonl (core/hook_outcomes.py: the event, the error's class and a
redacted message, never the payload) and answered with silence: empty stdout, exit 0, so the
agent is never blocked or shown a traceback. What a handler chose not to store (a secret, a
skipped capture worth knowing about) is recorded there too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from api.hooks.output import HookReply
from api.hooks.payload import HookPayload, parse_payload
from core import hook_outcomes
from core.hook_hosts import DEFAULT_HOOK_HOST
from core.redact import redact_message

# `memesh hook <event>`: the fixed interface the plugin's hooks file calls, and the module
# (under api/hooks/) whose `handle` answers it. Named, not imported: a hook process imports
# only its own event's module — post-tool-use's commit capture brings the write path and the
# vector side (numpy) with it, which a session-start has no use for (docs/performance-notes.md).
HANDLERS: dict[str, str] = {
    "session-start": "session_start",
    "pre-tool-use": "pre_tool_use",
    "post-tool-use": "post_tool_use",
    "stop": "stop",
    "pre-compact": "pre_compact",
    "user-prompt-submit": "user_prompt_submit",
}


def handler_for(event: str) -> Callable[[HookPayload], HookReply]:
    """The handler of `event` (one of HANDLERS), its module imported now."""
    module = importlib.import_module(f"api.hooks.{HANDLERS[event]}")
    return cast(Callable[[HookPayload], HookReply], module.handle)


class UnknownEvent(ValueError):
    pass


def run_hook(event: str, stdin: str, *, limit: int, host: str = DEFAULT_HOOK_HOST) -> str:
    """The text to print for `memesh hook <event>` given its standard input ("" on any
    failure, which is recorded instead); `host` ran it (core/hook_hosts.py)."""
    return run_hook_reply(event, stdin, limit=limit, host=host)[0]


def run_hook_reply(
    event: str, stdin: str, *, limit: int, host: str = DEFAULT_HOOK_HOST
) -> tuple[str, str]:
    """run_hook's stdout, and the line for stderr a handler may have ("" and "" on any
    failure)."""
    try:
        if event not in HANDLERS:
            raise UnknownEvent(f"no hook event {event!r} (one of {', '.join(HANDLERS)})")
        handler = handler_for(event)
        if len(stdin) > limit:
            raise ValueError(f"the hook input is longer than {limit} characters")
        payload = parse_payload(stdin, host=host)
        reply = handler(payload)
    except Exception as exc:
        hook_outcomes.record(event or "?", "failed", error=exc)
        return "", ""
    for note in reply.notes:
        hook_outcomes.record(
            event,
            note.outcome,
            what=note.what,
            detector=note.detector,
            reason=redact_message(note.reason) if note.reason else None,
            tool=payload.tool_name or None,
        )
    return reply.stdout, reply.stderr
