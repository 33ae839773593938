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
"""

from __future__ import annotations

from pathlib import Path

from core import json_limits
from core.transcripts.claude_code import SLUG_LIMIT, slug
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
