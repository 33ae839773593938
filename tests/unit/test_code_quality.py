"""The codebase stays ruff-clean (lint and format), mypy-clean and inside its import layering,
checked on every CI run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.processes import ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "memesh_site.settings"},
    )


def test_the_code_passes_ruff_lint() -> None:
    result = _run("ruff", "check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_ruff_formatted() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_passes_mypy() -> None:
    result = _run("mypy", "--no-incremental")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_import_layering_contracts_hold() -> None:
    """pyproject's [tool.importlinter] contracts: the whole stack (memesh_site over the
    transports and pages, over the producers and review, over the graph, over core), graph's own
    layers pointing one way, storage knowing no Celery or services, the transports apart, and
    no app holding an import cycle."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
