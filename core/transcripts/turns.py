"""What a session transcript says, whichever host wrote it: its turns (who spoke, what they
wrote, the tools they called and what came back, when) and the session they belong to. The
host formats (claude_code.py, codex.py) turn their records into these."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, object]


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True)
class Turn:
    role: str  # user | assistant
    text: str  # the message's text blocks joined by a blank line, "" when it has none
    timestamp: str  # as recorded (ISO 8601), "" when absent
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    # A host may write one message as several records sharing an id (Claude Code does). The id
    # says where a turn came from, not what it says, so it takes no part in equality.
    message_id: str = field(default="", compare=False)

    @property
    def is_prompt(self) -> bool:
        """Whether the user wrote this (a prompt or a slash command), rather than it carrying
        the results of the agent's tool calls back."""
        return self.role == "user" and not self.tool_results and bool(self.text.strip())


@dataclass(frozen=True)
class Record:
    """What one record of a transcript says: a turn, or None (a record of another kind, or one
    the host format skips), and the session's id and working directory when it names them."""

    turn: Turn | None
    session_id: str = ""
    cwd: str = ""
    # The record restates, whole, the message its turn's id names when the record before it
    # holds that message too: it replaces that one (Gemini CLI writes a message again as it
    # grows; Claude Code spreads one over several records instead, each adding to it).
    restates: bool = False


@dataclass(frozen=True)
class Session:
    session_id: str
    path: Path
    turns: tuple[Turn, ...]
    cwd: str  # the first recorded working directory, "" when none is recorded
    skipped_lines: int  # lines that are not JSON objects
    truncated: bool = False  # only the file's tail was read
    host: str = ""  # which host wrote it (claude-code | codex | gemini), "" when no record says

    @property
    def started_at(self) -> str:
        return next((t.timestamp for t in self.turns if t.timestamp), "")

    @property
    def ended_at(self) -> str:
        return next((t.timestamp for t in reversed(self.turns) if t.timestamp), "")
