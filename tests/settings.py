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

# A home of this process's own unless the caller chose one. pytest-xdist's workers inherit
# the controller's environment, so a home the controller made here is not taken for a choice:
# each worker writes config.json and serve.json of its own.
if "MEMESH_HOME" not in os.environ or os.environ.get("MEMESH_TEST_HOME_PID") not in (
    None,
    str(os.getpid()),
):
    _home = tempfile.mkdtemp(prefix="memesh-test-home-")
    os.environ["MEMESH_HOME"] = _home
    os.environ["MEMESH_TEST_HOME_PID"] = str(os.getpid())
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

# The test database in memory, said outright: pytest-django's xdist support gives every worker a
# file database named after NAME unless the test NAME is ":memory:" (it only recognises the
# stock sqlite3 engine by name, not core.db).
DATABASES["default"]["TEST"] = {"NAME": ":memory:"}  # noqa: F405

# MEMESH_TEST_BACKEND=postgresql: the same tests on PostgreSQL + pgvector (tests/postgres.py
# starts this process's own server, before pytest-django creates its test database; each
# xdist worker gets a database of its own, named after it).
if os.environ.get("MEMESH_TEST_BACKEND") == "postgresql":
    from tests.postgres import process_server

    DATABASES = {"default": process_server().test_database_settings()}
