"""The briefing's sections in priority order, and the block assembled from them.

A project's sections: its latest handoff, the task state, decisions (with their reasons), up to
five lessons, knowledge and recent activity; `standard` adds an index of durable memories. Then
the shared ones: up to five memories with no project, and at `full` other projects' recent
activity and global memory. Expired memories (`ttl_hours` run out) are left out.

A task state that is not fresh (graph/ops/task_state.py judges it) is never shown as current at
any level: one line points at `memesh task` instead, because a stale "next step" read as fact is
a wrong instruction with nothing to contradict it.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from graph.models import Entity, Namespace
from graph.ops.briefing.index import MAX_INDEX
from graph.ops.briefing.level import DEFAULT_LEVEL, Level
from graph.ops.briefing.lines import (
    age,
    decision_line,
    index_line,
    label,
    marked,
    plain_line,
    projects_of,
)
from graph.ops.briefing.render import Section, clean, fit, memory_line, wrap
from graph.ops.briefing.schema import BriefingOutput, briefing_scope
from graph.ops.briefing.selection import (
    DECISION,
    HANDOFF,
    LESSON,
    aware,
    durable,
    select_candidates,
)
from graph.ops.kit.fields import ACTIVITY_TYPES
from graph.ops.task_state import read_task_state, task_state_age
from graph.project import project_line
from graph.project_tags import PROJECT_TAG_PREFIX, project_tag

MAX_DECISIONS = 8
MAX_LESSONS = 5  # the agent guide: "up to five project lessons are selected separately"
MAX_KNOWLEDGE = 8
MAX_ACTIVITY = 5
MAX_NO_PROJECT = 5  # "up to five of your memories that belong to no project"
MAX_OTHER_PROJECTS = 5
MAX_GLOBAL = 5
MAX_HANDOFF_CHARS = 400


def _task_state_section(project: str, level: Level, now: datetime) -> tuple[Section, bool]:
    """(section, shown as current). Fresh fields only at standard/full; a stale or
    unknown-age state gets one flag line at every level."""
    section = Section("Task state", counts=False)
    state = read_task_state(project)
    if not state:
        return section, False
    fields: list[tuple[str, str]] = []
    for key in ("goal", "next", "blocked", "done"):
        value = state.get(key)
        if isinstance(value, str) and value.strip():
            fields.append((key, value))
    if not fields:
        return section, False
    stated = task_state_age(state, now)
    if stated.stated is None:
        section.lines.append(
            "- A task state is stored but its time is missing or unreadable, so it is not "
            "current: run `memesh task` to see it, and re-state what still holds."
        )
        return section, False
    if stated.freshness != "fresh":
        section.lines.append(
            f"- The task state was stated {age(now - stated.stated)} and is not current: run "
            "`memesh task` to see it, and re-state what still holds."
        )
        return section, False
    if level == "minimal":
        return section, False
    section.heading = f"Task state (stated {age(now - stated.stated)})"
    section.lines.extend(f"- {key}: {clean(value, 300)}" for key, value in fields)
    return section, True


def _handoff_section(tagged: QuerySet[Entity], skip: set[int], now: datetime) -> Section:
    section = Section("Where the work was left off (verify against the files before acting)")
    for candidate in select_candidates(tagged.filter(type=HANDOFF), 1, skip, now=now):
        when = age(now - aware(datetime.fromisoformat(candidate.doc.updated_at)))
        text = label(candidate.doc, MAX_HANDOFF_CHARS)
        suffix = marked(candidate, f"({when})")
        section.lines.append(memory_line(HANDOFF, text, candidate.doc.id, suffix))
    return section


def _project_sections(
    project: str, level: Level, now: datetime, skip: set[int]
) -> tuple[list[Section], bool]:
    tagged = Entity.objects.filter(tags__name=project_tag(project))
    handoff = _handoff_section(tagged, skip, now)
    task, fresh = _task_state_section(project, level, now)
    decisions = Section("Decisions and direction")
    decisions.lines = [
        decision_line(c, now)
        for c in select_candidates(tagged.filter(type=DECISION), MAX_DECISIONS, skip, now=now)
    ]
    lessons = Section("Lessons (do not repeat)")
    lessons.lines = [
        plain_line(c)
        for c in select_candidates(tagged.filter(type=LESSON), MAX_LESSONS, skip, now=now)
    ]
    knowledge = Section("Knowledge")
    kept = durable(tagged)
    knowledge.lines = [
        plain_line(c)
        for c in select_candidates(
            kept.exclude(type__in=[DECISION, LESSON]), MAX_KNOWLEDGE, skip, now=now
        )
    ]
    activity = Section("Recent activity")
    activity.lines = [
        plain_line(c)
        for c in select_candidates(
            tagged.filter(type__in=ACTIVITY_TYPES), MAX_ACTIVITY, skip, now=now
        )
    ]
    sections = [handoff, task, decisions, lessons, knowledge, activity]
    if level != "minimal":
        # Last in priority: a crowded block shows fewer index lines, never fewer decisions.
        index = Section("Index of other durable memories (a recent window: recall finds more)")
        index.lines = [
            index_line(c, now) for c in select_candidates(kept, MAX_INDEX, skip, now=now)
        ]
        sections.append(index)
    return sections, fresh


def _shared_sections(
    project: str | None, level: Level, skip: set[int], now: datetime
) -> list[Section]:
    no_project = Section("Memories with no project")
    loose = Entity.objects.exclude(namespace=Namespace.GLOBAL).exclude(
        tags__name__startswith=PROJECT_TAG_PREFIX
    )
    no_project.lines = [
        plain_line(c) for c in select_candidates(loose, MAX_NO_PROJECT, skip, now=now)
    ]
    sections = [no_project]
    if level == "full":
        others = Entity.objects.filter(tags__name__startswith=PROJECT_TAG_PREFIX)
        if project is not None:
            others = others.exclude(tags__name=project_tag(project))
        other = Section("Other projects — recent activity")
        for c in select_candidates(others.distinct(), MAX_OTHER_PROJECTS, skip, now=now):
            where = ", ".join(clean(p, 60) for p in projects_of(c.doc))
            suffix = marked(c, f"({where})")
            other.lines.append(memory_line(c.doc.type, label(c.doc), c.doc.id, suffix))
        global_ = Section("Global memory")
        everywhere = Entity.objects.filter(namespace=Namespace.GLOBAL)
        global_.lines = [
            plain_line(c) for c in select_candidates(everywhere, MAX_GLOBAL, skip, now=now)
        ]
        sections.extend([other, global_])
    return sections


def build_briefing(
    project: str | None,
    level: Level = DEFAULT_LEVEL,
    *,
    now: datetime | None = None,
    deliveries: Section | None = None,
) -> BriefingOutput:
    """The briefing of `project` (None: the caller has no project; only shared memories).
    `deliveries`: a recipient's unfetched messages, listed first (graph/ops/kit/
    delivery_source.py)."""
    now = now or timezone.now()
    skip: set[int] = set()
    project_sections: list[Section] = [deliveries] if deliveries is not None else []
    fresh = False
    if project is not None:
        sections_of_project, fresh = _project_sections(project, level, now, skip)
        project_sections += sections_of_project
        if not any(section.lines for section in project_sections):
            # The reference: "text is empty when the project has no injectable memories yet" —
            # memories from elsewhere do not make an empty project look briefed.
            return _empty(project, level)
    shared = _shared_sections(project, level, skip, now)
    sections = [*project_sections, *shared]
    if not any(section.lines for section in sections):
        return _empty(project, level)
    head = [clean(project_line(project), 300)] if project is not None else []
    rendered = fit(sections, head=head)
    # Fresh fields can still be cut by the budget in a crowded block: report what is shown.
    shown_fresh = fresh and any(
        not s.counts and s.heading in rendered.body_lines
        for s in project_sections
        if s is not deliveries
    )
    return BriefingOutput(
        project=project,
        text=wrap(rendered.body_lines),
        entityCount=rendered.memory_lines,
        hasTaskState=shown_fresh,
        level=level,
        scope=briefing_scope(project, level),
    )


def _empty(project: str | None, level: Level) -> BriefingOutput:
    return BriefingOutput(
        project=project,
        text="",
        entityCount=0,
        hasTaskState=False,
        level=level,
        scope=briefing_scope(project, level),
    )
