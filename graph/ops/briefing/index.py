"""`memesh briefing --index`: the project's durable-memory index alone, with the agent guide's
own caps (40 lines, 3072 bytes) instead of a share of the block's budget."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from graph.models import Entity
from graph.ops.briefing.lines import index_line
from graph.ops.briefing.render import clean, wrap
from graph.ops.briefing.schema import BriefingIndexOutput
from graph.ops.briefing.selection import durable, select_candidates
from graph.project import project_line
from graph.project_tags import project_tag

MAX_INDEX = 40  # the agent guide's index cap (its byte cap is subsumed by the shared budget)
# `memesh briefing --index` alone: the agent guide's "own 40-line / 3072-byte caps", counted
# over the memory lines (UTF-8, one newline each); the fence and the "more" note are outside.
MAX_INDEX_BYTES = 3072


def briefing_index(project: str, *, now: datetime | None = None) -> BriefingIndexOutput:
    """The project's durable memories (decisions, lessons, knowledge: not the handoff, not
    routine activity), newest first, trusted and active only, at most MAX_INDEX lines and
    MAX_INDEX_BYTES bytes of them; a last line says when there are more."""
    now = now or timezone.now()
    tagged = Entity.objects.filter(tags__name=project_tag(project))
    # One more than the cap: whether the window is the whole set or cut by it.
    candidates = select_candidates(durable(tagged), MAX_INDEX + 1, set(), now=now)
    lines: list[str] = []
    used = 0
    for candidate in candidates[:MAX_INDEX]:
        line = index_line(candidate, now)
        cost = len(line.encode()) + 1
        if used + cost > MAX_INDEX_BYTES:
            break
        lines.append(line)
        used += cost
    truncated = len(lines) < len(candidates)
    if not lines:
        return BriefingIndexOutput(project=project, text="", entityCount=0, truncated=False)
    body = [
        clean(project_line(project), 300),
        "",
        "Index of durable memories (newest first; a recent window, not the whole graph)",
        *lines,
    ]
    if truncated:
        body.append("(more durable memories exist than this index lists: use recall to find them)")
    return BriefingIndexOutput(
        project=project, text=wrap(body), entityCount=len(lines), truncated=truncated
    )
