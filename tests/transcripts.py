"""Fake Claude Code transcript folders for the transcript-mining tests: the fixture sessions of
tests/fixtures/transcripts/ installed under a Claude folder of the test's own, as Claude Code
lays them out (`<claude>/projects/<slug>/<session-id>.jsonl`), with their recorded `cwd` set
to the test's project folder.

The fixtures (JSONL in Claude Code's record format, `@PROJECT@` standing for the project folder):
- decisions.jsonl: two decisions, amid what is not conversation — a /clear command, a meta
  caveat, a system reminder, thinking, a tool call and its result, a sidechain (subagent) record,
  an interruption — and a last line still being written;
- secret.jsonl: a lesson, in a conversation where the user pasted an API key;
- duplicate.jsonl: a lesson the graph already holds (DUPLICATE_LESSON), and a new fact.

And one Codex session, codex-rollout.jsonl: a rollout file Codex 0.169.0 wrote (`codex exec`
against a scripted model; its long instructions cut, a reasoning item and a compaction record
added in Codex's shapes), installed by `install_codex` where Codex keeps it
(`<codex home>/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`): AGENTS.md and the
working folder injected, memesh's context given as developer messages, a failing test, a patch,
the test passing, a commit and a reply citing `[mem:CITED]`.

And one Gemini CLI session, gemini-session.jsonl (Gemini CLI 0.61.0, recorded with memesh's hooks;
tests/unit/test_transcript_reader_gemini.py says what it holds), installed by `install_gemini`
where Gemini CLI keeps it (`<gemini dir>/tmp/<project>/chats/session-<time>-<id>.jsonl`, the
project folder's `.project_root` naming the folder the session was started in).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.transcripts import slug

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
CODEX_SESSION_ID = "01a251fa-0c58-7293-b4cb-fcda7bc9ea46"
GEMINI_SESSION_ID = "36b129ba-27b1-4834-9321-f69f21a1d9b4"
SESSION_IDS = {
    "decisions": "0b9d8a2e-5c1f-4a3e-9f6d-1a2b3c4d5e01",
    "secret": "0b9d8a2e-5c1f-4a3e-9f6d-1a2b3c4d5e02",
    "duplicate": "0b9d8a2e-5c1f-4a3e-9f6d-1a2b3c4d5e03",
}
PASTED_KEY = "sk-proj-Zq8xW3vN5tR7yU1iO9pA2sD4fG6hJ8kL0"  # in secret.jsonl; not a real key
DUPLICATE_LESSON = (
    "The parser tests are flaky because they depend on dictionary order in the fixture "
    "loader; sorting the fixture keys makes them stable."
)


def install(claude: Path, project: Path, *names: str, started_in: Path | None = None) -> Path:
    """Copy these fixture sessions (all when none is named) into `claude`'s projects folder
    as sessions started in `started_in` (default `project`), their `cwd` set to it; the
    session folder."""
    where = started_in or project
    folder = claude / "projects" / slug(where)
    folder.mkdir(parents=True, exist_ok=True)
    for name in names or tuple(SESSION_IDS):
        text = (FIXTURES / f"{name}.jsonl").read_text()
        (folder / f"{SESSION_IDS[name]}.jsonl").write_text(text.replace("@PROJECT@", str(where)))
    return folder


def install_codex(codex_home: Path, started_in: Path, session: str = CODEX_SESSION_ID) -> Path:
    """Copy the Codex fixture session into `codex_home` as session `session` started in
    `started_in`; the rollout file."""
    text = (FIXTURES / "codex-rollout.jsonl").read_text().replace("@PROJECT@", str(started_in))
    folder = codex_home / "sessions" / "2026" / "12" / "07"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2026-12-07T19-27-51-{session}.jsonl"
    path.write_text(text.replace(CODEX_SESSION_ID, session))
    return path


def install_gemini(
    gemini_dir: Path,
    started_in: Path,
    session: str = GEMINI_SESSION_ID,
    project_folder: str | None = None,
) -> Path:
    """Copy the Gemini CLI fixture session into `gemini_dir` (GEMINI_CLI_HOME's `.gemini`) as
    session `session` started in `started_in`, in the project folder Gemini CLI would name
    (`project_folder`, default the folder's base name, slugged as Gemini CLI does); the file."""
    name = project_folder or re.sub(r"[^a-z0-9]+", "-", started_in.name.lower()).strip("-")
    folder = gemini_dir / "tmp" / name
    (folder / "chats").mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text(str(started_in))
    text = (FIXTURES / "gemini-session.jsonl").read_text()
    text = text.replace("@PROJECT@", str(started_in)).replace("@HOME@", str(gemini_dir.parent))
    path = folder / "chats" / f"session-2026-12-07T20-57-{session[:8]}.jsonl"
    path.write_text(text.replace(GEMINI_SESSION_ID, session))
    return path


def append_turns(session_file: Path, session_id: str, cwd: Path, *texts: str) -> None:
    """Append user turns to a session, as Claude Code does while it goes on."""
    with session_file.open("a") as handle:
        handle.write("\n")  # after a last line that was still being written
        for n, text in enumerate(texts):
            record = {
                "type": "user",
                "sessionId": session_id,
                "cwd": str(cwd),
                "isSidechain": False,
                "uuid": f"more-{n}",
                "timestamp": f"2026-11-25T08:00:0{n}.000Z",
                "message": {"role": "user", "content": text},
            }
            handle.write(json.dumps(record) + "\n")
