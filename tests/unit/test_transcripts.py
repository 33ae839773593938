"""Reading Claude Code session transcripts (core/transcripts): which folders and
sessions are the project's, what of a record is a conversation turn, how its text is cleaned,
and how turns are cut into chunks for the LLM."""

from __future__ import annotations

import json
from pathlib import Path

from core.transcripts import (
    MAX_TURN_CHARS,
    Turn,
    chunks,
    clean_text,
    gemini_project_sessions,
    project_sessions,
    read_session,
    record_turn,
    slug,
)
from tests.transcripts import GEMINI_SESSION_ID, SESSION_IDS, install, install_gemini


def turn_record(text: object, **fields: object) -> dict[str, object]:
    return {"type": "user", "message": {"role": "user", "content": text}, **fields}


def test_the_slug_replaces_every_character_but_letters_and_digits() -> None:
    assert slug(Path("/work/my_app.v2")) == "-work-my-app-v2"
    assert slug(Path("/home/ana/Café")) == "-home-ana-Caf-"


def test_a_sessions_turns_leave_out_everything_that_is_not_the_conversation(
    tmp_path: Path,
) -> None:
    project = tmp_path / "app"
    folder = install(tmp_path / "claude", project, "decisions")

    session = read_session(folder / f"{SESSION_IDS['decisions']}.jsonl")

    assert session.session_id == SESSION_IDS["decisions"]
    assert session.cwd == str(project)
    assert [(t.role, t.text[:30]) for t in session.turns] == [
        ("user", "We keep getting 'database is l"),
        ("assistant", "Let me look at how the connect"),
        ("assistant", "Two writers with DEFERRED tran"),
        ("user", "Agreed, do that. And we use th"),
        ("assistant", "Done: transaction_mode is IMME"),
    ]
    text = "\n".join(t.text for t in session.turns)
    for absent in ("system-reminder", "TodoWrite", "PRIVATE-THOUGHT", "TOOL-OUTPUT"):
        assert absent not in text
    for absent in ("SIDECHAIN-NOTE", "Caveat:", "/clear", "Request interrupted"):
        assert absent not in text
    # The summary record and the line still being written are not turns; the last is counted.
    assert session.skipped_lines == 1
    assert (session.started_at, session.ended_at) == (
        "2026-11-20T09:00:05.000Z",
        "2026-11-20T09:03:00.000Z",
    )


def test_records_of_other_shapes_are_no_turns() -> None:
    assert record_turn({"type": "summary", "summary": "x"}) is None
    assert record_turn({"type": "user", "message": "not an object"}) is None
    assert record_turn(turn_record(42)) is None
    assert record_turn(turn_record([{"type": "image", "source": {}}])) is None
    assert record_turn(turn_record("a compacted retelling", isCompactSummary=True)) is None
    assert record_turn(turn_record("API Error: 529", isApiErrorMessage=True)) is None
    kept = record_turn(turn_record([{"type": "text", "text": "hello"}], timestamp="t"))
    assert kept == Turn("user", "hello", "t")


def test_text_is_cleaned_of_escapes_and_control_characters_and_cut() -> None:
    assert clean_text("\x1b[31mred\x1b[0m and\x07 bell\r\n\n\n\nnext") == "red and bell\n\nnext"
    assert clean_text("Cafe\u0301") == "Café"
    long = clean_text("x" * (MAX_TURN_CHARS + 50))
    assert long.startswith("x" * MAX_TURN_CHARS)
    assert long.endswith("(50 characters cut)")


def test_the_project_takes_its_own_and_its_subfolders_sessions_only(tmp_path: Path) -> None:
    claude, project = tmp_path / "claude", tmp_path / "my.app"
    install(claude, project, "decisions")
    install(claude, project, "secret", started_in=project / "docs")
    # `/…/my-app` has the same slug as `/…/my.app`, and `/…/my.app-old` starts like it:
    # neither folder's sessions are the project's (their recorded cwd says so).
    install(claude, tmp_path / "my-app", "duplicate")
    install(claude, tmp_path / "my.app-old", "duplicate")

    sessions = project_sessions(claude / "projects", project)

    assert [s.session_id for s in sessions] == [SESSION_IDS["decisions"], SESSION_IDS["secret"]]


def test_a_session_that_records_no_cwd_is_taken_from_the_roots_own_folder_only(
    tmp_path: Path,
) -> None:
    claude, project = tmp_path / "claude", tmp_path / "app"
    for where in (project, project / "sub"):
        folder = claude / "projects" / slug(where)
        folder.mkdir(parents=True)
        record = turn_record("no cwd here", sessionId=where.name, timestamp="2026-01-01")
        (folder / f"{where.name}.jsonl").write_text(json.dumps(record) + "\n")

    assert [s.session_id for s in project_sessions(claude / "projects", project)] == ["app"]


def test_no_projects_folder_means_no_sessions(tmp_path: Path) -> None:
    assert project_sessions(tmp_path / "nowhere", tmp_path) == []


def test_gemini_cli_sessions_are_the_projects_by_the_folder_their_marker_names(
    tmp_path: Path,
) -> None:
    gemini, project = tmp_path / ".gemini", (tmp_path / "app").resolve()
    install_gemini(gemini, project / "docs")
    install_gemini(gemini, tmp_path / "app-old", "other", project_folder="app-old")
    # A folder without a marker (Gemini CLI's older, hash-named ones, copied into named ones)
    # and a subagent's conversation (a folder of its own below `chats/`) are not read.
    unmarked = install_gemini(gemini, project, "unmarked", project_folder="0f3a9c")
    (unmarked.parent.parent / ".project_root").unlink()
    subagent = install_gemini(gemini, project, "subagent", project_folder="app")
    (subagent.parent / "parent").mkdir()
    subagent.rename(subagent.parent / "parent" / "subagent.jsonl")

    sessions = gemini_project_sessions(gemini / "tmp", project)

    assert [(s.session_id, s.host, len(s.turns)) for s in sessions] == [
        (GEMINI_SESSION_ID, "gemini", 3)
    ]
    assert gemini_project_sessions(tmp_path / "nowhere", project) == []


def test_turns_are_cut_into_chunks_that_fit() -> None:
    turns = [Turn("user", "a" * 40, "") for _ in range(5)]  # each renders to 48 characters

    assert chunks(turns, 0, 100) == [(0, 2), (2, 4), (4, 5)]
    assert chunks(turns, 3, 1000) == [(3, 5)]
    assert chunks(turns, 5, 100) == []
    assert chunks([Turn("user", "b" * 500, "")], 0, 100) == [(0, 1)]
