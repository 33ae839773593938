"""A git commit made in an agent session, captured as a `commit` memory: what `memesh why`
(graph/ops/why.py) joins a file's history to.

The entity: type `commit`, named `commit-<first 7 hex>` (a longer prefix when another commit
already holds that name), `metadata.hash` the full hash, `metadata.session_id` the session it
was made in (why walks it to the session's other memories), `metadata.files` the paths it
touched (at most MAX_FILES), tagged `project:<id>` and `file:<basename>` for each touched file
(at most MAX_FILE_TAGS), and a fact sourced `git:<full hash>` (docs/trust.md: the commit is where
it can be checked). Its observations: the subject, the body's first paragraphs, the
branch, the diff stats and the touched files. The commit's facts are read by the caller (the
hook runs git: graph/capture/git_history.py); this service only stores them.

A message or a path carrying a secret drops the whole capture. The same commit captured twice
changes nothing (its observations are already stored; the first session id is kept).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from graph.capture.capture import (
    AUTO_CAPTURE_TAG,
    CAPTURE_SOURCE_HOST,
    Captured,
    entity_capture,
    first_secret,
)
from graph.capture.clipping import clip
from graph.models import Entity
from graph.project_tags import project_tag

COMMIT_TYPE = "commit"
MAX_FILES = 50
MAX_FILE_TAGS = 30
MAX_BODY_PARAGRAPHS = 3
MAX_BODY_CHARS = 1000
FILES_LISTED = 20


@dataclass(frozen=True)
class CommitFacts:
    hash: str  # full, lower-case hex
    subject: str
    body: str = ""
    branch: str | None = None
    files: list[str] = field(default_factory=list)  # repository-relative paths
    insertions: int = 0
    deletions: int = 0


@dataclass(frozen=True)
class CommitDropped:
    detector: str  # the secret detector that fired


def _name_for(commit_hash: str) -> str:
    """`commit-<7 hex>`, or a longer prefix when that name belongs to another commit."""
    for length in (7, 12):
        name = f"commit-{commit_hash[:length]}"
        held = Entity.objects.filter(name=name).values_list("metadata", flat=True).first()
        if held is None or (isinstance(held, dict) and held.get("hash") == commit_hash):
            return name
        # Held by another commit, or by a hand-made memory with no hash: leave it be.
    return f"commit-{commit_hash}"


def diff_stats(facts: CommitFacts) -> str:
    n = len(facts.files)
    return (
        f"{n} file{'s' if n != 1 else ''} changed, {facts.insertions} insertion"
        f"{'s' if facts.insertions != 1 else ''}(+), {facts.deletions} deletion"
        f"{'s' if facts.deletions != 1 else ''}(-)"
    )


def commit_capture(
    *,
    facts: CommitFacts,
    project: str,
    session_id: str | None,
    source_host: str = CAPTURE_SOURCE_HOST,
) -> Captured | CommitDropped:
    """Store the commit (the module docstring has the shape), stamped `source_host` when new."""
    detector = first_secret(facts.subject, facts.body, *facts.files, facts.branch)
    if detector is not None:
        return CommitDropped(detector)
    paragraphs = [p.strip() for p in facts.body.split("\n\n") if p.strip()]
    observations = [
        facts.subject,
        *(clip(p, MAX_BODY_CHARS) for p in paragraphs[:MAX_BODY_PARAGRAPHS]),
    ]
    if facts.branch:
        observations.append(f"Branch: {facts.branch}")
    observations.append(f"Diff stats: {diff_stats(facts)}")
    if facts.files:
        listed = ", ".join(facts.files[:FILES_LISTED])
        more = len(facts.files) - FILES_LISTED
        observations.append(f"Files: {listed}" + (f" (+{more} more)" if more > 0 else ""))
    basenames = dict.fromkeys(posixpath.basename(f) for f in facts.files if f)
    tags = [
        AUTO_CAPTURE_TAG,
        project_tag(project),
        *(f"file:{b}" for b in list(basenames)[:MAX_FILE_TAGS] if b),
    ]
    name = _name_for(facts.hash)
    existing = Entity.objects.filter(name=name).values_list("metadata", flat=True).first()
    first_session = existing.get("session_id") if isinstance(existing, dict) else None
    metadata: dict[str, object] = {
        "hash": facts.hash,
        "files": facts.files[:MAX_FILES],
        "stats": {
            "files": len(facts.files),
            "insertions": facts.insertions,
            "deletions": facts.deletions,
        },
    }
    if facts.branch:
        metadata["branch"] = facts.branch
    if first_session or session_id:
        metadata["session_id"] = first_session or session_id
    return entity_capture(
        name=name,
        type=COMMIT_TYPE,
        title=facts.subject,
        observations=observations,
        tags=tags,
        metadata=metadata,
        # Checkable where it was made: a new commit memory is a fact (docs/trust.md).
        source=f"git:{facts.hash}",
        source_host=source_host,
    )
