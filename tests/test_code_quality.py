"""The codebase stays ruff-clean (lint and format), checked on every CI run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_the_code_passes_ruff_lint() -> None:
    result = _ruff("check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_ruff_formatted() -> None:
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr
