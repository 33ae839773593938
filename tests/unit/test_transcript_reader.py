"""The one transcript reader (core/transcripts): how a session file is read (bad lines, a last
line still being written, the tail of a file past the bound), the skip rules every reader
shares — the hooks' view of a session and the conversation transcript mining reads — and the
host format each record's shape picks (Claude Code's, Codex's rollout files)."""

from __future__ import annotations

import json
from pathlib import Path

from api.hooks.transcript import MAX_BYTES, read_transcript
from core.transcripts import (
    ToolResult,
    ToolUse,
    Turn,
    as_recorded,
    conversation_turn,
    parse_record,
    read_session,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def user(content: object, **fields: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": content}, **fields}


def assistant(content: object, message_id: str = "m1", **fields: object) -> dict[str, object]:
    message = {"id": message_id, "role": "assistant", "content": content}
    return {"type": "assistant", "message": message, **fields}


def write(path: Path, *records: object, tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


# Records every reader skips, each beside a prompt and a reply that are read.
SKIPPED = [
    user("a subagent's prompt", isSidechain=True),
    assistant([{"type": "text", "text": "a subagent's reply"}], "side", isSidechain=True),
    user("<command-name>/clear</command-name>", isMeta=True),
    user("This session is being continued from a previous conversation.", isCompactSummary=True),
    assistant(
        [{"type": "text", "text": "API Error: 529 overloaded"}], "err", isApiErrorMessage=True
    ),
    user("[Request interrupted by user]"),
    user([{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
    {"type": "user", "message": "not an object"},
    {"type": "summary", "summary": "a retelling", "leafUuid": "x"},
]


def test_the_skip_rules_are_the_same_for_the_hooks_and_for_the_conversation(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "s.jsonl",
        user("Fix the login test."),
        *SKIPPED,
        assistant([{"type": "text", "text": "Fixed."}], "m2"),
    )

    recorded = read_session(path, view=as_recorded).turns
    said = read_session(path).turns
    transcript = read_transcript(path)

    assert [t.text for t in recorded] == ["Fix the login test.", "Fixed."]
    assert [t.text for t in said] == ["Fix the login test.", "Fixed."]
    # The compaction summary and the interruption start no turn; the API error is no reply.
    assert transcript.turn == 1
    assert transcript.reply_texts() == ["Fixed."]


def test_a_turn_carries_its_tool_calls_and_results_and_the_conversation_only_its_text(
    tmp_path: Path,
) -> None:
    use = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "1 failed", "is_error": True}
    path = write(
        tmp_path / "s.jsonl",
        assistant([{"type": "text", "text": "Running the tests."}, use], timestamp="t1"),
        user([result], timestamp="t2"),
    )

    recorded = read_session(path, view=as_recorded).turns
    said = read_session(path).turns

    assert recorded == (
        Turn(
            "assistant", "Running the tests.", "t1", (ToolUse("t1", "Bash", {"command": "pytest"}),)
        ),
        Turn("user", "", "t2", tool_results=(ToolResult("t1", "1 failed", True),)),
    )
    assert recorded[0].message_id == "m1" and not recorded[1].is_prompt
    assert said == (Turn("assistant", "Running the tests.", "t1"),)


def test_a_last_line_still_being_written_and_lines_that_are_no_record_are_skipped_and_counted(
    tmp_path: Path,
) -> None:
    too_deep = "[" * 200 + "]" * 200  # past core/json_limits' bound: skipped, never a crash
    path = write(
        tmp_path / "s.jsonl",
        user("first", sessionId="abc", cwd="/work/app"),
        tail=f"not json\n\n[1, 2]\n{too_deep}\n" + '{"type": "assistant", "message": {"con',
    )

    session = read_session(path, view=as_recorded)

    assert [t.text for t in session.turns] == ["first"]
    assert session.skipped_lines == 4  # the blank line is not counted
    assert (session.session_id, session.cwd, session.truncated) == ("abc", "/work/app", False)


def test_a_line_is_split_at_newlines_only(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    record = user("before\u2028after\u0085end")
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")

    (turn,) = read_session(path, view=as_recorded).turns

    assert turn.text == "before\u2028after\u0085end"


def test_a_bounded_read_takes_the_whole_lines_of_the_files_tail(tmp_path: Path) -> None:
    lines = [json.dumps(user(f"prompt {n}")) + "\n" for n in range(4)]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(lines))
    size = path.stat().st_size

    cut_inside = read_session(path, tail_bytes=size - len(lines[0]) - 5)
    cut_at_a_line = read_session(path, tail_bytes=size - len(lines[0]))
    whole = read_session(path, tail_bytes=size)

    assert [t.text for t in cut_inside.turns] == ["prompt 2", "prompt 3"]
    assert cut_inside.truncated and cut_inside.skipped_lines == 0
    assert [t.text for t in cut_at_a_line.turns] == ["prompt 1", "prompt 2", "prompt 3"]
    assert len(whole.turns) == 4 and not whole.truncated


def test_the_hooks_read_only_the_last_max_bytes_of_an_oversized_transcript(
    tmp_path: Path,
) -> None:
    padding = json.dumps(assistant([{"type": "text", "text": "x" * 1000}], "old")) + "\n"
    path = tmp_path / "s.jsonl"
    with path.open("w") as handle:
        handle.write(json.dumps(user("an early prompt")) + "\n")
        handle.write(padding * (MAX_BYTES // len(padding) + 1))
        handle.write(json.dumps(user("the last prompt")) + "\n")
        handle.write(json.dumps(assistant([{"type": "text", "text": "Done."}], "new")) + "\n")

    transcript = read_transcript(path)

    assert transcript.truncated
    assert transcript.turn == 1  # the early prompt lies before the tail
    assert transcript.reply_texts()[-1] == "Done."


def test_a_codex_rollout_is_read_by_its_own_format(tmp_path: Path) -> None:
    text = (FIXTURES / "codex-rollout.jsonl").read_text().replace("@PROJECT@", "/work/widget")
    path = tmp_path / "rollout-2026-12-07T19-27-51-01a251fa-0c58-7293-b4cb-fcda7bc9ea46.jsonl"
    path.write_text(text)

    session = read_session(path, view=as_recorded)
    said = [(t.role, t.text) for t in read_session(path).turns]

    assert session.session_id == "01a251fa-0c58-7293-b4cb-fcda7bc9ea46"
    assert session.cwd == "/work/widget"
    assert said == [
        ("user", "Why does the login test fail?"),
        (
            "assistant",
            "The login test failed because the token audience was never set; src/auth.py now "
            "reads it from settings (as [mem:CITED] said).",
        ),
    ]
    # Named and shaped as Codex's own hooks name its tools.
    uses = [(u.name, u.input) for t in session.turns for u in t.tool_uses]
    assert uses[0] == ("Bash", {"command": "pytest -q tests/test_auth.py"})
    assert uses[1][0] == "apply_patch" and "AUTH_AUDIENCE" in str(uses[1][1]["patch"])
    assert uses[3] == (
        "Bash",
        {"command": "git commit -am 'Read the token audience from settings'"},
    )
    failed, patched, passed, committed = [r for t in session.turns for r in t.tool_results]
    assert failed == ToolResult(
        "call_0",
        "FAILED tests/test_auth.py::test_login - AssertionError: 401 != 200\n1 failed in 0.41s\n",
        True,
    )
    assert (patched.is_error, patched.text.splitlines()[0]) == (
        False,
        "Success. Updated the following files:",
    )
    assert (passed.is_error, passed.text) == (False, "1 passed in 0.38s\n")
    assert committed.text.startswith("[main ") and not committed.is_error
    everything = "\n".join(t.text for t in session.turns)
    for absent in ("INJECTED-AGENTS-MD", "environment_context", "PRIVATE-REASONING"):
        assert absent not in everything
    for absent in ("COMPACTED", "PROMPT-CONTEXT", "MeMesh reference memory", "Skills"):
        assert absent not in everything
    assert session.started_at == "2026-12-07T19:27:51.529Z"


def test_codex_outputs_of_older_versions_and_of_each_shell_tool_are_read() -> None:
    def result(output: object) -> ToolResult:
        record = {
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c", "output": output},
        }
        turn = parse_record(record).turn
        assert turn is not None
        return turn.tool_results[0]

    def use(payload: dict[str, object]) -> ToolUse:
        turn = parse_record({"type": "response_item", "payload": payload}).turn
        assert turn is not None
        return turn.tool_uses[0]

    old = json.dumps({"output": "boom\n", "metadata": {"exit_code": 2}})
    assert result(old) == ToolResult("c", "boom\n", True)
    shell = "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"
    assert result(shell) == ToolResult("c", "ok\n", False)
    assert result("plain text, no exit code") == ToolResult("c", "plain text, no exit code", False)
    argv = json.dumps({"command": ["bash", "-lc", "make test"]})
    assert use({"type": "function_call", "name": "shell", "arguments": argv, "call_id": "x"}) == (
        ToolUse("x", "Bash", {"command": "make test"})
    )
    line = json.dumps({"command": "git status"})
    shell_command = {"type": "function_call", "name": "shell_command", "arguments": line}
    assert use(shell_command).input == {"command": "git status"}
    found = {"type": "function_call", "namespace": "mcp__memesh__", "name": "remember"}
    assert use(found).name == "mcp__memesh__remember"


def test_each_record_goes_to_the_format_its_shape_names() -> None:
    claude = parse_record(user("hello", sessionId="s", cwd="/w", timestamp="t"))
    codex = parse_record(
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "c", "cwd": "/x"}}
    )
    unknown = parse_record({"type": "response_item", "payload": "not an object"})

    assert (claude.turn, claude.session_id, claude.cwd) == (Turn("user", "hello", "t"), "s", "/w")
    assert (codex.turn, codex.session_id, codex.cwd) == (None, "c", "/x")
    assert unknown.turn is None
    assert conversation_turn(Turn("user", "<system-reminder>x</system-reminder>", "")) is None


def test_a_codex_tool_search_is_a_tool_call_whose_result_names_the_tools_found() -> None:
    # As Codex 0.169.0 writes them when the model searches for memesh's MCP tools.
    call = {"type": "tool_search_call", "call_id": "search_1", "execution": "client",
            "arguments": {"query": "memesh remember", "limit": 8}}  # fmt: skip
    found = {"type": "tool_search_output", "call_id": "search_1", "execution": "client",
             "tools": [{"type": "namespace", "name": "mcp__memesh", "tools": [
                 {"type": "function", "name": "remember"},
                 {"type": "function", "name": "recall"}]}]}  # fmt: skip

    searched = parse_record({"type": "response_item", "payload": call}).turn
    answered = parse_record({"type": "response_item", "payload": found}).turn

    assert searched is not None and answered is not None
    assert searched.tool_uses == (
        ToolUse("search_1", "tool_search", {"query": "memesh remember", "limit": 8}),
    )
    assert answered.tool_results == (
        ToolResult("search_1", "mcp__memesh__remember\nmcp__memesh__recall", False),
    )


def test_a_codex_mcp_tool_output_is_the_text_of_its_content_items() -> None:
    # As Codex 0.169.0 writes an MCP tool's result: a list of content items, its own timing
    # first, then the server's (an image, or another item type, holds no text).
    stored = '{"stored": true, "entityId": 2, "name": "deploy-rule", "created": true}'
    output = [
        {"type": "input_text", "text": "Wall time: 0.5926 seconds\nOutput:"},
        {"type": "input_text", "text": stored},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
        {"type": "text", "text": "[mem:12] cited"},
    ]
    record = {
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": "call_0003", "output": output},
    }

    turn = parse_record(record).turn

    assert turn is not None
    assert turn.tool_results == (ToolResult("call_0003", f"{stored}\n\n[mem:12] cited", False),)
    wrapped = {"type": "function_call_output", "call_id": "c", "output": {"content": output[1:2]}}
    only = parse_record({"type": "response_item", "payload": wrapped}).turn
    assert only is not None and only.tool_results[0].text == stored
