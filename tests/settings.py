"""memesh's settings for the test run, with MEMESH_HOME in a throwaway directory.

pytest-django imports settings before any conftest runs, and the settings create files under
MEMESH_HOME (the signing key), so the directory must be chosen here, not in a fixture.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

if "MEMESH_HOME" not in os.environ:
    _home = tempfile.mkdtemp(prefix="memesh-test-home-")
    os.environ["MEMESH_HOME"] = _home
    atexit.register(shutil.rmtree, _home, ignore_errors=True)

# Tests of keyword recall run keyword-only; tests of vectors choose an embedder (conftest's
# `embedder` fixture). Celery tasks run in-process, one per write.
os.environ.setdefault("MEMESH_EMBEDDER", "none")
os.environ.setdefault("MEMESH_CELERY_EAGER", "true")
os.environ.setdefault("MEMESH_EMBED_DEBOUNCE_SECONDS", "0")

from memesh_site.settings import *  # noqa: F403
