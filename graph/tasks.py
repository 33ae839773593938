"""Celery tasks. Each has a synchronous twin (the function it calls), so nothing needs a worker."""

from __future__ import annotations

from typing import Any

from graph import vectors
from memesh_site.celery import app


# Bound to memesh's app explicitly (not shared_task): processes that never queue work —
# `memesh mcp`'s handshake, one-shot commands — do not import Celery at all.
@app.task(ignore_result=True)
def embed_pending_task() -> dict[str, Any]:
    """Embed every active entity whose live vector is missing or stale."""
    report = vectors.embed_pending()
    return {"embedded": report.embedded, "failed": report.failed, "skipped": report.skipped}
