"""Dreams that run when due, without a person remembering to: the one rule deciding whether a
dream pass is due, and queueing it for the worker. Two callers ask: the Stop hook after every
agent turn (trigger "stop-hook") and the worker's periodic schedule (trigger "schedule",
dream/tasks.py). Neither runs the dream itself: a due dream is a `dream_run` TaskRun
queued through `task_run_enqueue`, which the worker runs (or runs when it next starts).

A dream is due when all of these hold, checked in this order (the first that fails is the
`reason`):
1. an LLM is configured (the dreamer needs one; without one nothing is queued or recorded);
2. no dream ran, or was queued, in the last THROTTLE (24 h) — whatever its outcome: a failing
   provider is not asked again every turn. "A dream" is a `dream_run` task run of any trigger,
   or a digest proposal (the trace a synchronous `memesh dream run` leaves);
3. at least MIN_EPISODIC (10) active episodic memories (commits, session notes: the dreamer's
   input) were written since that dream, inside the dreamer's window (14 days): fewer would
   not fill the clusters a digest is made of.

The decision is read without a transaction (the Stop hook asks after every turn and must not
wait for a writer); a due dream is then decided again and queued inside one transaction, which
SQLite begins IMMEDIATE (core/db), so two callers at once queue one dream, not two.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.errors import OperationFailed
from dream.passes import EPISODIC_TYPES, llm_configured
from graph.models import Entity, Status
from proposals.models import DREAM_RUN_KIND, Proposal, ProposalKind, TaskRun
from proposals.schemas import DEFAULT_WINDOW_DAYS

MIN_EPISODIC = 10
THROTTLE = timedelta(hours=24)
TRIGGER_STOP_HOOK = "stop-hook"
TRIGGER_SCHEDULE = "schedule"


@dataclass(frozen=True)
class DreamDue:
    """The answer: whether a dream was queued (`task_id` then names its TaskRun), and why."""

    enqueued: bool
    due: bool
    reason: str
    trigger: str
    task_id: str | None = None
    episodic_since: int = 0  # episodic memories since the last dream, inside the window
    last_dream_at: datetime | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "enqueued": self.enqueued,
            "due": self.due,
            "reason": self.reason,
            "trigger": self.trigger,
            "taskId": self.task_id,
            "episodicSince": self.episodic_since,
            "lastDreamAt": self.last_dream_at.isoformat() if self.last_dream_at else None,
        }


def last_dream_at() -> datetime | None:
    """When the last dream ran or was queued: the newest dream_run TaskRun or digest proposal."""
    times = [
        TaskRun.objects.filter(kind=DREAM_RUN_KIND).aggregate(at=Max("created_at"))["at"],
        Proposal.objects.filter(kind=ProposalKind.DIGEST).aggregate(at=Max("created_at"))["at"],
    ]
    found = [t for t in times if t is not None]
    return max(found) if found else None


def _hours(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:.1f} h" if hours < 10 else f"{hours:.0f} h"


def dream_due(*, trigger: str = "", now: datetime | None = None) -> DreamDue:
    """Whether a dream is due now; nothing is written (`memesh status` and the review page
    show it too)."""
    now = now or timezone.now()
    try:
        configured = llm_configured()
    except OperationFailed as exc:  # config.json unreadable: the dreamer could not run either
        return DreamDue(False, False, exc.message, trigger)
    if not configured:
        return DreamDue(False, False, "no LLM is configured", trigger)
    last = last_dream_at()
    if last is not None and now - last < THROTTLE:
        return DreamDue(
            False,
            False,
            f"the last dream was {_hours(now - last)} ago (at most one every {_hours(THROTTLE)})",
            trigger,
            last_dream_at=last,
        )
    since = now - timedelta(days=DEFAULT_WINDOW_DAYS)
    window = f"in the last {DEFAULT_WINDOW_DAYS} days"
    if last is not None and last > since:
        since, window = last, "since the last dream"
    episodic = Entity.objects.filter(
        status=Status.ACTIVE, type__in=EPISODIC_TYPES, created_at__gt=since
    ).count()
    if episodic < MIN_EPISODIC:
        return DreamDue(
            False,
            False,
            f"{episodic} episodic memories {window} (a dream needs {MIN_EPISODIC})",
            trigger,
            episodic_since=episodic,
            last_dream_at=last,
        )
    return DreamDue(
        False,
        True,
        f"{episodic} episodic memories {window}",
        trigger,
        episodic_since=episodic,
        last_dream_at=last,
    )


def enqueue_dream_if_due(*, trigger: str) -> DreamDue:
    """Queue a dream pass for the worker when one is due (never run here); the answer says
    whether it was queued, its TaskRun id, or why not."""
    decision = dream_due(trigger=trigger)
    if not decision.due:
        return decision
    from dream.tasks import task_run_enqueue  # imports Celery: only when queueing

    with transaction.atomic():
        decision = dream_due(trigger=trigger)  # again, now holding the write lock
        if not decision.due:
            return decision
        queued = task_run_enqueue(kind=DREAM_RUN_KIND, params={"trigger": trigger})
    return DreamDue(
        True,
        True,
        decision.reason,
        trigger,
        task_id=queued.task_id,
        episodic_since=decision.episodic_since,
        last_dream_at=decision.last_dream_at,
    )
