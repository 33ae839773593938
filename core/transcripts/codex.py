"""Codex's session transcripts (rollout files): where Codex keeps them, and its record format.

Where: `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<session-uuid>.jsonl` (settings reads
CODEX_HOME, `~/.codex` when unset), one file per session, in the folder of the day it began.
The Stop hook is handed the file as `transcript_path`, with the session's `session_id`.

The records, one JSON object per line: `{"timestamp", "type", "payload"}` (Codex 0.169 adds
`ordinal`), the type one of
- `session_meta`: the session's `id` and `cwd` (the first line);
- `turn_context`: the settings a turn ran with, among them its `cwd`;
- `response_item`: what the model was sent or returned, by `payload.type` — `message`
  (`role`, `content`: `input_text` / `output_text` blocks), `function_call` (`call_id`,
  `name`, `arguments`: a JSON string), `function_call_output` (`call_id`, `output`: text,
  or an MCP tool's list of content items, `{"type": "input_text", "text"}`),
  `custom_tool_call` (`call_id`, `name`, `input`: free text) and its `custom_tool_call_output`,
  `tool_search_call` (`call_id`, `arguments`: an object) and its `tool_search_output`
  (`tools`: the namespaces found, each with its `tools`), `reasoning`;
- `event_msg`, `compacted`, `world_state`, `token_usage_record`: the UI's events, a
  compaction's summary, the context Codex tracks, token counts (any other type reads as these
  do: no turn).

Read as turns: the `message` items of the user and the assistant, and the tool calls and their
outputs (a call is the assistant's turn, its output the user's, as in Claude Code's records).
Tool calls are named as Codex's own hooks name them (PreToolUse/PostToolUse's `tool_name`):
an MCP tool `mcp__<server>__<tool>` (a call inside a tool-search namespace has the namespace
prefixed), its shell tools (`exec_command` with `cmd`, `shell_command` and `shell` with
`command`) as `Bash` with a `command` string, and `apply_patch` with the patch as `patch`, so
a hook reads a Codex call as it reads Claude Code's. A tool search is a call of `tool_search`
(Claude Code's is its ToolSearch tool), its result the names of the tools it found. An
output's text is what the command printed, and it failed when it exited non-zero:
`exec_command` writes `Process exited with code N`, `shell_command` and `apply_patch` write
`Exit code: N`, each before an `Output:` line; older versions wrote `{"output", "metadata":
{"exit_code"}}`.
Skipped: `event_msg` (it repeats the messages the response items hold), `compacted` (it
retells turns the file already holds), reasoning, the developer's messages (where Codex puts a
hook's `additionalContext`: memesh's memory block) and the system's, and the context Codex
sends as a user message's blocks (INJECTED_PREFIXES: AGENTS.md, the working folder, an
interrupted turn's marker, a shell command the user ran).
"""

from __future__ import annotations

import re
from pathlib import Path

from core import json_limits
from core.transcripts.turns import Record, ToolResult, ToolUse, Turn

HOST = "codex"
ROLES = ("user", "assistant")
INJECTED_PREFIXES = (
    "# AGENTS.md instructions for ",
    "<environment_context>",
    "<user_instructions>",
    "<turn_aborted>",
    "<user_shell_command>",
    "<subagent_notification>",
)
SHELL_TOOLS = frozenset({"exec_command", "shell_command", "shell", "local_shell"})
SHELL_NAME = "Bash"  # what Codex's hooks call its shell tools, as Claude Code does
SEARCH_NAME = "tool_search"  # Codex's own search of the tools it defers (MCP tools among them)
# The content items of a tool output that hold text (an image's, `input_image`, holds none).
CONTENT_TEXT_TYPES = frozenset({"input_text", "output_text", "text"})

# `Process exited with code 1` (exec_command), `Exit code: 0` (shell_command, apply_patch).
_EXIT_CODE = re.compile(r"^(?:Process exited with code|Exit code:) (-?\d+)$", re.MULTILINE)
_OUTPUT = re.compile(r"^Output:\n", re.MULTILINE)
# The content item Codex 0.169 writes before an MCP tool's own: how long the call took.
_TIMING_ITEM = re.compile(r"\AWall time: [0-9.]+ seconds\nOutput:\s*\Z")


def codex_sessions_dir() -> Path:
    """Where Codex keeps its rollout files, as settings resolved CODEX_HOME."""
    from django.conf import settings

    return Path(settings.CODEX_HOME) / "sessions"


