"""The worker's schedule of automatic dreams: Celery beat, run as a thread inside `memesh
worker` (api/cli/installation/management/commands/worker.py starts it; `memesh serve` runs such a
worker), asks every MEMESH_DREAM_CHECK_SECONDS (default 3600; 0: no schedule) whether a dream is
due, by the same rule the Stop hook applies (dream/due.py, trigger "schedule").

Without an LLM the schedule is off: its entry stays (the configuration can gain an LLM while
the worker runs, and the next tick must see it), but `DreamScheduler` sends nothing for it —
no task message, no TaskRun, nothing recorded — until one is configured. With one, each tick
sends `dream_if_due_task`, which queues a dream TaskRun when one is due and otherwise writes
nothing.

Beat keeps the time of each entry's last tick in a shelve file under MEMESH_HOME/celery
(`schedule_file`), so a restarted worker does not tick at once; losing the file costs one
early check, never an extra dream (the due rule throttles). This module registers its task on
the app when imported: the worker command imports it; producers never send the task.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery.beat import PersistentScheduler, ScheduleEntry

from core import paths
from core.task_queue import app
from dream.due import TRIGGER_SCHEDULE, enqueue_dream_if_due
from dream.passes import llm_configured

logger = logging.getLogger(__name__)

ENTRY = "memesh-dream-if-due"
SCHEDULE_FILENAME = "beat-schedule"


@app.task(ignore_result=True)
def dream_if_due_task() -> dict[str, Any]:
    """One tick of the schedule: queue a dream when one is due (the answer says why not)."""
    decision = enqueue_dream_if_due(trigger=TRIGGER_SCHEDULE)
    logger.info("scheduled dream check: %s", decision.reason)
    return decision.as_json()


def beat_schedule(every_seconds: int) -> dict[str, dict[str, Any]]:
    """The worker's beat entries: the dream check every `every_seconds` (none at 0)."""
    if every_seconds <= 0:
        return {}
    return {
        ENTRY: {
            "task": dream_if_due_task.name,
            "schedule": timedelta(seconds=every_seconds),
            # A tick nobody took in time is stale: the next one asks again.
            "options": {"expires": every_seconds},
        }
    }


def schedule_file(home: Path) -> Path:
    folder = home / "celery"
    paths.ensure_private_dir(folder)
    return folder / SCHEDULE_FILENAME


def _llm_configured() -> bool:
    try:
        return llm_configured()
    except Exception:  # an unreadable config.json: the dream flows could not run either
        logger.warning("scheduled dream check skipped: the configuration cannot be read")
        return False


class DreamScheduler(PersistentScheduler):
    """Celery's persistent scheduler, holding back the dream check while no LLM is configured
    (the entry still counts as run, so it is asked again one interval later, not every tick)."""

    def install_default_entries(self, data: Any) -> None:
        # Celery adds a daily result-backend cleanup; memesh keeps no result backend.
        return None

    def apply_entry(self, entry: ScheduleEntry, producer: Any = None) -> None:
        if entry.name == ENTRY and not _llm_configured():
            logger.debug("scheduled dream check not sent: no LLM is configured")
            return
        super().apply_entry(entry, producer=producer)
