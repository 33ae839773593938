"""A session's evidence — what happened in it, bounded — captured as one `session` memory
(the Stop hook rewrites it each turn; PreCompact saves a `session-summary` beside it).

The host reads its own transcript (api/hooks/transcript.py) into `SessionEvidence`: files
edited, tool calls, the errors observed and the fixes that followed them (a command that
failed and later passed, with the files edited in between). This service turns that into
observations, drops any that carry a secret, and stores them under `session-<session id>`,
`metadata.session_id` set, so `memesh why` finds the session from its commits. It records what
happened, never what was decided or meant: those are `remember` calls, or proposals of the
transcript miner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from graph.capture.capture import (
    AUTO_CAPTURE_TAG,
    CAPTURE_SOURCE_HOST,
    Captured,
    entity_capture,
    first_secret,
)
from graph.capture.clipping import clip
from graph.project_tags import project_tag

SESSION_TYPE = "session"
PRE_COMPACT_TYPE = "session-summary"
MAX_FILES_LISTED = 30
MAX_FILE_TAGS = 20
MAX_SIGNALS = 5
SIGNAL_CHARS = 300
# Fewer tool calls than this, with no error, is a session with nothing worth recording.
MIN_TOOL_CALLS = 3
PRE_COMPACT_HISTORY = 5


@dataclass(frozen=True)
class ErrorSignal:
    tool: str
    subject: str  # the command or file it was about
    message: str  # the first line of what the tool reported


@dataclass(frozen=True)
class FixSignal:
    subject: str  # the command that failed, then passed
    error: str
    files: list[str] = field(default_factory=list)  # edited in between


@dataclass
class SessionEvidence:
    session_id: str
    tool_calls: int = 0
    files_edited: list[str] = field(default_factory=list)  # basenames, first edit first
    commands: int = 0
    errors: list[ErrorSignal] = field(default_factory=list)
    fixes: list[FixSignal] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)  # "abc1234 subject"


@dataclass(frozen=True)
class EvidenceResult:
    captured: Captured | None
    dropped: list[str]  # detectors of the observations left out for carrying a secret
    skipped: str | None = None  # why nothing was written


def evidence_observations(evidence: SessionEvidence) -> list[str]:
    out: list[str] = []
    if evidence.files_edited:
        files = evidence.files_edited
        listed = ", ".join(files[:MAX_FILES_LISTED])
        more = len(files) - MAX_FILES_LISTED
        out.append(
            f"Edited {len(files)} file(s): {listed}" + (f" (+{more} more)" if more > 0 else "")
        )
    out.append(f"Tool calls: {evidence.tool_calls} ({evidence.commands} shell commands)")
    for commit in evidence.commits[:MAX_SIGNALS]:
        out.append(clip(f"Committed: {commit}", SIGNAL_CHARS))
    for error in evidence.errors[:MAX_SIGNALS]:
        out.append(clip(f"Error ({error.tool} {error.subject}): {error.message}", SIGNAL_CHARS))
    for fix in evidence.fixes[:MAX_SIGNALS]:
        after = f", after editing {', '.join(fix.files[:5])}" if fix.files else ""
        out.append(clip(f"Fixed: {fix.subject} failed ({fix.error}), then passed{after}", 400))
    return out


def evidence_capture(
    *,
    evidence: SessionEvidence,
    project: str | None,
    pre_compact: str | None = None,
    extra: list[str] | None = None,
    source_host: str = CAPTURE_SOURCE_HOST,
) -> EvidenceResult:
    """Store the session's evidence, replacing what an earlier turn stored; with
    `pre_compact` (the compaction's trigger), a `pre-compact-<session id>` summary instead,
    with `extra` observations (where the work stood)."""
    if not pre_compact and evidence.tool_calls < MIN_TOOL_CALLS and not evidence.errors:
        return EvidenceResult(None, [], skipped="too little activity")
    candidates = evidence_observations(evidence)
    if pre_compact:
        candidates = [f"Compaction ({pre_compact}) of a session's history", *candidates]
    candidates += extra or []
    kept: list[str] = []
    dropped: list[str] = []
    for text in candidates:
        detector = first_secret(text)
        if detector is None:
            kept.append(text)
        else:
            dropped.append(detector)
    date = timezone.now().date().isoformat()
    where = f" {project}" if project else ""
    errors = f", {len(evidence.errors)} error(s)" if evidence.errors else ""
    summary = (
        f"{date}{where}: {evidence.tool_calls} tool calls, "
        f"{len(evidence.files_edited)} file(s) edited{errors}"
    )
    tags = [AUTO_CAPTURE_TAG, *([project_tag(project)] if project else [])]
    tags += [f"file:{f}" for f in evidence.files_edited[:MAX_FILE_TAGS]]
    if pre_compact:
        name, type_, title = (
            f"pre-compact-{evidence.session_id}",
            PRE_COMPACT_TYPE,
            f"{date}{where}: before {pre_compact} compaction",
        )
        tags.append("urgency:pre-compact")
    else:
        name, type_, title = f"session-{evidence.session_id}", SESSION_TYPE, summary
    captured = entity_capture(
        name=name,
        type=type_,
        title=title,
        observations=kept,
        tags=tags,
        metadata={"session_id": evidence.session_id},
        replace=True,
        # A session's evidence only grows: its old version says less. What an earlier
        # compaction saved is kept (a few versions): that history is gone from the session.
        keep_history=PRE_COMPACT_HISTORY if pre_compact else 0,
        source_host=source_host,
    )
    return EvidenceResult(captured, dropped)
