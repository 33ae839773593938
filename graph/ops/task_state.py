"""task_state: where the work on a project stands (goal / next / blocked / done), one per project.

Stored as the MetaEntry `task_state:<project>` with value
`{"goal"?, "next"?, "blocked"?, "done"?, "updated_at"}` — only the fields that hold a value.
`updated_at` moves only when a field actually changes, so it stays an honest answer to "how old
is this thinking": re-stating a recorded value writes nothing. Whether a state may be shown as
current is judged here and only here (`task_state_age`): the briefing and `memesh task` both ask.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from django.db import transaction
from django.utils import timezone
from pydantic import Field

from core.errors import InvalidInput
from graph.models import MetaEntry
from graph.ops.kit.fields import Output, StrictInput
from graph.ops.kit.operation import CallContext, Operation, ToolHints
from graph.project_tags import project_of

FieldName = Literal["goal", "next", "blocked", "done"]
FIELDS: tuple[FieldName, ...] = ("goal", "next", "blocked", "done")
Freshness = Literal["fresh", "stale", "unknown"]
MAX_VALUE_CHARS = 300  # after whitespace collapsing; longer values end in "…"
MAX_INPUT_CHARS = 10_000  # what a call may send; anything past 300 is cut anyway
MAX_PROJECT_CHARS = 200
KEY_PREFIX = "task_state:"
_KEY_MAX = MetaEntry._meta.get_field("key").max_length or 100
# The agent guide: a state stated more than 72 hours ago is never shown as current.
STALE_AFTER = timedelta(hours=72)
# Clocks of different hosts disagree a little; a time further ahead than this is implausible.
CLOCK_SKEW = timedelta(minutes=5)
EARLIEST_PLAUSIBLE = datetime(2000, 1, 1, tzinfo=UTC)

StateValue = Annotated[str, Field(max_length=MAX_INPUT_CHARS)]


def _field(description: str) -> Any:
    return Field(
        default=None,
        description=(
            f"{description}. Whitespace is collapsed and values past {MAX_VALUE_CHARS} "
            "characters end in `…`. An empty string clears the field; omitting it leaves "
            "it as it is."
        ),
    )


class TaskStateInput(StrictInput):
    project: Annotated[str, Field(min_length=1, max_length=MAX_PROJECT_CHARS)] | None = Field(
        default=None,
        description="Project id (default: the caller's current project).",
    )
    goal: StateValue | None = _field("What this work is FOR: the outcome being aimed at")
    next: StateValue | None = _field("The next concrete step")
    blocked: StateValue | None = _field("What is standing in the way")
    done: StateValue | None = _field("What was just finished")


class TaskState(Output):
    goal: str | None = Field(default=None, exclude_if=lambda v: v is None)
    next: str | None = Field(default=None, exclude_if=lambda v: v is None)
    blocked: str | None = Field(default=None, exclude_if=lambda v: v is None)
    done: str | None = Field(default=None, exclude_if=lambda v: v is None)
    updated_at: str = Field(description="ISO 8601 time (UTC) a field last changed.")


class TaskStateOutput(Output):
    project: str
    state: TaskState | None = Field(description="The recorded state; null when none.")
    changed: list[FieldName] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description=(
            "Writes only: the fields that actually differed. `[]` means the call re-stated "
            "what was recorded and nothing was written."
        ),
    )


def clean_value(value: str) -> str:
    """Whitespace collapsed to single spaces, capped at 300 characters (the last one `…`)."""
    text = " ".join(value.split())
    if len(text) > MAX_VALUE_CHARS:
        text = text[: MAX_VALUE_CHARS - 1].rstrip() + "…"
    return text


def state_key(project: str) -> str:
    key = KEY_PREFIX + project
    if len(key) <= _KEY_MAX:
        return key
    # MetaEntry keys are short; a long project id keeps a readable head and a hash for identity.
    digest = hashlib.sha256(project.encode()).hexdigest()[:16]
    return f"{key[: _KEY_MAX - len(digest) - 1]}#{digest}"


def _timestamp(when: datetime) -> str:
    """The reference's form: `2026-08-16T02:41:00.000Z`."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def read_task_state(project: str) -> dict[str, str] | None:
    """The project's state — its non-empty fields plus `updated_at` — or None when none."""
    entry = MetaEntry.objects.filter(key=state_key(project)).first()
    if entry is None or not isinstance(entry.value, dict):
        return None
    state = {k: v for k, v in entry.value.items() if k in (*FIELDS, "updated_at") and v}
    return state if any(k in state for k in FIELDS) else None


