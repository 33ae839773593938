"""Claude Code's session transcripts: where Claude Code keeps them, and its record format.

Where: `<CLAUDE_CONFIG_DIR>/projects/<slug>/<session-uuid>.jsonl`, one file per session
(settings reads CLAUDE_CONFIG_DIR once, `~/.claude` when unset, as Claude Code itself does). The
slug is the absolute path of the folder Claude Code was started in with every character other
than an ASCII letter or digit replaced by `-` (`/work/my_app.v2` -> `-work-my-app-v2`); a slug
longer than SLUG_LIMIT characters is cut and given a hash suffix. The project's memory notes
are beside its sessions, in `<slug>/memory/*.md`.

The records, one JSON object per line: `{"type": "user" | "assistant", "sessionId", "cwd",
"timestamp", "uuid", "message": {"id", "content"}}`, the content a string or a list of blocks —
`text`, `tool_use` (`id`, `name`, `input`), `tool_result` (`tool_use_id`, `content`,
`is_error`), `thinking`, images. One assistant message may be spread over several records
sharing its `message.id`. Records of other types (`summary`, `system`, attachments, file
snapshots) are no turns. The format is Claude Code's own and undocumented (Anthropic calls it
internal), so it is read defensively: a field of an unexpected type reads as absent.

Skipped, for every reader: a subagent's record (`isSidechain`), a meta record (`isMeta`:
command caveats, hook echoes), the compaction summary (`isCompactSummary`: it retells turns the
file already holds), an API error (`isApiErrorMessage`), a message that is not an object, and
the marker Claude Code writes when the user interrupts (`[Request interrupted by user…]`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from core.transcripts.turns import Record, ToolResult, ToolUse, Turn

HOST = "claude-code"
SLUG_LIMIT = 200  # Claude Code cuts longer slugs and adds a hash suffix
ROLES = ("user", "assistant")
SKIP_FLAGS = ("isSidechain", "isMeta", "isCompactSummary", "isApiErrorMessage")

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]]*\]$")


def claude_config_dir() -> Path:
    """Claude Code's folder, as settings resolved it (CLAUDE_CONFIG_DIR, else ~/.claude)."""
    from django.conf import settings

    return Path(settings.CLAUDE_CONFIG_DIR)


def claude_projects_dir() -> Path:
    """Where Claude Code keeps its session transcripts, one folder per slug."""
    return claude_config_dir() / "projects"


def slug(directory: Path | str) -> str:
    """Claude Code's folder name for sessions started in `directory` (before any hash suffix)."""
    return _NOT_ALNUM.sub("-", str(directory))


def is_record(record: dict[str, object]) -> bool:
    """Claude Code's records carry their message at the top; another host's wrap it in a
    `payload` (Codex's rollout files)."""
    return "payload" not in record


def parse(record: dict[str, object]) -> Record:
    session = Record(None, _string(record.get("sessionId")), _string(record.get("cwd")))
    role = record.get("type")
    message = record.get("message")
    if role not in ROLES or not isinstance(message, dict):
        return session
    if any(record.get(flag) for flag in SKIP_FLAGS):
        return session
    content = message.get("content")
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    uses = tuple(_tool_use(b) for b in blocks if b.get("type") == "tool_use")
    results = tuple(_tool_result(b) for b in blocks if b.get("type") == "tool_result")
    text = content if isinstance(content, str) else _text_blocks(blocks)
    if not uses and not results and _INTERRUPTED.match(text.strip()):
        return session
    turn = Turn(
        role=str(role),
        text=text,
        timestamp=_string(record.get("timestamp")),
        tool_uses=uses,
        tool_results=results,
        message_id=_string(message.get("id")) or _string(record.get("uuid")),
    )
    return replace(session, turn=turn)


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


def _tool_use(block: dict[str, object]) -> ToolUse:
    arguments = block.get("input")
    return ToolUse(
        id=str(block.get("id")),
        name=str(block.get("name") or ""),
        input=arguments if isinstance(arguments, dict) else {},
    )


def _tool_result(block: dict[str, object]) -> ToolResult:
    return ToolResult(
        tool_use_id=str(block.get("tool_use_id")),
        text=_result_text(block.get("content")),
        is_error=block.get("is_error") is True,
    )


def _text_blocks(blocks: list[dict[str, object]]) -> str:
    return "\n\n".join(
        text
        for block in blocks
        if block.get("type") == "text" and isinstance(text := block.get("text"), str)
    )


def _result_text(content: object) -> str:
    """A tool result's content: a string, or text blocks (joined by a line break)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""
