"""Which of the hosts' sessions are a project's: those started in the project's root (the
repository's top-level folder) or in a folder inside it (a session started in `docs/` is the
project's too).

- Claude Code's: the folders named by the slug of the root and of every folder inside it.
  Slugs are lossy (`/a/b.c` and `/a/b-c` share one), so a session is taken only when the `cwd`
  it records is the root or inside it; a session that records no `cwd` is taken from the
  root's own slug.
- Codex's: its rollout files are kept by day, not by folder, so every one is a candidate and
  the `cwd` its first record (`session_meta`) gives decides; the rest of a file is read only
  when that is the project's. A file that records no `cwd` is no project's.
- Gemini CLI's: one folder per folder it was started in, whose `.project_root` names it (the
  records themselves name no `cwd`); a folder without one is no project's (Gemini CLI copies
  its older, hash-named folders into named ones, so reading both would read a session twice).

`all_project_sessions` reads all three, each where settings say its host keeps them.
"""

from __future__ import annotations

from pathlib import Path

from core import json_limits
from core.transcripts.claude_code import SLUG_LIMIT, claude_projects_dir, slug
from core.transcripts.codex import codex_sessions_dir
from core.transcripts.gemini import PROJECT_ROOT_FILE, gemini_tmp_dir
from core.transcripts.reading import parse_record, read_session
from core.transcripts.turns import Session

# Codex's first record carries its base instructions (some 20 kB); more is no session_meta.
MAX_FIRST_LINE_BYTES = 1024 * 1024


def _dir_matches(name: str, root_slug: str) -> str | None:
    """ "exact" when `name` is the root's own folder, "inside" when it may be a folder inside the
    root (or the root's cut-and-hashed name), None otherwise."""
    if name == root_slug:
        return "exact"
    if name.startswith(root_slug[:SLUG_LIMIT] + "-"):
        return "inside"
    return None


def _inside(cwd: str, root: Path) -> bool:
    path = Path(cwd)
    return path == root or root in path.parents


def all_project_sessions(root: Path) -> list[Session]:
    """The sessions of the project rooted at `root` (absolute, resolved), whichever host wrote
    them, oldest first (by first turn, then file name)."""
    sessions = [
        *project_sessions(claude_projects_dir(), root),
        *codex_project_sessions(codex_sessions_dir(), root),
        *gemini_project_sessions(gemini_tmp_dir(), root),
    ]
    return sorted(sessions, key=lambda s: (s.started_at, s.path.name))


def project_sessions(projects_dir: Path, root: Path) -> list[Session]:
    """Every readable session of the project rooted at `root` (an absolute, resolved path) as
    its conversation, oldest first (by first turn, then file name). Sessions without a turn
    are left out."""
    if not projects_dir.is_dir():
        return []
    root_slug = slug(root)
    sessions: list[Session] = []
    for folder in sorted(projects_dir.iterdir()):
        match = _dir_matches(folder.name, root_slug)
        if match is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.jsonl")):
            try:
                session = read_session(path)
            except OSError:
                continue  # gone or unreadable since it was listed
            if not session.turns:
                continue
            if session.cwd and not _inside(session.cwd, root):
                continue  # a slug shared with an unrelated folder
            if not session.cwd and match != "exact":
                continue
            sessions.append(session)
    return sorted(sessions, key=lambda s: (s.started_at, s.path.name))


def codex_project_sessions(sessions_dir: Path, root: Path) -> list[Session]:
    """Every readable Codex session (rollout file under `sessions_dir`, Codex's
    `sessions/YYYY/MM/DD/rollout-*.jsonl`) started in `root` or inside it, as its
    conversation, oldest first. Sessions without a turn are left out."""
    if not sessions_dir.is_dir():
        return []
    sessions: list[Session] = []
    for path in sorted(sessions_dir.glob("*/*/*/rollout-*.jsonl")):
        try:
            cwd = _first_cwd(path)
            if not cwd or not _inside(cwd, root):
                continue
            session = read_session(path)
        except OSError:
            continue  # gone or unreadable since it was listed
        if session.turns:
            sessions.append(session)
    return sorted(sessions, key=lambda s: (s.started_at, s.path.name))


def _first_cwd(path: Path) -> str:
    """The working directory the first record of a rollout file names, "" when it names none."""
    with path.open("rb") as handle:
        line = handle.readline(MAX_FIRST_LINE_BYTES)
    try:
        record = json_limits.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return ""
    return parse_record(record).cwd if isinstance(record, dict) else ""


def gemini_project_sessions(tmp_dir: Path, root: Path) -> list[Session]:
    """Every readable Gemini CLI session (`<tmp_dir>/<project>/chats/session-*.jsonl`; a
    subagent's, in a folder of its own below, is not the user's conversation) started in
    `root` or inside it, as its conversation, oldest first. Sessions without a turn are left
    out."""
    sessions: list[Session] = []
    for path in gemini_session_files(tmp_dir, root):
        try:
            session = read_session(path)
        except OSError:
            continue  # gone or unreadable since it was listed
        if session.turns:
            sessions.append(session)
    return sorted(sessions, key=lambda s: (s.started_at, s.path.name))


def gemini_session_files(tmp_dir: Path, root: Path) -> list[Path]:
    """The session files of the Gemini CLI project folders under `tmp_dir` whose marker names
    `root` or a folder inside it, unread."""
    if not tmp_dir.is_dir():
        return []
    files: list[Path] = []
    for folder in sorted(tmp_dir.iterdir()):
        started_in = _project_root(folder)
        if started_in is not None and _inside(str(started_in), root):
            files.extend(sorted(folder.glob("chats/session-*.jsonl")))
    return files


def _project_root(folder: Path) -> Path | None:
    """The folder a Gemini CLI project folder's marker names, resolved as `root` is (Gemini CLI
    writes it unresolved); None without a readable one."""
    try:
        named = Path((folder / PROJECT_ROOT_FILE).read_text(encoding="utf-8").strip())
        return named.resolve() if named.is_absolute() else None
    except (OSError, ValueError):  # ValueError: not UTF-8, or a NUL byte no path can hold
        return None
