"""Which of Claude Code's sessions are a project's.

The slug of the project's root (the repository's top-level folder) and of every folder inside
it (a session started in `docs/` is the project's too). Slugs are lossy (`/a/b.c` and `/a/b-c`
share one), so a session is taken only when the `cwd` it records is the root or inside it; a
session that records no `cwd` is taken from the root's own slug.
"""

from __future__ import annotations

from pathlib import Path

from core.transcripts.claude_code import SLUG_LIMIT, slug
from core.transcripts.reading import read_session
from core.transcripts.turns import Session


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
