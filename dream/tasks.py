"""Celery tasks recorded as TaskRuns: thin transports that take a TaskRun id, run the same
function as the synchronous CLI twin (`memesh dream run|patterns|conflicts`, `memesh reindex`),
and record the outcome on the TaskRun (GET /v1/tasks/<id> reads it; memesh keeps no result
backend). Embedding backfill is graph.tasks.embed_pending_task (`memesh embed`).

Enqueueing lives here too (`task_run_enqueue`, `config_saved`): services never enqueue, and
this module imports Celery, so transports import it where they queue, not at module load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from celery import Task
from django.db import transaction

from core.config_sections import ConfigChange
from core.task_queue import app
from dream import conflicts, dreamer, patterns
from graph.embedding.config import SECTION as EMBEDDER_SECTION
from graph.indexing import reindex
from proposals.models import DREAM_RUN_KIND, TaskRun
from proposals.task_runs import task_run_execute

KIND_RUN = DREAM_RUN_KIND
KIND_PATTERNS = "dream_patterns"
KIND_CONFLICTS = "dream_conflicts"
KIND_REINDEX = "reindex"


def _run(params: dict[str, Any]) -> Mapping[str, Any]:
    # `trigger` (stop-hook, schedule: dream/due.py) says who queued the run; it is
    # read from the TaskRun by `memesh status` and the review page, not by the dreamer.
    return dreamer.dream_run(**{k: v for k, v in params.items() if k != "trigger"})


def _patterns(params: dict[str, Any]) -> Mapping[str, Any]:
    return patterns.dream_patterns(**params)


def _conflicts(params: dict[str, Any]) -> Mapping[str, Any]:
    return conflicts.dream_conflicts(**params)


def _reindex(params: dict[str, Any]) -> Mapping[str, Any]:
    return reindex.reindex_all().as_json()


@app.task(ignore_result=True)
def reindex_task(task_id: str) -> None:
    """`memesh reindex`, on the worker (queued when the embedder setting changes)."""
    task_run_execute(task_id, _reindex)


@app.task(ignore_result=True)
def dream_run_task(task_id: str) -> None:
    """`memesh dream run`, on the worker."""
    task_run_execute(task_id, _run)


@app.task(ignore_result=True)
def dream_patterns_task(task_id: str) -> None:
    """`memesh dream patterns`, on the worker."""
    task_run_execute(task_id, _patterns)


@app.task(ignore_result=True)
def dream_conflicts_task(task_id: str) -> None:
    """`memesh dream conflicts`, on the worker."""
    task_run_execute(task_id, _conflicts)


TASKS_BY_KIND: dict[str, Task] = {
    KIND_RUN: dream_run_task,
    KIND_PATTERNS: dream_patterns_task,
    KIND_CONFLICTS: dream_conflicts_task,
    KIND_REINDEX: reindex_task,
}


@dataclass(frozen=True)
class QueuedTask:
    task_id: str


def task_run_enqueue(*, kind: str, params: dict[str, Any]) -> QueuedTask:
    """Record a queued TaskRun and send its task to the worker once the record commits."""
    task = TASKS_BY_KIND[kind]
    with transaction.atomic():
        run = TaskRun.objects.create(kind=kind, params=params)
        run_id = str(run.pk)
        transaction.on_commit(lambda: task.delay(run_id))
    return QueuedTask(task_id=run_id)


def config_saved(change: ConfigChange) -> dict[str, Any]:
    """After POST /v1/config or `memesh config set|unset`: the masked configuration, with
    `reindexTaskId` when the embedder changed. Vectors of another embedder are never searched,
    so they are rebuilt in the background (`memesh reindex` is the synchronous twin;
    GET /v1/tasks/<id> reports on this one)."""
    if EMBEDDER_SECTION not in change.changed:
        return change.config
    return {
        **change.config,
        "reindexTaskId": task_run_enqueue(kind=KIND_REINDEX, params={}).task_id,
    }
