"""Project identity: the one answer to "which project is this?", used wherever memesh needs
the current project (`project:<id>` tags, lessons, task state, briefings).

For a directory (the caller's working directory by default):
1. the slug of the git remote `origin` (`owner/repo` from any URL form, lower-cased);
2. else the repository's top-level folder name;
3. else the folder's name plus a short hash of its real path (two unrelated folders called
   `app` must not share memories).
Git is read from its files, not by running git: no subprocess on the request path, and the
answer does not depend on a git binary being installed.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
from pathlib import Path

from core.invocation import caller_directory

# Matches the path part of https://host/owner/repo(.git), ssh://git@host/owner/repo,
# git@host:owner/repo.git and file paths; keeps the last two segments.
_SLUG = re.compile(r"([^/:\\]+)[/:\\]([^/:\\]+?)(?:\.git)?/*$")
_SAFE = re.compile(r"[^a-z0-9._/-]+")
HASH_CHARS = 8
# The short hash a folder outside any repository gets after its name (rule 3 above).
_HASHED = re.compile(rf"^(.+)-[0-9a-f]{{{HASH_CHARS}}}$")


def _git_dir(start: Path) -> tuple[Path, Path] | None:
    """(top-level folder, git dir) of the repository containing `start`, if any."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = dot_git.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return folder, target if target.is_absolute() else (folder / target).resolve()
    return None


def _origin_url(git_dir: Path) -> str | None:
    candidates = [git_dir / "config"]
    common = git_dir / "commondir"  # worktrees keep the remotes in the main repository
    if common.is_file():
        candidates.insert(0, (git_dir / common.read_text().strip()).resolve() / "config")
    for config_file in candidates:
        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read(config_file, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        section = 'remote "origin"'
        if parser.has_option(section, "url"):
            return parser.get(section, "url").strip()
    return None


def slug_from_url(url: str) -> str | None:
    """`owner/repo` from a git remote URL, lower-cased; None when it has no such shape."""
    match = _SLUG.search(url.strip().rstrip("/"))
    if not match:
        return None
    slug = _SAFE.sub("-", f"{match.group(1)}/{match.group(2)}".lower()).strip("-")
    return slug or None


def project_id(directory: str | os.PathLike[str] | None = None) -> str:
    """The project identity of `directory` (default: the directory the command was started in,
    core/invocation.py)."""
    start = Path(directory or caller_directory()).resolve()
    found = _git_dir(start)
    if found is not None:
        top, git_dir = found
        url = _origin_url(git_dir)
        slug = slug_from_url(url) if url else None
        if slug:
            return slug
        return _SAFE.sub("-", top.name.lower()).strip("-") or "root"
    digest = hashlib.sha256(str(start).encode()).hexdigest()[:HASH_CHARS]
    name = _SAFE.sub("-", start.name.lower()).strip("-") or "root"
    return f"{name}-{digest}"


def project_root(directory: str | os.PathLike[str] | None = None) -> Path:
    """The folder a project's files live in: the top folder of the git repository holding
    `directory` (default: the directory the command was started in), else `directory` itself."""
    start = Path(directory or caller_directory()).resolve()
    found = _git_dir(start)
    return found[0] if found is not None else start


def project_tag(project: str) -> str:
    return f"project:{project}"


def plain_name(project: str) -> str:
    """The readable name of a project id, as a person (or an agent) shortens it: `repo` of
    `owner/repo`, `app` of `app-1a2b3c4d`. An id that is already its own name is returned as
    it is."""
    name = project.rstrip("/").rsplit("/", 1)[-1] or project
    hashed = _HASHED.match(name)
    return hashed.group(1) if hashed and "/" not in project else name


def short_hash(project: str) -> str:
    """The short hash that tells two projects of one readable name apart: the id's own suffix
    for a folder outside git (`app-1a2b3c4d`), else the start of the id's SHA-256."""
    name = project.rstrip("/").rsplit("/", 1)[-1] or project
    hashed = _HASHED.match(name)
    if hashed and "/" not in project:
        return name[-HASH_CHARS:]
    return hashlib.sha256(project.encode()).hexdigest()[:HASH_CHARS]


def project_line(project: str) -> str:
    """The first line of a briefing: the exact id (what `project:<id>` tags use), then the
    readable name and the short hash a person tells projects apart by."""
    return f"Project: {project} ({plain_name(project)} #{short_hash(project)})"
