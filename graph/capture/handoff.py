"""A project's handoff: where the work was left off, which the briefing shows first
(graph/ops/briefing/, "Where the work was left off").

The Stop hook replaces it with the agent's latest reply that is still long enough once
cleaned (`clean_reply`: code blocks, host markup and markdown furniture removed, whitespace
collapsed). One handoff per exact project (`handoff-<slug>-<hash>`, tagged `project:<id>`),
its text one observation, its session in `metadata.session_id`; the last HISTORY versions stay
in `metadata.replaced_history`. A reply too short to say where things stand, or one carrying a
secret, leaves the old handoff as it was: it may then describe an earlier question, which is
why the briefing says to verify it against the files.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

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

HANDOFF_TYPE = "handoff"
MIN_HANDOFF_CHARS = 160
MAX_HANDOFF_CHARS = 4000
HISTORY = 3

_CODE_BLOCK = re.compile(r"(`{3,}|~{3,})[^\n]*\n.*?(?:\n\1[^\n]*|\Z)", re.DOTALL)
# Markup the host puts inside messages (reminders, command echoes); never the agent's words.
_HOST_MARKUP = re.compile(
    r"<(system-reminder|command-[\w-]+|local-command-[\w-]+)>.*?</\1>", re.DOTALL
)
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)
_HEADING_MARKS = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
# Bold markers go, as Markdown reads them: `**` may sit inside a word, `__` only at a word's
# edges (https://spec.commonmark.org/0.31.2/#emphasis-and-strong-emphasis), so an identifier's
# underscores (`mcp__memesh__remember`) stay. Stricter than Markdown, a `__` joined to a name
# by `.`, `/` or `-` is a name's too (`__init__.py`, `obj.__dict__`), and bold text holds no
# marker of its own kind. An inline code span is kept whole (group 1).
_EMPHASIS = re.compile(
    r"(`+)[^`\n]+?\1"
    r"|\*\*(?=\S)((?:(?!\*\*).)+?)(?<=\S)\*\*"
    r"|(?<![\w\\./-])__(?=\S)((?:(?!__).)+?)(?<=\S)__(?!\w|[./-]\w)"
)
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")
_SLUG = re.compile(r"[^a-z0-9]+")


def clean_reply(text: str) -> str:
    """An assistant reply as a handoff reads it (the module docstring says what goes)."""
    text = _HOST_MARKUP.sub(" ", text)
    text = _CODE_BLOCK.sub(" ", text)
    text = _TABLE_RULE.sub("", text)
    text = _HEADING_MARKS.sub("", text)
    text = _EMPHASIS.sub(_unbolded, text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.splitlines()]
    text = _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
    return clip(text, MAX_HANDOFF_CHARS)


def _unbolded(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return match.group(0)  # a code span, as written
    return match.group(2) if match.group(2) is not None else match.group(3)


def handoff_name(project: str) -> str:
    slug = _SLUG.sub("-", project.lower()).strip("-")[:60] or "project"
    digest = hashlib.sha256(project.encode()).hexdigest()[:8]
    return f"handoff-{slug}-{digest}"


@dataclass(frozen=True)
class HandoffResult:
    captured: Captured | None
    skipped: str | None = None  # why the old handoff stays
    detector: str | None = None  # the secret detector, when that is why


def pick_reply(replies: list[str]) -> str | None:
    """The latest reply that is long enough once cleaned, cleaned; None when none is."""
    for reply in reversed(replies):
        cleaned = clean_reply(reply)
        if len(cleaned) >= MIN_HANDOFF_CHARS:
            return cleaned
    return None


def handoff_replace(
    *,
    project: str,
    replies: list[str],
    session_id: str | None,
    source_host: str = CAPTURE_SOURCE_HOST,
) -> HandoffResult:
    """Replace the project's handoff with the latest long-enough reply of `replies` (oldest
    first)."""
    text = pick_reply(replies)
    if text is None:
        return HandoffResult(None, skipped=f"no reply of {MIN_HANDOFF_CHARS}+ characters")
    detector = first_secret(text)
    if detector is not None:
        return HandoffResult(None, skipped="the reply carries a secret", detector=detector)
    metadata: dict[str, object] = {"handoff": {"at": timezone.now().isoformat()}}
    if session_id:
        metadata["session_id"] = session_id
    captured = entity_capture(
        name=handoff_name(project),
        type=HANDOFF_TYPE,
        observations=[text],
        tags=[AUTO_CAPTURE_TAG, project_tag(project)],
        metadata=metadata,
        replace=True,
        keep_history=HISTORY,
        source_host=source_host,
    )
    return HandoffResult(captured)
