"""The one reader of agent session transcripts (JSONL files the agent hosts write): the Stop and
PreCompact hooks read the session that is running (api/hooks/transcript.py), transcript mining
and work packages read a project's sessions (dream/). Both read through here, so a line, a
record and a turn mean the same to each.

- turns.py: what a transcript says (Turn, ToolUse, ToolResult, Session), whichever host wrote it;
- claude_code.py, codex.py, gemini.py: each host's record format, its skip rules and where it
  keeps its files;
- reading.py: one file read (size bound, bad lines, the format each record's shape names);
- conversation.py: what was said, cleaned, and cut into pieces an LLM reads;
- projects.py: which of Claude Code's, Codex's and Gemini CLI's sessions are a project's.
"""

from __future__ import annotations

from core.transcripts.claude_code import claude_config_dir, claude_projects_dir, slug
from core.transcripts.codex import codex_sessions_dir
from core.transcripts.conversation import (
    MAX_TURN_CHARS,
    as_recorded,
    chunks,
    clean_text,
    conversation_turn,
    render_turn,
)
from core.transcripts.gemini import gemini_tmp_dir
from core.transcripts.projects import (
    all_project_sessions,
    codex_project_sessions,
    gemini_project_sessions,
    gemini_session_files,
    project_sessions,
)
from core.transcripts.reading import parse_record, read_session, record_turn
from core.transcripts.turns import Record, Session, ToolResult, ToolUse, Turn

__all__ = [
    "MAX_TURN_CHARS",
    "Record",
    "Session",
    "ToolResult",
    "ToolUse",
    "Turn",
    "all_project_sessions",
    "as_recorded",
    "chunks",
    "claude_config_dir",
    "claude_projects_dir",
    "clean_text",
    "codex_project_sessions",
    "codex_sessions_dir",
    "conversation_turn",
    "gemini_project_sessions",
    "gemini_session_files",
    "gemini_tmp_dir",
    "parse_record",
    "project_sessions",
    "read_session",
    "record_turn",
    "render_turn",
    "slug",
]
