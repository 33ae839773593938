from __future__ import annotations

import os
import tempfile

# Keep test runs away from the user's ~/.memesh (settings read this at import).
os.environ.setdefault("MEMESH_HOME", tempfile.mkdtemp(prefix="memesh-test-home-"))

import pytest

from graph.operations import CallContext


@pytest.fixture
def ctx() -> CallContext:
    return CallContext(source_host="test")
