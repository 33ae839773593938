"""The Celery app. Embedded default: a filesystem broker under MEMESH_HOME (no service to run)
and results in the database; MEMESH_CELERY_BROKER=redis://… scales workers out."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")

app = Celery("memesh")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each app's tasks.py is imported when the worker starts (graph.tasks also queues the
# catch-up embedding pass once the worker is ready).
app.autodiscover_tasks()
