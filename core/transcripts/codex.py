"""Codex's session transcripts (rollout files): where Codex keeps them, and its record format.

Where: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<session-uuid>.jsonl` (settings reads
CODEX_HOME, `~/.codex` when unset), one file per session, in the folder of the day it began.

The records, one JSON object per line: `{"timestamp", "type", "payload"}`, the type one of
- `session_meta`: the session's `id` and `cwd` (the first line);
- `turn_context`: the settings a turn ran with, among them its `cwd`;
- `response_item`: what the model was sent or returned, by `payload.type` — `message`
  (`role`, `content`: `input_text` / `output_text` blocks), `function_call` (`call_id`,
  `name`, `arguments`: a JSON string), `function_call_output` (`call_id`, `output`),
  `custom_tool_call` (`call_id`, `name`, `input`: free text) and its `custom_tool_call_output`,
  `reasoning`;
- `event_msg` and `compacted`: the UI's events and a compaction's summary.

Read as turns: the `message` items of the user and the assistant, and the tool calls and their
outputs (a call is the assistant's turn, its output the user's, as in Claude Code's records).
Skipped: `event_msg` (it repeats the messages the response items hold), `compacted` (it
retells turns the file already holds), reasoning, the developer's and the system's messages,
and the context Codex sends as user messages before the first prompt (`<environment_context>`,
`<user_instructions>`: the working folder, AGENTS.md).
"""

from __future__ import annotations

from pathlib import Path

from core import json_limits
from core.transcripts.turns import Record, ToolResult, ToolUse, Turn

RECORD_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
ROLES = ("user", "assistant")
INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>")


def codex_sessions_dir() -> Path:
    """Where Codex keeps its rollout files, as settings resolved CODEX_HOME."""
    from django.conf import settings

    return Path(settings.CODEX_HOME) / "sessions"


def is_record(record: dict[str, object]) -> bool:
    return record.get("type") in RECORD_TYPES and isinstance(record.get("payload"), dict)


def parse(record: dict[str, object]) -> Record:
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return Record(None)
    kind = record.get("type")
    if kind == "session_meta":
        return Record(None, _string(payload.get("id")), _string(payload.get("cwd")))
    if kind == "turn_context":
        return Record(None, cwd=_string(payload.get("cwd")))
    if kind != "response_item":
        return Record(None)
    turn = _item_turn(payload, _string(record.get("timestamp")))
    return Record(turn)


def _item_turn(item: dict[str, object], timestamp: str) -> Turn | None:
    kind = item.get("type")
    message_id = _string(item.get("id"))
    if kind == "message":
        role = item.get("role")
        text = _text_blocks(item.get("content"))
        if role not in ROLES or text.lstrip().startswith(INJECTED_PREFIXES):
            return None
        return Turn(str(role), text, timestamp, message_id=message_id)
    if kind in ("function_call", "custom_tool_call"):
        use = ToolUse(_string(item.get("call_id")), _string(item.get("name")), _arguments(item))
        return Turn("assistant", "", timestamp, tool_uses=(use,), message_id=message_id)
    if kind in ("function_call_output", "custom_tool_call_output"):
        text, is_error = _output(item.get("output"))
        result = ToolResult(_string(item.get("call_id")), text, is_error)
        return Turn("user", "", timestamp, tool_results=(result,), message_id=message_id)
    return None


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


def _text_blocks(content: object) -> str:
    if not isinstance(content, list):
        return ""
    return "\n\n".join(
        text
        for block in content
        if isinstance(block, dict)
        and block.get("type") in ("input_text", "output_text")
        and isinstance(text := block.get("text"), str)
    )


def _arguments(item: dict[str, object]) -> dict[str, object]:
    """A function call's arguments (a JSON object written as a string), or a custom tool's
    free-text input as `{"input": …}`."""
    raw = item.get("arguments")
    if isinstance(raw, str):
        try:
            parsed = json_limits.loads(raw)
        except ValueError:
            parsed = None
        return parsed if isinstance(parsed, dict) else {"arguments": raw}
    text = item.get("input")
    return {"input": text} if isinstance(text, str) else {}


def _output(output: object) -> tuple[str, bool]:
    """A tool output's text and whether it failed. A shell call's output is a JSON string
    `{"output", "metadata": {"exit_code"}}`; other tools' are plain text, or an object with
    `content` and `success`."""
    if isinstance(output, dict):
        return _string(output.get("content")), output.get("success") is False
    text = _string(output)
    try:
        parsed = json_limits.loads(text) if text.startswith("{") else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
        metadata = parsed.get("metadata")
        exit_code = metadata.get("exit_code") if isinstance(metadata, dict) else None
        return parsed["output"], isinstance(exit_code, int) and exit_code != 0
    return text, False
