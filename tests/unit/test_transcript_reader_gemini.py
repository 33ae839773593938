"""Gemini CLI's session files read by the one transcript reader (core/transcripts/gemini.py),
and Gemini CLI's hook input read as memesh's hooks read Claude Code's (api/hooks/payload.py).

tests/fixtures/transcripts/gemini-session.jsonl is a session Gemini CLI 0.61.0 recorded with
memesh's hooks installed: a prompt with memesh's block in front (`<hook_context>`), a failing
shell command, a file written, `remember` called, a commit, and the last reply — each message
of the model's written twice, the second time with its tool calls."""

from __future__ import annotations

import json
from pathlib import Path

from api.hooks.payload import parse_payload
from api.hooks.post_tool_use import has_work
from api.hooks.transcript import committed, read_transcript, session_evidence
from core.transcripts import ToolResult, as_recorded, parse_record, read_session

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
SESSION_ID = "36b129ba-27b1-4834-9321-f69f21a1d9b4"
LAST_REPLY = (
    "The login test failed because the token audience was never set; auth.py now sets it "
    "(as [mem:CITED] said)."
)


def session_file(tmp_path: Path) -> Path:
    text = (FIXTURES / "gemini-session.jsonl").read_text()
    path = tmp_path / "session-2026-12-07T20-57-36b129ba.jsonl"
    path.write_text(text.replace("@PROJECT@", "/work/widget").replace("@HOME@", "/home/u"))
    return path


def test_a_gemini_session_is_read_by_its_own_format(tmp_path: Path) -> None:
    path = session_file(tmp_path)

    session = read_session(path, view=as_recorded)
    said = [(t.role, t.text) for t in read_session(path).turns]

    assert session.session_id == SESSION_ID and session.host == "gemini"
    # What was said: the user's words without memesh's block or Gemini CLI's session context,
    # and each reply once although Gemini CLI wrote it twice.
    assert said == [
        ("user", "Why does the login test fail?"),
        ("assistant", "Let me run the login test first."),
        ("assistant", LAST_REPLY),
    ]
    # Named as Claude Code names its tools, so the hooks read them as they read Claude Code's.
    uses = [(u.name, u.input) for t in session.turns for u in t.tool_uses]
    assert [name for name, _ in uses] == ["Bash", "Write", "mcp_memesh_remember", "Bash"]
    assert uses[0][1]["command"] == "ls tests/test_auth.py"
    assert uses[1][1]["file_path"] == "/work/widget/auth.py"
    failed, written, remembered, commit = [r for t in session.turns for r in t.tool_results]
    # A failed command still says "success" in Gemini CLI's record; its exit code says not.
    missing = "ls: cannot access 'tests/test_auth.py': No such file or directory"
    assert failed == ToolResult(failed.tool_use_id, missing, True)
    assert not written.is_error and not remembered.is_error
    assert commit.text.startswith("[master a9bd05e] Read the token audience from settings\n")
    assert not commit.is_error


def test_the_stop_hook_reads_a_gemini_session_s_evidence(tmp_path: Path) -> None:
    transcript = read_transcript(session_file(tmp_path))
    evidence = session_evidence(transcript, SESSION_ID)

    assert transcript.turn == 1
    assert transcript.reply_texts() == ["Let me run the login test first.", LAST_REPLY]
    assert (evidence.tool_calls, evidence.commands) == (4, 2)
    assert evidence.files_edited == ["auth.py"]
    assert [e.subject for e in evidence.errors] == ["`ls tests/test_auth.py`"]
    assert evidence.commits == ["a9bd05e Read the token audience from settings"]
    assert [committed(c) for c in transcript.calls].count(None) == 3


def test_a_gemini_record_claims_only_gemini_s_shapes() -> None:
    # A Claude Code record with top-level `content` is still Claude Code's.
    claude: dict[str, object] = {"type": "user", "id": "x", "content": "hi", "message": {}}
    assert parse_record(claude).restates is False
    reply: dict[str, object] = {"id": "g", "type": "gemini", "content": "Done.", "toolCalls": []}
    gemini = parse_record(reply)
    assert gemini.restates and gemini.turn is not None and gemini.turn.role == "assistant"
    assert parse_record({"$set": {"lastUpdated": "t"}}).turn is None
    assert parse_record({"id": "i", "type": "info", "content": "Update available"}).turn is None


def gemini_payload(event: str, **fields: object) -> str:
    base = {"session_id": SESSION_ID, "transcript_path": "/t.jsonl", "cwd": "/", "timestamp": "t"}
    return json.dumps({**base, "hook_event_name": event, **fields})


def test_gemini_s_tool_events_name_its_tools_as_claude_code_does() -> None:
    commit = {"command": "git commit -q -am 'Ship it'"}
    after = parse_payload(gemini_payload("AfterTool", tool_name="run_shell_command",
                                         tool_input=commit))  # fmt: skip
    assert after.tool_name == "Bash" and has_work(after)
    edit = parse_payload(gemini_payload("AfterTool", tool_name="replace"))
    assert edit.tool_name == "Edit"
    # Another host's tool of that name is left as it is.
    codex = parse_payload(json.dumps({"hook_event_name": "PostToolUse", "tool_name": "replace"}))
    assert codex.tool_name == "replace"


def test_the_prompt_is_what_the_user_typed_without_the_block_gemini_put_in_front() -> None:
    block = "MeMesh reference memory.\n- [note] Remember that staging is read-only [mem:4]"
    payload = parse_payload(
        gemini_payload("BeforeAgent", prompt=f"<hook_context>{block}</hook_context>\n\nHi there")
    )
    assert payload.prompt == "Hi there"
