"""PreToolUse: context before a tool runs, never a block (permission decisions are the
user's). Dispatched on `tool_name`:

- Edit / Write / MultiEdit / NotebookEdit: what memesh remembers about the file
  (graph/capture/file_context.py: memories tagged `file:<basename>` and close keyword hits for its
  path, at most five lines, fenced), once per file per session;
- Bash: accepted lesson-guards (graph/capture/lesson_guards.py), a fenced warning citing each
  lesson as [mem:id] when the command matches a recorded mistake, every time it does.
Other tools: nothing. Reads only.
"""

from __future__ import annotations

import os

from api.hooks import session_state
from api.hooks.output import HookReply, context
from api.hooks.payload import HookPayload
from api.hooks.tools import EDIT_TOOLS
from graph.capture.file_context import file_context
from graph.capture.lesson_guards import command_guards

EVENT = "PreToolUse"


def _relative(path: str, cwd: str) -> str | None:
    if not os.path.isabs(path):
        return path
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:
        return None
    return None if relative.startswith("..") else relative


def edit_context(payload: HookPayload) -> HookReply:
    tool_input = payload.tool_input
    path = next(
        (v for k in ("file_path", "notebook_path") if isinstance(v := tool_input.get(k), str)),
        "",
    )
    if not path.strip():
        return HookReply()
    session = payload.session_id
    if session is not None and not session_state.first_time(session, f"file:{path}"):
        return HookReply()  # shown for this file already in this session
    found = file_context(project=payload.project, path=path, relative=_relative(path, payload.cwd))
    return HookReply(stdout=context(EVENT, found.text) if found.text else "")


def bash_guards(payload: HookPayload) -> HookReply:
    command = payload.tool_input.get("command")
    if not isinstance(command, str) or not command.strip():
        return HookReply()
    text, _ = command_guards(project=payload.project, command=command)
    return HookReply(stdout=context(EVENT, text) if text else "")


def handle(payload: HookPayload) -> HookReply:
    if payload.tool_name in EDIT_TOOLS:
        return edit_context(payload)
    if payload.tool_name == "Bash":
        return bash_guards(payload)
    return HookReply()
