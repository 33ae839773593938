"""One briefing line per memory: its label, a decision's reason, its age and its trust marks.

Hypotheses and stale facts are marked on their line — "hypothesis, unconfirmed since <date>",
"unconfirmed since <date>: re-check before relying" — and a decision untouched for 30 days says
so. The line's shape and the fence are render.py's.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from graph.ops.briefing.render import MAX_REASON_CHARS, clean, memory_line
from graph.ops.briefing.selection import DECISION, Candidate
from graph.project_tags import is_project_tag, project_of
from graph.storage.documents import EntityDocument

UNCONFIRMED_AFTER_DAYS = 30
MAX_INDEX_LABEL_CHARS = 80

_REASON_PREFIXES = ("why:", "reason:", "because")


def label(doc: EntityDocument, limit: int | None = None) -> str:
    """Title, else the first observation that is not a stated reason, else the name."""
    for text in (doc.title, *[o for o in doc.observations if not _is_reason(o)], doc.name):
        if text and text.strip():
            return clean(text) if limit is None else clean(text, limit)
    return clean(doc.name)


def _is_reason(observation: str) -> bool:
    return observation.strip().lower().startswith(_REASON_PREFIXES)


def decision_reason(doc: EntityDocument) -> str | None:
    """The recorded reason: `metadata.why`, else an observation starting Why:/Reason:/Because."""
    why = doc.metadata.get("why") if isinstance(doc.metadata, dict) else None
    if isinstance(why, str) and why.strip():
        return why.strip()
    for observation in doc.observations:
        text = observation.strip()
        if _is_reason(text):
            for prefix in ("why:", "reason:"):
                if text.lower().startswith(prefix):
                    text = text[len(prefix) :].strip()
            if text:
                return text
    return None


def decision_line(candidate: Candidate, now: datetime, label_limit: int | None = None) -> str:
    reason = decision_reason(candidate.doc)
    suffix = f"— why: {clean(reason, MAX_REASON_CHARS)}" if reason else "— no reason recorded"
    days = (now - candidate.touched).days
    flagged = days >= UNCONFIRMED_AFTER_DAYS
    if flagged:
        suffix += f" — unconfirmed {days} days: re-check before relying"
    if candidate.mark and not (flagged and candidate.stale_fact):
        # A stale fact the guide's flag already calls unconfirmed is not flagged twice.
        suffix += f" — {candidate.mark}"
    return memory_line(
        candidate.doc.type, label(candidate.doc, label_limit), candidate.doc.id, suffix
    )


def marked(candidate: Candidate, before: str = "") -> str:
    """A line's suffix: `before` (an age, a project), then the trust mark."""
    mark = f"— {candidate.mark}" if candidate.mark else ""
    return " ".join(part for part in (before, mark) if part)


def plain_line(candidate: Candidate) -> str:
    return memory_line(
        candidate.doc.type, label(candidate.doc), candidate.doc.id, marked(candidate)
    )


def index_line(candidate: Candidate, now: datetime) -> str:
    """An index line: a short label; a decision keeps its reason and its unconfirmed flag (the
    agent guide: the durable-memory index shows each decision with its reason)."""
    if candidate.doc.type == DECISION:
        return decision_line(candidate, now, MAX_INDEX_LABEL_CHARS)
    short = label(candidate.doc, MAX_INDEX_LABEL_CHARS)
    return memory_line(candidate.doc.type, short, candidate.doc.id, marked(candidate))


def projects_of(doc: EntityDocument) -> list[str]:
    return [project_of(t) for t in doc.tags if is_project_tag(t)]


def age(delta: timedelta) -> str:
    hours = int(delta.total_seconds() // 3600)
    if hours < 1:
        return "less than an hour ago"
    if hours < 48:
        return f"{hours} h ago"
    return f"{hours // 24} days ago"
