"""Celery tasks: thin transports, each calling one function that also runs without a worker.

The write services enqueue `embed_pending_task` after commit (graph.ops.kit.writes); this module
imports nothing above graph.indexing.
"""

from __future__ import annotations

from typing import Any

from celery.signals import worker_ready

from core.task_queue import app


# Bound to memesh's app explicitly (not shared_task): processes that never queue work —
# `memesh mcp`'s handshake, one-shot commands — do not import Celery at all.
@app.task(ignore_result=True)
def embed_pending_task() -> dict[str, Any]:
    """Embed every active entity whose live vector is missing or stale."""
    # Imported by the worker, which runs this: a process that only queues the task (every
    # write's, a hook's or a CLI command's) has no use for the vector side, or numpy.
    from graph.indexing import embedding_pass

    report = embedding_pass.embed_pending()
    if report.local_switch:
        # The configured local model is not the one the live index was built by (a new default,
        # or MEMESH_EMBEDDER_MODEL changed): build its generation beside the live one, which
        # recall keeps searching until the swap. Costs no provider anything, so it is not
        # left for `memesh reindex` as a remote provider's change is.
        from graph.indexing import reindex

        try:
            result = reindex.reindex_all()
        except reindex.ReindexRefused as exc:
            return {"embedded": 0, "failed": 0, "skipped": str(exc)}
        return {"embedded": result.embedded, "failed": result.failed, "skipped": None}
    return {"embedded": report.embedded, "failed": report.failed, "skipped": report.skipped}


@worker_ready.connect
def _catch_up(**_: object) -> None:
    # Writes made while no worker ran queued tasks that may be lost with a cleared broker
    # folder; one pass at start finds whatever is still waiting for a vector.
    embed_pending_task.delay()
