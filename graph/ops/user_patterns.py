"""user_patterns: how the user works, read from what memory already holds.

Nothing here is stored; every figure is derived from active entities on each call:
- workSchedule: when memories are written (hour 0-23 and `dayNum` 0-6, 0 = Sunday as in
  JavaScript's getDay), in the machine's local time — memesh runs on the user's machine, and
  "peak hours" in UTC would be someone else's day. Buckets are counted per UTC hour in SQL and
  converted in Python, so the conversion is right on both sides of a DST change.
- toolPreferences: per tool, the number of sessions that used it. A session is an entity whose
  type starts with `session`; its tools come from `tool:<Name>` tags and from a
  `Tools used: Read, Edit(3)` observation.
- focusAreas: entity counts per type, the session and commit records left out (they are
  activity, not subject matter).
- workflow: sessions (as above), commits (type `commit`), minutes per session from
  `metadata.duration_minutes` or a `Duration: 45 min` / `Duration: 1.5h` observation.
- strengths: types (seen at least twice) by average confidence.
- learningAreas: the topic tags of lessons (`lesson_learned`, `lesson`, `mistake`), the
  bookkeeping tags (project:, severity:, source:, error-pattern:, ...) left out.

Like recall, the figures come from the bound project's memories, those with no project and
global ones (graph/ops/kit/scope.py); `cross_project` reads every project's, and `scope` says which.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC
from typing import Literal

from django.db.models import Avg, Count, Q, QuerySet
from django.db.models.functions import TruncHour
from pydantic import Field

from graph.models import Entity, Observation, Status, Tag
from graph.ops.entity_types import LESSON_TYPES
from graph.ops.kit.fields import CROSS_PROJECT_HELP, Output, ProjectId, StrictInput
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation
from graph.ops.kit.scope import UNBOUND, ReadScope, ScopeOutput, read_scope

Category = Literal[
    "workSchedule", "toolPreferences", "focusAreas", "workflow", "strengths", "learningAreas"
]
CATEGORIES: tuple[Category, ...] = (
    "workSchedule",
    "toolPreferences",
    "focusAreas",
    "workflow",
    "strengths",
    "learningAreas",
)
TOP = 10  # entries per list category
STRENGTH_MIN_COUNT = 2  # one memory of a type says nothing about a strength
SESSION_TYPE_PREFIX = "session"
COMMIT_TYPE = "commit"
NOT_A_TOPIC = ("project:", "severity:", "source:", "error-pattern:", "session:", "file:", "tool:")
TOPIC_PREFIX = "topic:"
DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")

_TOOLS_USED = re.compile(r"^\s*tools?(?: used)?\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_TOOL_NAME = re.compile(r"^\s*([A-Za-z_][\w.:-]*)")
_DURATION = re.compile(
    r"duration\s*:\s*(\d+(?:\.\d+)?)\s*(h|hours?|hrs?|m|mins?|minutes?)\b", re.IGNORECASE
)


class UserPatternsInput(StrictInput):
    categories: list[Category] | None = Field(
        default=None,
        max_length=len(CATEGORIES),
        description=(
            "Categories to return: `workSchedule`, `toolPreferences`, `focusAreas`, "
            "`workflow`, `strengths`, `learningAreas`. Omit for all."
        ),
    )
    project: ProjectId | None = Field(
        default=None,
        description=(
            "Read this project's memories (an id, as in `project:<id>`), with those of no "
            "project and global ones. Default: the bound project (the MCP session's, the "
            "CLI's working directory's); over REST none is bound, so a call naming no project "
            "reads every project."
        ),
    )
    cross_project: bool = Field(default=False, description=f"{CROSS_PROJECT_HELP}.")


class HourCount(Output):
    hour: int = Field(description="Hour of the day, 0-23, local time.")
    count: int


class DayCount(Output):
    dayNum: int = Field(description="Day of the week, 0 = Sunday ... 6 = Saturday, local time.")
    count: int


class WorkSchedule(Output):
    hourDistribution: list[HourCount] = Field(description="Busiest hour first.")
    dayDistribution: list[DayCount] = Field(description="Busiest day first.")


class ToolCount(Output):
    tool: str
    sessions: int = Field(description="Sessions that used the tool.")


class TypeCount(Output):
    type: str
    count: int


class Workflow(Output):
    avgSessionMinutes: int = Field(description="Over sessions that recorded a duration; 0 if none.")
    commitsPerSession: float
    totalSessions: int
    totalCommits: int


class Strength(Output):
    type: str
    avgConfidence: float
    count: int


class TagCount(Output):
    tag: str
    count: int


def _excluded_none(v: object) -> bool:
    return v is None


class UserPatternsOutput(Output):
    workSchedule: WorkSchedule | None = Field(default=None, exclude_if=_excluded_none)
    toolPreferences: list[ToolCount] | None = Field(default=None, exclude_if=_excluded_none)
    focusAreas: list[TypeCount] | None = Field(default=None, exclude_if=_excluded_none)
    workflow: Workflow | None = Field(default=None, exclude_if=_excluded_none)
    strengths: list[Strength] | None = Field(default=None, exclude_if=_excluded_none)
    learningAreas: list[TagCount] | None = Field(default=None, exclude_if=_excluded_none)
    scope: ScopeOutput = Field(
        description="Which memories the figures come from: the bound project's, with no "
        "project, global ones, or every project's."
    )


# --- the analyses (each one or two aggregate queries) ---------------------------------------


def _active(scope: ReadScope) -> QuerySet[Entity]:
    """The active entities in `scope`."""
    return scope.apply(Entity.objects.filter(status=Status.ACTIVE))


def _activity() -> Q:
    return Q(type__startswith=SESSION_TYPE_PREFIX) | Q(type=COMMIT_TYPE)


def work_schedule(scope: ReadScope = UNBOUND) -> WorkSchedule:
    hours: Counter[int] = Counter()
    days: Counter[int] = Counter()
    buckets = (
        _active(scope)
        .annotate(bucket=TruncHour("created_at", tzinfo=UTC))
        .values("bucket")
        .annotate(n=Count("id"))
    )
    for row in buckets:
        local = row["bucket"].astimezone()  # the machine's zone, with its DST rules
        hours[local.hour] += row["n"]
        days[(local.weekday() + 1) % 7] += row["n"]  # Python: Monday = 0; reference: Sunday = 0
    return WorkSchedule(
        hourDistribution=[
            HourCount(hour=h, count=n) for h, n in sorted(hours.items(), key=_busiest)
        ],
        dayDistribution=[
            DayCount(dayNum=d, count=n) for d, n in sorted(days.items(), key=_busiest)
        ],
    )


def _busiest(item: tuple[int, int]) -> tuple[int, int]:
    return (-item[1], item[0])


def _sessions(scope: ReadScope) -> list[tuple[int, dict[str, object]]]:
    return list(
        _active(scope).filter(type__startswith=SESSION_TYPE_PREFIX).values_list("id", "metadata")
    )


def _observations_of(ids: list[int]) -> dict[int, list[str]]:
    texts: dict[int, list[str]] = {}
    for entity_id, text in Observation.objects.filter(entity_id__in=ids).values_list(
        "entity_id", "text"
    ):
        texts.setdefault(entity_id, []).append(text)
    return texts


def tool_preferences(
    sessions: list[tuple[int, dict[str, object]]] | None = None,
) -> list[ToolCount]:
    sessions = _sessions(UNBOUND) if sessions is None else sessions
    ids = [sid for sid, _ in sessions]
    used: dict[int, set[str]] = {sid: set() for sid in ids}
    for entity_id, name in Tag.objects.filter(
        entity_id__in=ids, name__startswith="tool:"
    ).values_list("entity_id", "name"):
        tool = name.removeprefix("tool:").strip()
        if tool:
            used[entity_id].add(tool)
    for entity_id, texts in _observations_of(ids).items():
        for text in texts:
            for listing in _TOOLS_USED.findall(text):
                for part in listing.split(","):
                    match = _TOOL_NAME.match(part)
                    if match:
                        used[entity_id].add(match.group(1))
    counts = Counter(tool for tools in used.values() for tool in tools)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].casefold()))
    return [ToolCount(tool=t, sessions=n) for t, n in ranked[:TOP]]


def _minutes(metadata: dict[str, object], texts: list[str]) -> float | None:
    for key in ("duration_minutes", "durationMinutes"):
        value = metadata.get(key) if isinstance(metadata, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
    for text in texts:
        match = _DURATION.search(text)
        if match:
            amount = float(match.group(1))
            return amount * 60 if match.group(2).lower().startswith("h") else amount
    return None


def workflow(
    sessions: list[tuple[int, dict[str, object]]] | None = None, scope: ReadScope = UNBOUND
) -> Workflow:
    sessions = _sessions(scope) if sessions is None else sessions
    texts = _observations_of([sid for sid, _ in sessions])
    durations = [
        m for sid, meta in sessions if (m := _minutes(meta or {}, texts.get(sid, []))) is not None
    ]
    total_commits = _active(scope).filter(type=COMMIT_TYPE).count()
    total_sessions = len(sessions)
    return Workflow(
        avgSessionMinutes=round(sum(durations) / len(durations)) if durations else 0,
        commitsPerSession=round(total_commits / total_sessions, 1) if total_sessions else 0.0,
        totalSessions=total_sessions,
        totalCommits=total_commits,
    )


def focus_areas(scope: ReadScope = UNBOUND) -> list[TypeCount]:
    rows = (
        _active(scope)
        .exclude(_activity())
        .values("type")
        .annotate(n=Count("id"))
        .order_by("-n", "type")[:TOP]
    )
    return [TypeCount(type=r["type"], count=r["n"]) for r in rows]


def strengths(scope: ReadScope = UNBOUND) -> list[Strength]:
    rows = (
        _active(scope)
        .exclude(_activity())
        .values("type")
        .annotate(n=Count("id"), avg=Avg("confidence"))
        .filter(n__gte=STRENGTH_MIN_COUNT)
        .order_by("-avg", "-n", "type")[:TOP]
    )
    return [Strength(type=r["type"], avgConfidence=round(r["avg"], 2), count=r["n"]) for r in rows]


def learning_areas(scope: ReadScope = UNBOUND) -> list[TagCount]:
    lessons = _active(scope).filter(type__in=LESSON_TYPES)
    rows = (
        Tag.objects.filter(entity__in=lessons)
        .values("name")
        .annotate(n=Count("entity", distinct=True))
    )
    counts: Counter[str] = Counter()
    for row in rows:
        name: str = row["name"]
        if name.startswith(NOT_A_TOPIC):
            continue
        topic = name.removeprefix(TOPIC_PREFIX).strip()
        if topic:
            counts[topic] += row["n"]
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [TagCount(tag=t, count=n) for t, n in ranked[:TOP]]


def user_patterns_get(
    categories: list[Category] | None = None, scope: ReadScope = UNBOUND
) -> UserPatternsOutput:
    wanted = set(categories or CATEGORIES)
    sessions = _sessions(scope) if wanted & {"toolPreferences", "workflow"} else []
    return UserPatternsOutput(
        workSchedule=work_schedule(scope) if "workSchedule" in wanted else None,
        toolPreferences=tool_preferences(sessions) if "toolPreferences" in wanted else None,
        focusAreas=focus_areas(scope) if "focusAreas" in wanted else None,
        workflow=workflow(sessions, scope) if "workflow" in wanted else None,
        strengths=strengths(scope) if "strengths" in wanted else None,
        learningAreas=learning_areas(scope) if "learningAreas" in wanted else None,
        scope=scope.output(),
    )


# --- markdown (the MCP rendering) -----------------------------------------------------------


def _hour(h: int) -> str:
    return f"{h:02d}:00"


def render_markdown(result: UserPatternsOutput) -> str:
    """The MCP tool's text: the same figures as the JSON, as a short markdown report."""
    lines = ["# User work patterns", "", f"Scope: {scope_line(result.scope)}"]
    if result.workSchedule is not None:
        ws = result.workSchedule
        lines += ["", "## Work schedule"]
        if ws.hourDistribution:
            peak = ", ".join(f"{_hour(h.hour)} ({h.count})" for h in ws.hourDistribution[:5])
            days = ", ".join(f"{DAY_NAMES[d.dayNum]} ({d.count})" for d in ws.dayDistribution)
            lines += [f"- Peak hours (local time): {peak}", f"- Busiest days: {days}"]
        else:
            lines.append("- No activity recorded yet.")
    if result.toolPreferences is not None:
        lines += ["", "## Tool preferences"]
        lines += [f"- {t.tool}: {t.sessions} sessions" for t in result.toolPreferences] or [
            "- No tool usage recorded in sessions."
        ]
    if result.focusAreas is not None:
        lines += ["", "## Focus areas"]
        lines += [f"- {f.type}: {f.count}" for f in result.focusAreas] or ["- No memories yet."]
    if result.workflow is not None:
        wf = result.workflow
        lines += [
            "",
            "## Workflow",
            f"- Sessions: {wf.totalSessions}, commits: {wf.totalCommits}",
            f"- Commits per session: {wf.commitsPerSession}",
            f"- Average session: {wf.avgSessionMinutes} min"
            if wf.avgSessionMinutes
            else "- Average session: no durations recorded",
        ]
    if result.strengths is not None:
        lines += ["", "## Strengths"]
        lines += [
            f"- {s.type}: average confidence {s.avgConfidence:.2f} over {s.count}"
            for s in result.strengths
        ] or ["- Not enough memories of any type yet."]
    if result.learningAreas is not None:
        lines += ["", "## Learning areas"]
        lines += [f"- {a.tag}: {a.count} lessons" for a in result.learningAreas] or [
            "- No lesson topics yet."
        ]
    return "\n".join(lines)