@dataclass(frozen=True, slots=True)
class StateAge:
    """When a state was stated (None: the time is missing or implausible) and whether it may
    be shown as current at `now`."""

    stated: datetime | None
    now: datetime

    @property
    def freshness(self) -> Freshness:
        """`fresh`, `stale` (stated more than 72 hours ago) or `unknown` (no plausible time).
        Only `fresh` may be shown as current."""
        if self.stated is None:
            return "unknown"
        return "stale" if self.now - self.stated > STALE_AFTER else "fresh"


def task_state_age(state: Mapping[str, Any], now: datetime) -> StateAge:
    """How old `state` is at `now`: the one freshness rule of a task state."""
    return StateAge(task_state_time(state, now), now)


def task_state_freshness(
    state: dict[str, str] | None, now: datetime | None = None
) -> Freshness | None:
    """task_state_age's verdict; None when there is no state."""
    if state is None:
        return None
    return task_state_age(state, now or timezone.now()).freshness


def task_state_time(state: Mapping[str, Any], now: datetime) -> datetime | None:
    """When the state was stated, or None when that time is missing or implausible: no zone
    (no way to know the age), before 2000, or ahead of the clock by more than a skew."""
    raw = state.get("updated_at")
    if not isinstance(raw, str):
        return None
    try:
        when = datetime.fromisoformat(raw.strip())
    except ValueError:
        return None
    if when.tzinfo is None or when < EARLIEST_PLAUSIBLE or when > now + CLOCK_SKEW:
        return None
    return when


def resolve_project(requested: str | None, ctx: CallContext) -> str:
    # `project:x` means project x, as in remember and learn: the tag prefix is not doubled.
    project = project_of(requested or "") or ctx.project
    if not project:
        raise InvalidInput(
            "No project: pass `project`; this caller has no current project", field="project"
        )
    return project


@transaction.atomic
def task_state_update(
    *, project: str, updates: Mapping[str, str]
) -> tuple[dict[str, str] | None, list[FieldName]]:
    """Apply `updates` (field -> new value, "" clears) and return (state, changed fields).

    Nothing is written when no field differs. A state whose last field is cleared is removed.
    """
    key = state_key(project)
    entry = MetaEntry.objects.filter(key=key).first()
    current: dict[str, str] = {}
    if entry is not None and isinstance(entry.value, dict):
        current = {k: v for k, v in entry.value.items() if k in FIELDS and v}
    merged = dict(current)
    changed: list[FieldName] = []
    for name in FIELDS:  # in the reference's order, whatever order the caller used
        if name not in updates:
            continue
        cleaned = clean_value(updates[name])
        if cleaned == current.get(name, ""):
            continue
        changed.append(name)
        if cleaned:
            merged[name] = cleaned
        else:
            merged.pop(name, None)
    if not changed:
        return read_task_state(project), []
    if not merged:
        MetaEntry.objects.filter(key=key).delete()
        return None, changed
    now = timezone.now()
    value = {**merged, "updated_at": _timestamp(now)}
    MetaEntry.objects.update_or_create(key=key, defaults={"value": value, "updated_at": now})
    return value, changed


def task_state(data: TaskStateInput, ctx: CallContext) -> TaskStateOutput:
    project = resolve_project(data.project, ctx)
    updates: dict[str, str] = {
        name: getattr(data, name) for name in FIELDS if getattr(data, name) is not None
    }
    if not updates:
        state = read_task_state(project)
        return TaskStateOutput(project=project, state=TaskState(**state) if state else None)
    new_state, changed = task_state_update(project=project, updates=updates)
    return TaskStateOutput(
        project=project,
        state=TaskState(**new_state) if new_state else None,
        changed=changed,
    )


TASK_STATE = Operation(
    name="task_state",
    summary=(
        "Read or update where the work on a project stands: goal, next step, blocker, what was "
        "just done. No fields reads; any field present writes; an empty string clears. Record "
        "only what the user actually stated — never infer it from files or commands."
    ),
    input_model=TaskStateInput,
    output_model=TaskStateOutput,
    handler=task_state,
    hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    # destructive: an empty string clears a field.
    examples=[
        {"project": "myproject"},
        {
            "project": "myproject",
            "goal": "Cut session-start injection below 700 tokens",
            "next": "Measure against the real graph before and after",
        },
        {"project": "myproject", "blocked": ""},
    ],
    rest=False,  # the reference lists no /v1/task_state route
)
