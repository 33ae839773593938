"""The service tests again, on PostgreSQL + pgvector: tests/services runs in a pytest process
of its own with MEMESH_TEST_BACKEND=postgresql (tests/settings.py: Django's test database on
that process's own PostgreSQL, tests/postgres.py), and a failure there is reported here with
its output.

Left out there: the tests of SQLite's own machinery (marked `sqlite_only`: FTS5, sqlite-vec and
the sign-bit copy, PRAGMAs, the online backup, text holding NUL), deselected by tests/conftest.py;
this file itself; and the files that start their own PostgreSQL already (the backend's
processes, `memesh db copy`).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.processes import ROOT

pytestmark = pytest.mark.slow  # a pytest process and a PostgreSQL server
DEADLINE = 1200
RUN_ELSEWHERE = [
    "tests/services/test_storage_on_postgres.py",
    "tests/services/test_postgres_backend.py",
    "tests/services/test_db_copy.py",
]


def test_the_service_tests_pass_on_postgres() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTEST_", "MEMESH_", "DJANGO_SETTINGS_MODULE"))
    }
    env["MEMESH_TEST_BACKEND"] = "postgresql"
    ignored = [f"--ignore={path}" for path in RUN_ELSEWHERE]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "tests/services", *ignored],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=DEADLINE,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, "\n".join(output.splitlines()[-150:])
    # Ran, not merely collected: the summary counts passed tests, and no test was skipped.
    summary = output.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary, summary
