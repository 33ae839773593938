from __future__ import annotations

from collections.abc import Iterator

import pytest

from graph.access import discard_pending_accesses


@pytest.fixture(autouse=True)
def _no_accesses_across_tests() -> Iterator[None]:
    """Recall batches access counts in memory; a test's database does not outlive it."""
    discard_pending_accesses()
    yield
    discard_pending_accesses()
