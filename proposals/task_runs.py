"""Running a queued task and recording its outcome on its TaskRun (queued -> running ->
succeeded | failed): what GET /v1/tasks/<id> and `memesh status` report. The tasks themselves
are dream/tasks.py's."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from django.utils import timezone

from core.errors import MemeshError
from proposals.models import TaskRun, TaskStatus


def task_run_execute(task_id: str, body: Callable[[dict[str, Any]], Mapping[str, Any]]) -> None:
    """Run a queued task's body, recording running -> succeeded | failed on its TaskRun.

    A task already started (a redelivered message) is not run twice."""
    started = TaskRun.objects.filter(pk=uuid.UUID(task_id), status=TaskStatus.QUEUED).update(
        status=TaskStatus.RUNNING, started_at=timezone.now()
    )
    if started != 1:
        return
    run = TaskRun.objects.get(pk=task_id)
    try:
        result = body(dict(run.params or {}))
    except MemeshError as exc:
        _finish(task_id, TaskStatus.FAILED, error_code=exc.error_code, error=exc.message)
        return
    except Exception as exc:
        _finish(task_id, TaskStatus.FAILED, error_code="server.internal", error=_one_line(exc))
        raise
    _finish(task_id, TaskStatus.SUCCEEDED, result=result)


def _one_line(exc: Exception) -> str:
    return re.sub(r"\s+", " ", f"{type(exc).__name__}: {exc}")[:500]


def _finish(
    task_id: str,
    status: str,
    *,
    result: Mapping[str, Any] | None = None,
    error_code: str = "",
    error: str = "",
) -> None:
    TaskRun.objects.filter(pk=task_id).update(
        status=status,
        result=result,
        error_code=error_code,
        error=error,
        finished_at=timezone.now(),
    )
