"""How bench/run_all.py runs a benchmark: a subprocess from the repository root, timed, its peak
RSS read, its command recorded with portable paths; and what it records, with this machine's
paths scrubbed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import http_bench

REPO = Path(__file__).resolve().parent.parent
PYTHON_SHOWN = ".venv/bin/python"


def cache_dir() -> Path:
    return Path(os.environ.get("MEMESH_BENCH_CACHE", "~/.cache/memesh-bench")).expanduser()


@dataclass
class Run:
    stdout: str
    seconds: float
    peak_rss_mb: float
    returncode: int


class Runner:
    """Runs benchmark subprocesses; records each command, shown with portable paths."""

    def __init__(self, verbose: bool, log_dir: Path) -> None:
        self.verbose = verbose
        self.log_dir = log_dir
        self.steps: list[str] = []

    def shown(self, args: list[str]) -> str:
        out = []
        for arg in args:
            arg = arg.replace(sys.executable, PYTHON_SHOWN)
            arg = arg.replace(str(cache_dir()), "$MEMESH_BENCH_CACHE")
            arg = arg.replace(str(REPO) + os.sep, "")
            out.append(arg)
        return " ".join(out)

    def run(self, args: list[str], env: dict[str, str] | None = None, check: bool = True) -> Run:
        """Run `args` from the repository root; its stderr goes to a log (or through, -v)."""
        self.steps.append(self.shown(args))
        log = self.log_dir / f"step-{len(self.steps)}.log"
        with log.open("wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                args,
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=None if self.verbose else err,
            )
            assert proc.stdout is not None
            stdout = proc.stdout.read().decode()
            # wait4, not wait: its rusage gives this child's peak RSS (ru_maxrss, KiB on Linux).
            _, status, usage = os.wait4(proc.pid, 0)
            seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if check and code != 0:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"`{self.shown(args)}` exited {code}: {tail}")
        return Run(stdout, round(seconds, 2), round(usage.ru_maxrss / 1024, 1), code)

    def json(self, args: list[str], env: dict[str, str] | None = None) -> Any:
        return json.loads(self.run(args, env).stdout)


def scrub(value: Any) -> Any:
    """`value` with this machine's paths (interpreter, cache, repository, temp, home) replaced,
    so nothing machine-specific lands in the repository's results.json."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if not isinstance(value, str):
        return value
    for path, shown in (
        (sys.executable, PYTHON_SHOWN),
        (str(cache_dir()), "$MEMESH_BENCH_CACHE"),
        (str(REPO) + os.sep, ""),
        (str(REPO), "."),
        (tempfile.gettempdir(), "$TMP"),
        (str(Path.home()), "~"),
    ):
        value = value.replace(path, shown)
    return value


def memesh_env(home: Path, embedder: str) -> dict[str, str]:
    return http_bench.env(home, embedder)


def script(name: str, *args: Any) -> list[str]:
    """The command line of `python -m bench.<name> ARGS` (Runner.run starts it in REPO)."""
    return [sys.executable, "-m", f"bench.{name}", *map(str, args)]


def memesh(*args: Any) -> list[str]:
    return [sys.executable, "-m", "memesh_site.cli", *map(str, args)]
