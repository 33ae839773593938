"""What transcript mining remembers between runs, per project, in
MEMESH_HOME/transcript-mining.json (the reference's file):

    {"projects": {"<project>": {"lastMinedAt": "<ISO 8601>",
                                "sessions": {"<session id>": {"turns": 42,
                                                              "minedAt": "<ISO 8601>"}}}}}

- `lastMinedAt` is the end of the last completed run (manual or scheduled): `--if-due
  --min-interval-hours` counts from it, so a scheduled run never mines right after a hand run.
- `sessions[id].turns` is how many conversation turns of that session were read by the LLM; a
  later run reads only the turns after them, so a session is never paid for twice, and a
  session that grew is mined from where it was left.

The file is read-modify-written under an exclusive lock (a sibling `.lock` file) and replaced
atomically with mode 0600, as config.json is (core/config_store.py). An unreadable
file is treated as empty: the worst case is one session mined again, and the next run writes
a good file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core import paths

STATE_FILENAME = "transcript-mining.json"


def state_path() -> Path:
    # In a home shared with the original MeMesh, which keeps a file of this name, memesh's
    # has a name of its own: each product mines the sessions on its own.
    return paths.own_file(paths.memesh_home(), STATE_FILENAME)


def _load() -> dict[str, Any]:
    try:
        raw = json.loads(state_path().read_text())
    except (OSError, ValueError):
        return {}
    return raw if isinstance(raw, dict) else {}


def _projects(document: dict[str, Any]) -> dict[str, Any]:
    projects = document.get("projects")
    return projects if isinstance(projects, dict) else {}


@dataclass(frozen=True)
class ProjectState:
    last_mined_at: datetime | None
    mined_turns: dict[str, int]  # session id -> turns already read


def project_state(project: str) -> ProjectState:
    entry = _projects(_load()).get(project)
    if not isinstance(entry, dict):
        return ProjectState(None, {})
    sessions = entry.get("sessions")
    mined = {
        str(sid): int(info["turns"])
        for sid, info in (sessions.items() if isinstance(sessions, dict) else [])
        if isinstance(info, dict) and isinstance(info.get("turns"), int)
    }
    return ProjectState(_parse_time(entry.get("lastMinedAt")), mined)


def last_mined() -> dict[str, datetime]:
    """Every project's last completed run (memesh doctor's "Scheduled transcript mining")."""
    out: dict[str, datetime] = {}
    for project, entry in _projects(_load()).items():
        when = _parse_time(entry.get("lastMinedAt")) if isinstance(entry, dict) else None
        if when is not None:
            out[str(project)] = when
    return out


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def record_sessions(project: str, mined: dict[str, int], at: datetime) -> None:
    """Note that these sessions were read up to these turn counts (at `at`)."""
    with _locked() as document:
        entry = _projects(document).setdefault(project, {})
        sessions = entry.setdefault("sessions", {})
        for sid, turns in mined.items():
            sessions[sid] = {"turns": turns, "minedAt": at.isoformat()}


def record_run(project: str, at: datetime) -> None:
    """Note a completed run of this project (it advances `lastMinedAt`)."""
    with _locked() as document:
        _projects(document).setdefault(project, {})["lastMinedAt"] = at.isoformat()


@contextlib.contextmanager
def _locked() -> Iterator[dict[str, Any]]:
    """The document, to edit in place; saved when the block ends without an error."""
    path = state_path()
    paths.ensure_private_dir(path.parent)
    fd = os.open(path.with_name(STATE_FILENAME + ".lock"), os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        document = _load()
        if not isinstance(document.get("projects"), dict):
            document["projects"] = {}
        yield document
        _save(path, document)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _save(path: Path, document: dict[str, Any]) -> None:
    handle_fd, tmp = tempfile.mkstemp(prefix=".transcript-mining-", suffix=".json", dir=path.parent)
    try:
        os.fchmod(handle_fd, 0o600)
        with os.fdopen(handle_fd, "w") as handle:
            json.dump(document, handle, indent=2, ensure_ascii=False, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
