"""Facts about the machine and the code a benchmark ran on, recorded beside its figures.

Two views of the machine, each recorded by its own caller: `machine()` is read without Django
(bench/run_all.py, per section: the host and the SQLite driver memesh prefers), and
`connected_machine()` inside a benchmark process with Django set up (bench/recall_bench.py:
the SQLite version and driver of the live connection). The code is named by its git commit,
marked when the measured paths differ from it.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


# --- the code ----------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def git_commit(measured: tuple[str, ...]) -> str:
    """Short HEAD, with +changes when the measured code differs from it."""
    head = _git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--untracked-files=no", "--", *measured)
    return head + ("+changes" if dirty else "")


def code_fingerprint(measured: tuple[str, ...]) -> str:
    """Changes when the measured code (not tests or docs) changes on disk."""
    trees = _git("rev-parse", *(f"HEAD:{path}" for path in measured))
    return trees + "\n" + _git("diff", "HEAD", "--", *measured)


# --- the machine -------------------------------------------------------------------------------


def _proc_field(path: str, name: str) -> str | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    """The host and the SQLite driver memesh prefers, read without Django."""
    mem_kb = _proc_field("/proc/meminfo", "MemTotal")
    try:
        import pysqlite3.dbapi2 as sqlite3  # the driver memesh runs on (DESIGN §10)

        driver = "pysqlite3"
    except ImportError:
        import sqlite3

        driver = "sqlite3"
    try:
        vec = importlib.metadata.version("sqlite-vec")
    except importlib.metadata.PackageNotFoundError:
        vec = None
    return {
        "cpu_model": _proc_field("/proc/cpuinfo", "model name") or platform.processor() or None,
        "cores": os.cpu_count(),
        "ram_gb": round(int(mem_kb.split()[0]) / 2**20, 1) if mem_kb else None,
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "driver": driver,
        "sqlite_vec": vec,
    }


def connected_machine(commit: str) -> dict[str, Any]:
    """The host, the SQLite of Django's live connection, today's date and `commit`."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT sqlite_version()")
        sqlite_version = cur.fetchone()[0]
    return {
        "date": date.today().isoformat(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": sqlite_version,
        "driver": type(connection.connection).__module__.split(".")[0],
        "commit": commit,
    }
