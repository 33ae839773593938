"""A graph whose indexes were corrupted on purpose (tests/procs/corrupt_indexes.py), for the
consistency checker's tests (tests/services/test_consistency.py) and `memesh doctor --fix`'s
(tests/transports/test_doctor_fix.py): the live vector index built first, and everything a
memory is snapshotted before the corruption, so a repair can be shown to lose nothing."""

from __future__ import annotations

from typing import Any

from graph.indexing import embedding_pass, generations
from graph.models import Entity
from tests.procs import corrupt_indexes as corrupting

WIDTH = 16  # of the deterministic embedder these tests configure: small, a multiple of 8


def build_live() -> generations.Generation:
    """The live vector index of the configured embedder, every active memory in it."""
    report = embedding_pass.embed_pending()
    assert report.error is None and report.skipped is None, report
    live = generations.live_generation()
    assert live is not None
    return live


def stored() -> dict[str, Any]:
    """Everything a memory is: entity rows with their observations and tags, in order."""
    rows = {}
    for entity in Entity.objects.order_by("id"):
        rows[entity.name] = (
            entity.pk,
            entity.type,
            entity.title,
            entity.status,
            entity.namespace,
            entity.confidence,
            entity.metadata,
            entity.updated_at,
            list(entity.observations.order_by("id").values_list("text", flat=True)),
            list(entity.tags.order_by("id").values_list("name", flat=True)),
        )
    return rows


def prepare(corruption: str) -> tuple[list[int], dict[str, Any]]:
    """Seed, embed, archive where needed, snapshot what is stored, then corrupt: (the ids the
    corruption touched, the snapshot)."""
    corrupting.seed([corruption])
    build_live()
    floats = corrupting.live_float_rows()
    corrupting.archive_where_needed([corruption])
    before = stored()
    return corrupting.corrupt(corruption, floats), before


def consistency_check_of(report: dict[str, Any]) -> dict[str, Any]:
    """The "index consistency" check of a doctor report."""
    [found] = [c for c in report["checks"] if c["name"] == "index consistency"]
    return found
