"""The dreamer's auto-trigger: a dream pass queued when one is due, never run inline (the
Stop hook calls this after every turn; the dream itself runs on the worker).

Due when all of these hold, checked in this order (the cheapest first):
1. an LLM provider is configured (a dream without one stages nothing);
2. no dream pass was queued in the last THROTTLE (24 h), whatever queued it;
3. at least MIN_EPISODIC episodic memories (the dreamer's EPISODIC_TYPES: commits, session
   records) were written since the last queued pass (or in the last WINDOW_DAYS days when
   there was none).
The pass is `memesh dream run` over every project, queued as a TaskRun (proposals/tasks.py
`task_run_enqueue`; GET /v1/tasks/<id> reports it). The check and the queueing share one
write transaction, so two Stop hooks finishing together queue one pass, not two.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from graph.errors import OperationFailed
from graph.models import Entity, Status
from memesh_site import config_store
from proposals.models import TaskRun

MIN_EPISODIC = 10
THROTTLE = timedelta(hours=24)
WINDOW_DAYS = 14
MAX_LLM_CALLS = 2
# proposals.tasks.KIND_RUN and dreamer.EPISODIC_TYPES, spelled here so that deciding imports
# neither Celery nor the dreamer (numpy): most Stop hooks decide "not due".
DREAM_KIND = "dream_run"
EPISODIC_TYPES = (
    "commit",
    "session",
    "session_summary",
    "session-summary",
    "session_note",
    "session-note",
    "session_keypoint",
    "workflow_checkpoint",
    "conversation",
)


@dataclass(frozen=True)
class DreamDue:
    enqueued: bool
    reason: str
    task_id: str | None = None


def _llm_configured() -> bool:
    try:
        config = config_store.load()
    except config_store.ConfigUnreadable as exc:
        raise OperationFailed(exc.summary) from None
    if not (config.get("llm") or config.get("llmFallbacks")):
        return False  # the usual answer, without importing the LLM layer (httpx: ~0.25 s)
    from proposals.llm.chain import llm_chain

    return bool(llm_chain(config))


def enqueue_dream_if_due(*, trigger: str) -> DreamDue:
    """Queue a dream pass when one is due (the module docstring); say why not otherwise."""
    if not _llm_configured():
        return DreamDue(False, "no LLM configured")
    now = timezone.now()
    with transaction.atomic():
        last = TaskRun.objects.filter(kind=DREAM_KIND).order_by("-created_at").first()
        if last is not None and now - last.created_at < THROTTLE:
            return DreamDue(False, f"throttled: a dream pass was queued at {last.created_at:%c}")
        since = last.created_at if last is not None else now - timedelta(days=WINDOW_DAYS)
        episodic = Entity.objects.filter(
            status=Status.ACTIVE, type__in=EPISODIC_TYPES, created_at__gte=since
        ).count()
        if episodic < MIN_EPISODIC:
            return DreamDue(
                False,
                f"{episodic} episodic memories since the last dream ({MIN_EPISODIC} needed)",
            )
        from proposals.tasks import KIND_RUN, task_run_enqueue  # Celery: only when due

        assert KIND_RUN == DREAM_KIND
        queued = task_run_enqueue(
            kind=KIND_RUN, params={"window_days": WINDOW_DAYS, "max_llm_calls": MAX_LLM_CALLS}
        )
    return DreamDue(True, f"queued by {trigger}: {episodic} episodic memories", queued.task_id)
