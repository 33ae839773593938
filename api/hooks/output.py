"""What a hook prints, in the shapes Claude Code reads (its hooks reference, "Hook output"):

- context for the model: `{"hookSpecificOutput": {"hookEventName": <event>,
  "additionalContext": <text>}}` — SessionStart, UserPromptSubmit, PreToolUse and PostToolUse
  take it;
- a line for the user: `{"systemMessage": <text>}` — any event, the only one Stop and
  PreCompact have that blocks nothing;
- Stop's block: `{"decision": "block", "reason": <text>}` — the turn goes on, the reason
  told to the model (only for messages waiting without intake: api/hooks/inbox.py);
- nothing at all: the common answer, and the only one on failure.
Exit status is always 0 (2 would block the tool call or the prompt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Note:
    """Something a hook did not store, for MEMESH_HOME/hook-outcomes.jsonl."""

    outcome: str  # "dropped" (a secret), "skipped" (something else worth knowing)
    what: str  # which capture: "commit", "handoff", "note-file", ...
    detector: str | None = None  # the secret detector that fired
    reason: str | None = None


@dataclass
class HookReply:
    stdout: str = ""
    notes: list[Note] = field(default_factory=list)
    # A line for the terminal (the host logs it; Claude Code hides a 0-exit hook's stderr from
    # user and model, so whatever must be seen goes in stdout as well).
    stderr: str = ""


def context(event: str, text: str) -> str:
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
        ensure_ascii=False,
    )


def system_message(text: str) -> str:
    return json.dumps({"systemMessage": text}, ensure_ascii=False)


def stop_block(reason: str, *, message: str | None = None) -> str:
    """Stop's blocking answer: the turn does not end, and `reason` tells the model why (with
    a line for the user too, when there is one)."""
    answer: dict[str, str] = {"decision": "block", "reason": reason}
    if message:
        answer["systemMessage"] = message
    return json.dumps(answer, ensure_ascii=False)
