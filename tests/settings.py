"""memesh's settings for the test run, with MEMESH_HOME in a throwaway directory.

pytest-django imports settings before any conftest runs, and the settings create files under
MEMESH_HOME (the signing key), so the directory must be chosen here, not in a fixture.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

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

# The agent hosts' files (memesh setup, memesh doctor's Integrations) under a throwaway folder:
# no in-process test reads or writes the real ~/.claude, ~/.codex, ~/.gemini or ~/.cursor.
# Process tests give their processes a HOME of their own instead.
_hosts_home = Path(tempfile.mkdtemp(prefix="memesh-test-hosts-"))
atexit.register(shutil.rmtree, _hosts_home, ignore_errors=True)
CLAUDE_CONFIG_DIR = _hosts_home / ".claude"
CLAUDE_STATE_FILE = _hosts_home / ".claude.json"
CODEX_HOME = _hosts_home / ".codex"
GEMINI_DIR = _hosts_home / ".gemini"
CURSOR_DIR = _hosts_home / ".cursor"
