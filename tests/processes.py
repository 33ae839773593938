"""Running memesh in other OS processes: an isolated environment and a bounded run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROCESS_DEADLINE = 300  # a hang must fail the test, not the whole run


def memesh_env(home: Path, **extra: str) -> dict[str, str]:
    """This environment without any MEMESH_* setting, with MEMESH_HOME at `home`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(MEMESH_HOME=str(home), DJANGO_SETTINGS_MODULE="memesh_site.settings", **extra)
    return env


def run_python(
    args: list[str], env: dict[str, str], timeout: float = PROCESS_DEADLINE
) -> subprocess.CompletedProcess[str]:
    """Run `python ARGS` from the repository root to completion, capturing its output."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
