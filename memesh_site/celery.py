"""The Celery app. Embedded default: a filesystem broker under MEMESH_HOME (no service to run)
and results in the database; MEMESH_CELERY_BROKER=redis://… scales workers out."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")

app = Celery("memesh")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _catch_up(**_: object) -> None:
    # Writes made while no worker ran queued tasks that may be lost with a cleared broker
    # folder; one pass at start finds whatever is still waiting for a vector.
    from graph.tasks import embed_pending_task

    embed_pending_task.delay()
