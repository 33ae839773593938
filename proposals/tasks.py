"""Celery tasks of the dream workflow: thin transports that take a TaskRun id, run the same
function as the synchronous CLI twin (`memesh dream run|patterns|conflicts`), and record the
outcome on the TaskRun (GET /v1/tasks/<id> reads it; memesh keeps no result backend)."""

from __future__ import annotations

from typing import Any

from celery import Task

from memesh_site.celery import app
from proposals import conflicts, dreamer, patterns
from proposals.services import task_run_execute

KIND_RUN = "dream_run"
KIND_PATTERNS = "dream_patterns"
KIND_CONFLICTS = "dream_conflicts"


def _run(params: dict[str, Any]) -> dict[str, Any]:
    return dreamer.dream_run(**params)


def _patterns(params: dict[str, Any]) -> dict[str, Any]:
    return patterns.dream_patterns(**params)


def _conflicts(params: dict[str, Any]) -> dict[str, Any]:
    return conflicts.dream_conflicts(**params)


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
}