def is_record(record: dict[str, object]) -> bool:
    """Codex wraps every record's content in a `payload` object; Claude Code's have none."""
    return isinstance(record.get("type"), str) and isinstance(record.get("payload"), dict)


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
        text = _text_blocks(item.get("content"), skip_injected=role == "user")
        if role not in ROLES or not text:
            return None
        return Turn(str(role), text, timestamp, message_id=message_id)
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        use = _tool_use(item)
        return Turn("assistant", "", timestamp, tool_uses=(use,), message_id=message_id)
    if kind in ("function_call_output", "custom_tool_call_output"):
        text, is_error = _output(item.get("output"))
        result = ToolResult(_string(item.get("call_id")), text, is_error)
        return Turn("user", "", timestamp, tool_results=(result,), message_id=message_id)
    if kind == "tool_search_call":
        arguments = item.get("arguments")
        use = ToolUse(
            _string(item.get("call_id")),
            SEARCH_NAME,
            dict(arguments) if isinstance(arguments, dict) else {},
        )
        return Turn("assistant", "", timestamp, tool_uses=(use,), message_id=message_id)
    if kind == "tool_search_output":
        found = "\n".join(_found_tools(item.get("tools")))
        result = ToolResult(_string(item.get("call_id")), found, False)
        return Turn("user", "", timestamp, tool_results=(result,), message_id=message_id)
    return None


def _found_tools(tools: object) -> list[str]:
    """The names a tool search returned, as the hooks name them (`mcp__memesh__remember`)."""
    names: list[str] = []
    for namespace in tools if isinstance(tools, list) else []:
        if not isinstance(namespace, dict):
            continue
        inner = namespace.get("tools")
        prefix = _string(namespace.get("name"))
        for tool in inner if isinstance(inner, list) else [namespace]:
            name = _string(tool.get("name")) if isinstance(tool, dict) else ""
            if name and tool is not namespace:
                name = f"{prefix}{name}" if prefix.endswith("_") else f"{prefix}__{name}"
            if name:
                names.append(name)
    return names


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


def _text_blocks(content: object, *, skip_injected: bool) -> str:
    if not isinstance(content, list):
        return ""
    return "\n\n".join(
        text
        for block in content
        if isinstance(block, dict)
        and block.get("type") in ("input_text", "output_text")
        and isinstance(text := block.get("text"), str)
        and not (skip_injected and text.lstrip().startswith(INJECTED_PREFIXES))
    )


def _content_items(items: list[object]) -> str:
    """The text of an output's content items (`input_text`, or `text` as an MCP server wrote
    it), one a paragraph; an image or any other item has none, nor the item Codex puts first
    (`Wall time: 0.59 seconds\nOutput:`)."""
    return "\n\n".join(
        text
        for item in items
        if isinstance(item, dict)
        and item.get("type") in CONTENT_TEXT_TYPES
        and isinstance(text := item.get("text"), str)
        and not _TIMING_ITEM.match(text)
    )


def _tool_use(item: dict[str, object]) -> ToolUse:
    """A call under the name Codex's hooks give it (the module docstring says which)."""
    call_id, name = _string(item.get("call_id")), _string(item.get("name"))
    namespace = _string(item.get("namespace"))
    if namespace and not name.startswith(namespace):
        # A tool found by tool search is called inside its namespace (`mcp__memesh__`): the
        # hooks know it by the whole name, `mcp__memesh__remember`.
        name = f"{namespace}{name}" if namespace.endswith("_") else f"{namespace}__{name}"
    arguments = _arguments(item)
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        arguments = action if isinstance(action, dict) else {}
        name = "local_shell"
    if name in SHELL_TOOLS:
        command = arguments.get("cmd", arguments.get("command"))
        if isinstance(command, list):
            command = _unwrapped(command)
        return ToolUse(
            call_id, SHELL_NAME, {"command": command if isinstance(command, str) else ""}
        )
    if name == "apply_patch":
        patch = arguments.get("input", arguments.get("patch"))
        return ToolUse(call_id, name, {"patch": patch if isinstance(patch, str) else ""})
    return ToolUse(call_id, name, arguments)


def _unwrapped(argv: list[object]) -> str:
    """The command line of an argument vector: the script of `bash -lc <script>`, else the
    words joined."""
    words = [str(word) for word in argv]
    if len(words) == 3 and words[1] in ("-c", "-lc"):
        return words[2]
    return " ".join(words)


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
    """A tool output's text and whether it failed (the module docstring gives the shapes);
    other tools' output is plain text, an object with `content` and `success`, or (an MCP
    tool's) a list of content items."""
    if isinstance(output, list):
        return _content_items(output), False
    if isinstance(output, dict):
        content = output.get("content")
        text = _content_items(content) if isinstance(content, list) else _string(content)
        return text, output.get("success") is False
    text = _string(output)
    if text.startswith("{"):
        try:
            parsed = json_limits.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            metadata = parsed.get("metadata")
            exit_code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return parsed["output"], isinstance(exit_code, int) and exit_code != 0
    exit_code = _EXIT_CODE.search(text)
    body = _OUTPUT.search(text)
    if exit_code is not None and body is not None and exit_code.start() < body.start():
        return text[body.end() :], int(exit_code.group(1)) != 0
    return text, False
