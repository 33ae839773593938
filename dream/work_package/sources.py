"""What a work package is made of (dream/work_package/operation.py serves it): the material of one
package, found again from its id alone, and the hashes that say whether it is still what was
prepared. Nothing here writes.

- **digest**: one ISO week of one project's episodic memories (the dreamer's calendar
  clusters, dream/dreamer.py): active, unpinned, of an episodic type, at most MAX_CLUSTER
  of them, oldest first. The package id names the week and the project
  (`digest:<week>:<project>`), so a submission finds the same memories again without any
  stored state; its `source_hash` covers their ids, names, types, titles and observations
  (proposals/source_state.py), so an edit, an archive or a new memory that week makes it stale.
- **transcript**: the newest agent session under one workspace root, whichever host wrote it
  (Claude Code, Codex or Gemini CLI; the session whose last turn is latest; core/transcripts
  finds and reads it), its last visible turns up to MAX_TRANSCRIPT_TURNS and
  MAX_TRANSCRIPT_CHARS. The id names the session and the turn range
  (`transcript:<session>:<begin>-<end>`): the session that is running grows while the agent
  works, and the range keeps the package what it was; `source_hash` covers exactly those turns.

`workspace_hash` names the scope: the project for a digest, the resolved workspace root for a
transcript. Neither hash is a secret or a credential (the agent guide: they identify freshness
and scope, not who may submit).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote, urlparse

from core import transcripts
from core.redact import mask_secrets
from dream.dreamer import MAX_CLUSTER, MIN_CLUSTER, calendar_clusters, episodic_candidates
from dream.passes import EPISODIC_TYPES, projects_of
from graph.models import Entity, Status
from graph.ops.pin import is_pinned
from proposals.errors import AmbiguousWorkspaceRoot, NoWorkspaceRoot
from proposals.models import ProposalKind
from proposals.schemas import DEFAULT_WINDOW_DAYS
from proposals.selectors import proposal_for_sources, sources_state

DIGEST = "digest"
TRANSCRIPT = "transcript"
MAX_TRANSCRIPT_TURNS = 40
MAX_TRANSCRIPT_CHARS = 16_000  # of rendered turns: what the agent reads and the review keeps
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_TURNS = re.compile(r"^(\d+)-(\d+)$")


def _sha256(parts: list[object]) -> str:
    body = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


# --- digest ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DigestSource:
    project: str
    week: str  # ISO week, "2026-W48"
    entities: list[Entity]

    @property
    def package_id(self) -> str:
        return f"{DIGEST}:{self.week}:{self.project}"

    @property
    def source_hash(self) -> str:
        return _sha256([DIGEST, self.project, self.week, sources_state(self.ids)])

    @property
    def workspace_hash(self) -> str:
        return project_workspace_hash(self.project)

    @property
    def ids(self) -> list[int]:
        return [e.pk for e in self.entities]


def project_workspace_hash(project: str) -> str:
    return _sha256(["project", project])


def week_members(project: str, week: str) -> list[Entity]:
    """The week's digest material: its project's active, unpinned episodic memories written in
    that ISO week (UTC), oldest first, at most MAX_CLUSTER."""
    match = _WEEK.match(week)
    if match is None:
        return []
    try:
        start = datetime.fromisocalendar(int(match[1]), int(match[2]), 1).replace(tzinfo=UTC)
    except ValueError:
        return []
    entities = [
        e
        for e in Entity.objects.filter(
            status=Status.ACTIVE,
            type__in=EPISODIC_TYPES,
            created_at__gte=start,
            created_at__lt=start + timedelta(days=7),
        ).order_by("created_at", "id")
        if not is_pinned(e)
    ]
    project_of = projects_of([e.pk for e in entities])
    return [e for e in entities if project_of[e.pk] == project][:MAX_CLUSTER]


def digest_select(project: str | None) -> DigestSource | None:
    """The calendar-selected digest: the oldest ISO week in the dreamer's window (of `project`,
    or of any project when None) with at least MIN_CLUSTER episodic memories and no digest of
    exactly those memories pending review or rejected by a person while they were as they are
    now (the dreamer's own rule, proposals/selectors.proposal_for_sources)."""
    groups = episodic_candidates(project, DEFAULT_WINDOW_DAYS)
    for p, members in sorted(groups.items()):
        for cluster in calendar_clusters(p, members):
            entities = week_members(p, cluster.key)
            if len(entities) < MIN_CLUSTER:
                continue
            if proposal_for_sources(ProposalKind.DIGEST, [e.pk for e in entities]) is None:
                return DigestSource(p, cluster.key, entities)
    return None


def digest_find(package_id: str) -> DigestSource | None:
    """The digest material a package id names, as it is now (None: not a digest id)."""
    kind, _, rest = package_id.partition(":")
    week, sep, project = rest.partition(":")
    if kind != DIGEST or not sep or _WEEK.match(week) is None:
        return None
    return DigestSource(project, week, week_members(project, week))


# --- workspace roots -----------------------------------------------------------------------------


def root_path(root: str) -> Path | None:
    """A workspace root (a `file://` URI, as MCP's roots/list gives it, or a plain absolute
    path) as a resolved directory; None when it names none."""
    if root.startswith("file:"):
        parsed = urlparse(root)
        if parsed.netloc not in ("", "localhost"):
            return None
        root = unquote(parsed.path)
    path = Path(root)
    if not path.is_absolute():
        return None
    try:
        path = path.resolve()
        return path if path.is_dir() else None
    except (OSError, ValueError):  # ValueError: a NUL byte, which no path can hold
        return None


def matching_root(roots: list[str]) -> tuple[Path, list[transcripts.Session]]:
    """The one workspace root among `roots` that holds agent sessions, with them.
    Refused (NoWorkspaceRoot, AmbiguousWorkspaceRoot) when none or several do."""
    if not roots:
        raise NoWorkspaceRoot(
            "A transcript package needs the client's workspace root, and none was supplied "
            "(over MCP the client lists it with roots/list; over REST pass workspace_root)",
            field="workspace_root",
        )
    found: dict[Path, list[transcripts.Session]] = {}
    for root in roots:
        path = root_path(root)
        if path is None or path in found:
            continue
        sessions = transcripts.all_project_sessions(path)
        if sessions:
            found[path] = sessions
    if not found:
        raise NoWorkspaceRoot(
            f"None of the {len(roots)} workspace root(s) supplied holds an agent session "
            "transcript (Claude Code's, Codex's or Gemini CLI's)",
            field="workspace_root",
        )
    if len(found) > 1:
        raise AmbiguousWorkspaceRoot(
            f"{len(found)} workspace roots hold agent sessions "
            f"({', '.join(sorted(str(p) for p in found))}); a transcript package needs exactly one",
            field="workspace_root",
        )
    [(path, sessions)] = found.items()
    return path, sessions


# --- transcript ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TranscriptSource:
    root: Path
    session: transcripts.Session
    begin: int
    end: int

    @property
    def turns(self) -> tuple[transcripts.Turn, ...]:
        return self.session.turns[self.begin : self.end]

    @property
    def package_id(self) -> str:
        return f"{TRANSCRIPT}:{self.session.session_id}:{self.begin}-{self.end}"

    @property
    def source_hash(self) -> str:
        turns = [[t.role, t.text, t.timestamp] for t in self.turns]
        return _sha256([TRANSCRIPT, self.session.session_id, self.begin, self.end, turns])

    @property
    def workspace_hash(self) -> str:
        return _sha256(["workspace", str(self.root)])

    def excerpt(self) -> list[dict[str, str]]:
        """The turns as the agent reads them and the review page keeps them: secrets masked."""
        return [{"role": t.role, "text": mask_secrets(t.text)} for t in self.turns]


def _newest(sessions: list[transcripts.Session]) -> transcripts.Session:
    return max(sessions, key=lambda s: (s.ended_at, s.started_at, s.path.name))


def _window(turns: tuple[transcripts.Turn, ...]) -> int:
    """Where the last turns that fit the bounds begin (at least one turn)."""
    begin, size = len(turns), 0
    while begin > 0 and len(turns) - begin < MAX_TRANSCRIPT_TURNS:
        length = len(transcripts.render_turn(turns[begin - 1])) + 1
        if begin < len(turns) and size + length > MAX_TRANSCRIPT_CHARS:
            break
        size += length
        begin -= 1
    return begin


def transcript_select(roots: list[str]) -> TranscriptSource:
    """The newest session under the one matching root, its last turns within the bounds."""
    root, sessions = matching_root(roots)
    session = _newest(sessions)
    return TranscriptSource(root, session, _window(session.turns), len(session.turns))


def transcript_find(package_id: str, roots: list[str]) -> TranscriptSource | None:
    """The transcript material a package id names under the matching root, as it is now
    (None: not a transcript id, the session is gone, or it no longer has those turns)."""
    kind, _, rest = package_id.partition(":")
    session_id, sep, turns = rest.rpartition(":")
    span = _TURNS.match(turns)
    if kind != TRANSCRIPT or not sep or not session_id or span is None:
        return None
    begin, end = int(span[1]), int(span[2])
    root, sessions = matching_root(roots)
    session = next((s for s in sessions if s.session_id == session_id), None)
    if session is None or not begin < end <= len(session.turns):
        return None
    return TranscriptSource(root, session, begin, end)


def transcript_workspace_hash(roots: list[str]) -> str:
    root, _ = matching_root(roots)
    return _sha256(["workspace", str(root)])


def is_package_id(package_id: str) -> bool:
    return package_id.partition(":")[0] in (DIGEST, TRANSCRIPT)


def has_transcripts(root: Path) -> bool:
    """Whether Claude Code keeps a session file for sessions started in `root`, or Gemini CLI
    one for sessions started in it or inside it: the cheap test the SessionStart notice makes
    (prepare reads the sessions themselves). Codex's are not looked for: it keeps them by day,
    not by folder, so finding one of `root`'s means opening every one."""
    folder = transcripts.claude_projects_dir() / transcripts.slug(root)
    try:
        return any(folder.glob("*.jsonl")) or bool(
            transcripts.gemini_session_files(transcripts.gemini_tmp_dir(), root)
        )
    except OSError:
        return False
