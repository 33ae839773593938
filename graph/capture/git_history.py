"""The git half of `memesh why`: which commits touched a file (`git log --follow`), or which
commit last changed one line (`git blame`), read by running the `git` binary.

Only the CLI runs this, from the user's own working tree: no request path ever starts a
process (POST /v1/why takes the hashes from its caller). The PostToolUse hook reads the commit
an agent just made (`commit_facts`) the same way, in the directory Claude Code reported.
Each call is an argument list, never a shell, with a timeout, run in the directory holding
the file, with path arguments taken literally (`--literal-pathspecs`: a file called `:x` is
not pathspec magic).

What git cannot answer is a typed abstention with no commits, never a guess — the codes of the
reference's POST /v1/why, which the CLI puts in the answer's top-level `abstentions`:
- `git_unavailable`: no `git` binary could be started;
- `not_a_git_repo`: the file's directory is in no repository;
- `file_not_tracked`: git does not track the file (`ls-files --error-unmatch`);
- `line_out_of_range`: `--line` past the file's last line;
- `line_uncommitted`: the line is not committed yet (blame's all-zero hash);
- `history_unreadable`: git did not answer — it failed, exceeded GIT_TIMEOUT_SECONDS, or the
  repository has no commits yet. The empty list then means unknown, never none.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from core.errors import InvalidParameter
from graph.capture.commit_capture import CommitFacts

GIT_TIMEOUT_SECONDS = 5  # the reference's bound on each git call
_HASH = re.compile(r"^[0-9a-f]{7,40}$")
_UNCOMMITTED = re.compile(r"^0+$")
# Read-only and quiet whatever the user's configuration says: no optional index lock, no
# fsmonitor hook started, no signature lines mixed into the log, no credential prompt.
_GIT = (
    "git",
    "--literal-pathspecs",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "log.showSignature=false",
)
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


@dataclass(frozen=True)
class GitCommit:
    hash: str  # the full hash
    date: str | None  # YYYY-MM-DD, the author date
    subject: str | None


@dataclass
class GitAnswer:
    """The commits git gave (newest first), or an abstention saying why there are none."""

    commits: list[GitCommit] = field(default_factory=list)
    abstention: str | None = None
    # The repository's top-level folder, once git confirmed one (it picks the project).
    toplevel: Path | None = None


class _GitMissing(Exception):
    pass


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    """`git ARGS` in `cwd`; None when it timed out. Raises _GitMissing when git cannot start."""
    try:
        return subprocess.run(
            [*_GIT, *args],
            cwd=cwd,
            env={**os.environ, **_ENV},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    except OSError as exc:  # no git on PATH, or not executable
        raise _GitMissing(str(exc)) from None


def _locate(file: str, cwd: Path) -> tuple[Path, str, Path]:
    """(directory to run git in, the file's path relative to it, the file's absolute path).

    git runs in the file's own folder when it exists, so a path into another repository is
    answered by that repository; otherwise (a folder since deleted) in the current one."""
    absolute = Path(os.path.normpath(cwd / Path(file).expanduser()))
    folder = absolute.parent if absolute.parent.is_dir() else cwd
    return folder, os.path.relpath(absolute, folder), absolute


def _line_count(path: Path) -> int | None:
    try:
        with path.open("rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def file_commits(file: str, *, limit: int, line: int | None = None, cwd: Path) -> GitAnswer:
    """The commits that touched `file` (at most `limit`, newest first, following renames), or
    with `line` the one commit that last changed that line; paths are relative to `cwd`."""
    if line is not None and line < 1:
        raise InvalidParameter(f"--line must be at least 1 (got {line})", field="line")
    if limit < 1:
        raise InvalidParameter(f"--limit must be at least 1 (got {limit})", field="limit")
    folder, relative, absolute = _locate(file, cwd)
    try:
        return _resolve(folder, relative, absolute, limit=limit, line=line)
    except _GitMissing:
        return GitAnswer(abstention="git_unavailable")


def _resolve(
    folder: Path, relative: str, absolute: Path, *, limit: int, line: int | None
) -> GitAnswer:
    top = _git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        return GitAnswer(abstention="history_unreadable")
    if top.returncode != 0:
        return GitAnswer(abstention="not_a_git_repo")
    toplevel = Path(top.stdout.strip())
    tracked = _git(folder, "ls-files", "--error-unmatch", "--", relative)
    if tracked is None:
        return GitAnswer(abstention="history_unreadable", toplevel=toplevel)
    if tracked.returncode != 0:
        return GitAnswer(abstention="file_not_tracked", toplevel=toplevel)
    if line is not None:
        return _blame(folder, relative, absolute, line, toplevel)
    log = _git(
        folder,
        "log",
        "-n",
        str(limit),
        "--follow",
        "--format=%H%x09%ad%x09%s",
        "--date=short",
        "--",
        relative,
    )
    if log is None or log.returncode != 0:
        # Also a repository without commits yet: git log fails, so "none" cannot be said.
        return GitAnswer(abstention="history_unreadable", toplevel=toplevel)
    commits = []
    for row in log.stdout.splitlines():
        hash_, _, rest = row.partition("\t")
        date, _, subject = rest.partition("\t")
        if _HASH.match(hash_):
            commits.append(GitCommit(hash=hash_, date=date or None, subject=subject))
    return GitAnswer(commits=commits, toplevel=toplevel)


def _blame(folder: Path, relative: str, absolute: Path, line: int, toplevel: Path) -> GitAnswer:
    # blame reads the working-tree file: a line past its end is out of range, whatever git
    # says (its message is localised, its exit status is not specific).
    lines = _line_count(absolute)
    if lines is not None and line > lines:
        return GitAnswer(abstention="line_out_of_range", toplevel=toplevel)
    blame = _git(folder, "blame", "--porcelain", "-L", f"{line},{line}", "--", relative)
    if blame is None or blame.returncode != 0:
        return GitAnswer(abstention="history_unreadable", toplevel=toplevel)
    head, *rest = blame.stdout.splitlines() or [""]
    hash_ = head.split(" ", 1)[0]
    if not _HASH.match(hash_):
        return GitAnswer(abstention="history_unreadable", toplevel=toplevel)
    if _UNCOMMITTED.match(hash_):
        return GitAnswer(abstention="line_uncommitted", toplevel=toplevel)
    headers = dict(r.split(" ", 1) for r in rest if " " in r and not r.startswith("\t"))
    commit = GitCommit(
        hash=hash_,
        date=_author_date(headers.get("author-time"), headers.get("author-tz")),
        subject=headers.get("summary"),
    )
    return GitAnswer(commits=[commit], toplevel=toplevel)


def _author_date(epoch: str | None, tz: str | None) -> str | None:
    """YYYY-MM-DD of blame's `author-time` in the author's `author-tz` (+hhmm), as
    `git log --date=short` prints the author date."""
    if not epoch or not epoch.isdigit():
        return None
    offset = 0
    if tz and re.fullmatch(r"[+-]\d{4}", tz):
        sign = -1 if tz[0] == "-" else 1
        offset = sign * (int(tz[1:3]) * 3600 + int(tz[3:5]) * 60)
    moment = datetime.fromtimestamp(int(epoch) + offset, tz=UTC)
    return moment.date().isoformat()


# --- one commit's facts, for the PostToolUse hook's commit capture ---------------------------

# hash, committer time (epoch), subject, body; NUL-separated (a body may hold anything else).
_SHOW_FORMAT = "%H%x00%ct%x00%s%x00%b%x00"


def commit_facts(cwd: Path, ref: str) -> tuple[CommitFacts, int] | None:
    """(the facts of commit `ref` in the repository at `cwd`, its committer time as epoch
    seconds), or None when `ref` is no commit there or git cannot tell. `ref` is a hash, or
    HEAD; it is never taken for an option."""
    if not (_HASH.match(ref) or ref == "HEAD"):
        return None
    try:
        exists = _git(cwd, "cat-file", "-e", f"{ref}^{{commit}}")
        if exists is None or exists.returncode != 0:
            return None
        shown = _git(cwd, "show", "-s", f"--format={_SHOW_FORMAT}", ref, "--")
        stats = _git(cwd, "show", "--numstat", "--format=", "--no-renames", ref, "--")
        branch = _git(cwd, "symbolic-ref", "--quiet", "--short", "HEAD")
    except _GitMissing:
        return None
    if shown is None or shown.returncode != 0:
        return None
    hash_, committed, subject, body, *_ = [*shown.stdout.split("\x00"), "", "", "", ""]
    hash_ = hash_.strip().lower()
    if not _HASH.match(hash_):
        return None
    files: list[str] = []
    insertions = deletions = 0
    if stats is not None and stats.returncode == 0:
        for row in stats.stdout.splitlines():
            added, _, rest = row.partition("\t")
            removed, _, path = rest.partition("\t")
            if not path:
                continue
            files.append(path)
            insertions += int(added) if added.isdigit() else 0  # "-" for a binary file
            deletions += int(removed) if removed.isdigit() else 0
    on_branch = branch.stdout.strip() if branch is not None and branch.returncode == 0 else None
    facts = CommitFacts(
        hash=hash_,
        subject=subject.strip(),
        body=body.strip(),
        branch=on_branch or None,
        files=files,
        insertions=insertions,
        deletions=deletions,
    )
    return facts, int(committed) if committed.strip().isdigit() else 0
