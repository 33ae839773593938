from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graph.ops.recall.access import discard_pending_accesses


@pytest.fixture(autouse=True)
def _no_accesses_across_tests() -> Iterator[None]:
    """Recall batches access counts in memory; a test's database does not outlive it."""
    discard_pending_accesses()
    yield
    discard_pending_accesses()


@pytest.fixture(autouse=True)
def _no_index_rows_across_committing_tests(
    request: pytest.FixtureRequest, django_db_blocker: Any
) -> Iterator[None]:
    """A transaction=True test commits; Django's flush then empties the model tables only, so
    the keyword index rows and vec0 tables it wrote would leak into later tests."""
    yield
    marker = request.node.get_closest_marker("django_db")
    if marker is not None and marker.kwargs.get("transaction"):
        from tests.vector_support import reset_index_tables

        with django_db_blocker.unblock():
            reset_index_tables()
