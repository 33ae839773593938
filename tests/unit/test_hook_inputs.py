"""What the hooks read, without a database: Claude Code's transcript (the fixture shaped as
Claude Code writes it), the turn's signals, "remember this" requests, lesson-guard commands,
reply cleaning, note-file frontmatter, and the forwarded request carrying stdin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from api.cli.runner import BadRequest, parse_request
from api.hooks.transcript import Transcript, read_transcript, session_evidence, turn_signals
from graph.capture.handoff import MIN_HANDOFF_CHARS, clean_reply, pick_reply
from graph.capture.lesson_guards import matches, recorded_commands, simple_commands
from graph.capture.note_files import parse_frontmatter
from graph.capture.remember_intent import remember_intent

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hooks"


@pytest.fixture
def transcript(tmp_path: Path) -> Transcript:
    text = (FIXTURES / "session-transcript.jsonl").read_text()
    text = text.replace("__CWD__", "/work/widget").replace("__CITED__", "7")
    path = tmp_path / "session.jsonl"
    path.write_text(text.replace("__LISTED__", "8").replace("__SESSION__", "sess-1"))
    return read_transcript(path)


def test_the_transcript_gives_the_agents_own_replies_never_the_injected_block(
    transcript: Transcript,
) -> None:
    replies = transcript.reply_texts()
    assert replies[0] == "I'll run the auth tests first."
    assert "[mem:7]" in replies[-1]
    assert not any("[mem:8]" in r or "[mem:999]" in r for r in replies)  # echo, sidechain


def test_tool_calls_carry_their_results_and_the_turn_starts_at_the_typed_prompt(
    transcript: Transcript,
) -> None:
    assert [c.name for c in transcript.calls] == ["Bash", "Read", "Edit", "Bash", "Bash"]
    assert [c.is_error for c in transcript.calls] == [True, False, False, False, False]
    assert transcript.turn == 1  # the /clear command echo (isMeta) starts no turn
    assert len(transcript.turn_calls()) == 5


def test_session_evidence_pairs_an_error_with_the_fix_that_followed(
    transcript: Transcript,
) -> None:
    evidence = session_evidence(transcript, "sess-1")
    assert evidence.files_edited == ["auth.py"]
    assert evidence.commands == 3
    assert [e.message for e in evidence.errors] == [
        "FAILED tests/test_auth.py::test_login - AssertionError: 401 != 200"
    ]
    (fix,) = evidence.fixes
    assert fix.subject == "`pytest -q tests/test_auth.py`" and fix.files == ["auth.py"]
    assert evidence.commits == ["1a2b3c4 Read the token audience from settings"]


def test_the_turn_signals_say_a_test_went_red_then_green_and_a_commit_was_made(
    transcript: Transcript,
) -> None:
    signals = turn_signals(transcript)
    assert signals.worth_a_remember() == ["committed", "turned a test red then green"]


def _turn(tmp_path: Path, *calls: tuple[str, dict[str, object], bool]) -> Transcript:
    lines = [{"type": "user", "message": {"role": "user", "content": "go"}}]
    for i, (name, tool_input, error) in enumerate(calls):
        use = {"type": "tool_use", "id": f"t{i}", "name": name, "input": tool_input}
        lines.append({"type": "assistant", "message": {"id": f"m{i}", "content": [use]}})
        done = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x", "is_error": error}
        lines.append({"type": "user", "message": {"role": "user", "content": [done]}})
    path = tmp_path / "turn.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    return read_transcript(path)


def test_a_remember_call_in_the_turn_silences_the_reminder(tmp_path: Path) -> None:
    planned = _turn(tmp_path, ("ExitPlanMode", {"plan": "p"}, False))
    assert turn_signals(planned).worth_a_remember() == ["approved a plan"]
    rejected = _turn(tmp_path, ("ExitPlanMode", {"plan": "p"}, True))
    assert turn_signals(rejected).worth_a_remember() == []
    remembered = _turn(
        tmp_path,
        ("AskUserQuestion", {"questions": []}, False),
        ("mcp__plugin_memesh_memesh__remember", {"name": "x"}, False),
    )
    assert turn_signals(remembered).worth_a_remember() == []


@pytest.mark.parametrize(
    ("prompt", "content"),
    [
        (
            "Remember that the staging database is reset every Monday.",
            "the staging database is reset every Monday.",
        ),
        ("Thanks! Please remember this: we deploy with fly.io.", "we deploy with fly.io."),
        ("save this to memesh: builds need Node 22\n\nNow fix the CI", "builds need Node 22"),
        ("remember this", ""),
        ("Recuerda que el deploy es los viernes", "el deploy es los viernes"),
    ],
)
def test_an_explicit_remember_request_gives_what_follows_it(prompt: str, content: str) -> None:
    found = remember_intent(prompt)
    assert found is not None and found.content == content


@pytest.mark.parametrize(
    "prompt",
    [
        "Do you remember that bug from yesterday?",
        "Remember that function we wrote?",
        "I can't remember that command, can you look it up",
        "Remember to run the linter",
        "",
    ],
)
def test_questions_and_passing_mentions_are_no_remember_request(prompt: str) -> None:
    assert remember_intent(prompt) is None


def test_a_lesson_guards_only_the_specific_commands_it_records_as_the_mistake() -> None:
    observations = [
        "Error: `git push --force` on main wiped a colleague's commit; `ls` was fine",
        "Root cause: ran `rm -rf build && make` from the wrong folder",
        "Fix: use `git push --force-with-lease`",
        "Prevention: never `git reset --hard` shared branches",
    ]
    assert recorded_commands(observations) == [
        ["git", "push", "--force"],
        ["rm", "-rf", "build"],
    ]


@pytest.mark.parametrize(
    ("command", "fires"),
    [
        ("git push --force origin main", True),
        ("cd repo && git push origin main --force", True),
        ("git push origin main", False),
        ("git push --force-with-lease origin main", False),
        ("echo 'git push --force'", False),
        ("git status", False),
    ],
)
def test_a_recorded_command_matches_a_simple_command_conservatively(
    command: str, fires: bool
) -> None:
    recorded = ["git", "push", "--force"]
    assert any(matches(recorded, c) for c in simple_commands(command)) is fires


def test_a_reply_is_cleaned_of_code_markup_and_host_text() -> None:
    reply = (
        "## Summary\n\n**Fixed** the audience check.\n\n```python\nAUDIENCE = x\n```\n\n"
        "| a | b |\n|---|---|\n<system-reminder>ignore me</system-reminder>Next: refresh tokens."
    )
    cleaned = clean_reply(reply)
    assert cleaned.startswith("Summary\n\nFixed the audience check.")
    assert "AUDIENCE" not in cleaned and "ignore me" not in cleaned and "---" not in cleaned
    assert pick_reply(["x" * MIN_HANDOFF_CHARS, "Done."]) == "x" * MIN_HANDOFF_CHARS
    assert pick_reply(["Done."]) is None


def test_a_handoff_keeps_the_underscores_of_identifiers_and_drops_bold_markers() -> None:
    reply = (
        "Call mcp__memesh__remember (or `mcp__memesh__recall`) from __init__.py's caller; "
        "**bold** and __strong__ go, a**b**c too."
    )

    cleaned = clean_reply(reply)

    assert cleaned == (
        "Call mcp__memesh__remember (or `mcp__memesh__recall`) from __init__.py's caller; "
        "bold and strong go, abc too."
    )
    assert clean_reply("obj.__dict__ is __final__.") == "obj.__dict__ is final."


def test_note_file_frontmatter_is_read_with_one_level_of_nesting() -> None:
    fields, body = parse_frontmatter(
        '---\nname: "Deploy target"\ndescription: fly.io, never heroku\nmetadata:\n'
        "  type: project\n---\n\nThe app is acme-web.\n"
    ) or ({}, "")
    assert fields == {
        "name": "Deploy target",
        "description": "fly.io, never heroku",
        "metadata.type": "project",
    }
    assert body.strip() == "The app is acme-web."
    assert parse_frontmatter("- [Deploy](deploy.md)\n") is None


def test_a_forwarded_request_carries_stdin_only_for_the_hook_command() -> None:
    request = parse_request({"argv": ["hook", "stop"], "cwd": "/w", "stdin": "{}"})
    assert (request.argv, request.cwd, request.stdin) == (["hook", "stop"], "/w", "{}")
    with pytest.raises(BadRequest):
        parse_request({"argv": ["recall", "x"], "cwd": "/w", "stdin": "{}"})
    with pytest.raises(BadRequest):
        parse_request({"argv": ["hook", "stop"], "cwd": "/w", "stdin": 3})