def scope_line(scope: ScopeOutput) -> str:
    """Which memories the figures come from, as a sentence."""
    if scope.all_projects:
        return "every project's memories"
    return f"project {scope.project}, memories with no project and global ones"


def _user_patterns(data: UserPatternsInput, ctx: CallContext) -> UserPatternsOutput:
    scope = read_scope(project=data.project, tag=None, cross_project=data.cross_project, ctx=ctx)
    return user_patterns_get(data.categories, scope)


USER_PATTERNS = Operation(
    name="user_patterns",
    summary=(
        "Analyze the user's work patterns from existing memory: work schedule (peak "
        "hours/days), tool preferences, focus areas, workflow metrics, knowledge strengths "
        "and learning areas, from the bound project's memories, those with no project and "
        "global ones (`cross_project: true`: every project's). Use at session start for "
        "context about the user."
    ),
    input_model=UserPatternsInput,
    output_model=UserPatternsOutput,
    handler=_user_patterns,
    hints=READ_ONLY,
    # MCP answers in markdown (the reference's MCP form); REST keeps the JSON.
    mcp_text=render_markdown,
    examples=[{}, {"categories": ["workflow", "workSchedule"]}],
    # The reference's route is GET /v1/patterns (categories=a,b in the query string).
    method="GET",
    route="patterns",
)
