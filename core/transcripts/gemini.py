"""Gemini CLI's session transcripts: its record format, and the names of its tools.

Where: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`, one file per session; each
hook is handed it as `transcript_path`, with the session's `session_id`. `<project>` is a name
Gemini CLI gives the folder it was started in (its base name, slugged, then `-1` and on when
taken), and its `.project_root` file holds that folder's path (PROJECT_ROOT_FILE).

The records, one JSON object per line (Gemini CLI 0.61):
- the first: the session's `sessionId`, `projectHash`, `startTime`, `kind`;
- `{"$set": {...}}`: an update of the session's metadata (its `lastUpdated`, and at the start
  the `messages` Gemini CLI puts before the first prompt: the `<session_context>` it builds
  from the working folder) — no turn;
- a message: `{"id", "timestamp", "type", "content"}`, the type `user` (content: parts, as the
  Gemini API's — `text`, or `functionResponse` with `id`, `name` and `response.output`: a tool's
  result) or `gemini` (the model's; content: its text, `toolCalls`: `id`, `name`, `args`,
  `status`), other types (`info`, `error`, `warning`) being the UI's. Gemini CLI writes a
  message again, whole, as it grows (a reply, then the same reply with its tool calls): a
  record restates the one before it with its id (`Record.restates`).

A shell command that failed still reads `"status": "success"`: its output ends with
`Exit Code: N`, which says it failed. The context hooks add reaches the transcript wrapped in
`<hook_context>` (core/transcripts/conversation.py leaves it out of what was said).

Tool calls are named as Claude Code names them (TOOL_NAMES: `run_shell_command` as `Bash`,
`write_file` as `Write`, ...), in the transcript and in a hook's `tool_name` alike
(api/hooks/payload.py), so a hook reads a Gemini CLI call as it reads Claude Code's.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.transcripts.turns import Record, ToolResult, ToolUse, Turn

HOST = "gemini"
PROJECT_ROOT_FILE = ".project_root"
# Gemini CLI's tool -> Claude Code's, where they do the same thing with the same arguments
# (`command`; `file_path`). Gemini's MCP tools (`mcp_<server>_<tool>`) keep their names.
TOOL_NAMES = {
    "run_shell_command": "Bash",
    "write_file": "Write",
    "replace": "Edit",
    "exit_plan_mode": "ExitPlanMode",
    "ask_user": "AskUserQuestion",
}
MESSAGE_TYPES = ("user", "gemini")
ROLES = {"user": "user", "gemini": "assistant"}

_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)$", re.MULTILINE)
# A shell result: `Output: <what the command printed>`, then lines such as `Exit Code: 1` and
# `Process Group PGID: 42`; the printed part is the result's text.
_PRINTED = re.compile(
    r"^Output: (.*?)\n(?=(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): )",
    re.MULTILINE | re.DOTALL,
)


def gemini_tmp_dir() -> Path:
    """Where Gemini CLI keeps a folder per project, as settings resolved GEMINI_CLI_HOME."""
    from django.conf import settings

    return Path(settings.GEMINI_DIR) / "tmp"


def tool_name(name: str) -> str:
    """Claude Code's name for Gemini CLI's tool `name` (the name itself when none)."""
    return TOOL_NAMES.get(name, name)


def is_record(record: dict[str, object]) -> bool:
    """The session's first line, a `$set`, or a message with its `content` at the top (Claude
    Code's carry a `message`, Codex's a `payload`)."""
    if "projectHash" in record or "$set" in record:
        return True
    return (
        record.get("type") in ("user", "gemini", "info", "error", "warning")
        and isinstance(record.get("id"), str)
        and "content" in record
        and not ("message" in record or "payload" in record)
    )


def parse(record: dict[str, object]) -> Record:
    session = Record(None, _string(record.get("sessionId")))
    kind = record.get("type")
    if kind not in MESSAGE_TYPES:
        return session
    content = record.get("content")
    parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    text = content if isinstance(content, str) else _texts(parts)
    uses: tuple[ToolUse, ...] = ()
    results: tuple[ToolResult, ...] = ()
    if kind == "gemini":
        calls = record.get("toolCalls")
        uses = tuple(
            _tool_use(c) for c in (calls if isinstance(calls, list) else []) if isinstance(c, dict)
        )
    else:
        results = tuple(
            _tool_result(p["functionResponse"])
            for p in parts
            if isinstance(p.get("functionResponse"), dict)
        )
    turn = Turn(
        role=ROLES[str(kind)],
        text=text,
        timestamp=_string(record.get("timestamp")),
        tool_uses=uses,
        tool_results=results,
        message_id=_string(record.get("id")),
    )
    return Record(turn, restates=True)


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


def _texts(parts: list[dict[str, object]]) -> str:
    return "\n\n".join(text for p in parts if isinstance(text := p.get("text"), str))


def _tool_use(call: dict[str, object]) -> ToolUse:
    arguments = call.get("args")
    return ToolUse(
        id=_string(call.get("id")),
        name=tool_name(_string(call.get("name"))),
        input=arguments if isinstance(arguments, dict) else {},
    )


def _tool_result(response: dict[str, object]) -> ToolResult:
    body = response.get("response")
    body = body if isinstance(body, dict) else {}
    error = body.get("error")
    text = _string(body.get("output")) or _string(error)
    code = _EXIT_CODE.search(text)
    printed = _PRINTED.search(text)
    return ToolResult(
        tool_use_id=_string(response.get("id")),
        text=printed.group(1) if printed else text,
        is_error=error is not None or (code is not None and code.group(1) != "0"),
    )
