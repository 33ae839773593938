"""The two servers bench/peer_compare.py measures, each started as its users start it, and the
read-only look at memesh's embedding backlog.

- memesh: the default install of the README's Quick start — `.venv/bin/memesh serve --port P`
  on a fresh MEMESH_HOME (it migrates, starts its two server processes and the embedded worker,
  binds loopback), no MEMESH_* variable inherited.
- MeMesh 4.6: `../shared/tools/peer-memesh serve P`, which starts it on a fresh temporary HOME,
  loopback only, keyword-only (its default). Its temporary HOME is made under a TMPDIR of ours,
  so it is removed with the run.

The tools live outside the repository, in ../shared/tools beside it (or --tools); nothing of
this machine's paths is written into the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TOOLS_SHOWN = "../shared/tools"
MEMESH_DB = "knowledge-graph.db"
WORKER_READY = "Background worker ready"
START_TIMEOUT_S = 180.0


class ToolsMissing(SystemExit):
    """The shared workload or the peer runner is not where it should be."""


@dataclass(frozen=True)
class Tools:
    root: Path
    shown: str  # as the user named it, relative to the repository

    @property
    def workload(self) -> Path:
        return self.root / "http_workload.py"

    @property
    def peer(self) -> Path:
        return self.root / "peer-memesh"


def find_tools(path: str = TOOLS_SHOWN) -> Tools:
    """`path` resolved from the repository root; exits with a message naming what is absent."""
    root = (REPO / path).resolve()
    tools = Tools(root, path)
    missing = [
        f"{path}/{p.name}"
        for p, ok in (
            (tools.workload, tools.workload.is_file()),
            (tools.peer, _executable(tools.peer)),
        )
        if not ok
    ]
    if missing:
        raise ToolsMissing(
            "bench.peer_compare needs the shared workload and the peer runner beside the "
            f"repository; absent (relative to the repository root): {', '.join(missing)}. "
            "Point --tools at the directory holding http_workload.py and peer-memesh."
        )
    return tools


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def memesh_bin() -> Path:
    """The `memesh` entry point installed beside this interpreter (.venv/bin/memesh)."""
    return Path(sys.executable).with_name("memesh")


def memesh_env(home: Path) -> dict[str, str]:
    """The default install's environment: nothing of memesh's configured but its home."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMESH_") and k != "DJANGO_SETTINGS_MODULE"
    }
    env["MEMESH_HOME"] = str(home)
    return env


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@dataclass
class Server:
    system: str  # "memesh" or "peer"
    proc: subprocess.Popen[bytes]
    base_url: str
    home: Path  # a temporary directory of ours, removed by stop()
    log: Path
    command: list[str]
    db_path: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid


def _spawn(system: str, args: list[str], env: dict[str, str], home: Path, port: int) -> Server:
    log = home / "server.log"
    with log.open("wb") as out:
        # Its own session, so stop() ends the server and every process it started, by the
        # group id of the process we started.
        proc = subprocess.Popen(
            args,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Server(system, proc, f"http://127.0.0.1:{port}", home, log, args)


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            tail = server.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{server.system} exited {server.proc.returncode}: {tail}")
        if http_ok(f"{server.base_url}/v1/health"):
            return
        time.sleep(0.2)
    stop(server)
    raise RuntimeError(f"{server.system} did not answer /v1/health in {START_TIMEOUT_S:.0f} s")


def start_memesh(port: int, home: Path | None = None) -> Server:
    """`memesh serve` as the README starts it, on a fresh home (or `home`, removed by stop())."""
    home = home or Path(tempfile.mkdtemp(prefix="memesh-peer-compare-"))
    args = [str(memesh_bin()), "serve", "--port", str(port)]
    server = _spawn("memesh", args, memesh_env(home), home, port)
    server.db_path = home / MEMESH_DB
    _wait_healthy(server)
    # Writes before the worker is up only queue; waiting keeps its start-up (Django, the
    # model) out of the remember figures. serve says in one line when it is ready.
    deadline = time.monotonic() + START_TIMEOUT_S
    while WORKER_READY not in server.log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            server.notes.append("the worker's ready line did not appear; measured anyway")
            break
        time.sleep(0.2)
    return server


def start_peer(tools: Tools, port: int) -> Server:
    home = Path(tempfile.mkdtemp(prefix="memesh-peer-compare-peer-"))
    env = {**os.environ, "TMPDIR": str(home)}
    server = _spawn("peer", [str(tools.peer), "serve", str(port)], env, home, port)
    _wait_healthy(server)
    dbs = sorted(home.glob(f"memesh-peer-home.*/.memesh/{MEMESH_DB}"))
    server.db_path = dbs[0] if dbs else None
    return server


def stop(server: Server) -> None:
    """SIGTERM to the server's process group (the group of the process we started), SIGKILL if
    any of it outlives the grace period; then its home goes."""
    pgid = server.proc.pid
    for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            # poll() reaps the leader once it exits; until then the group exists as its zombie.
            if server.proc.poll() is not None and not _group_exists(pgid):
                break
            time.sleep(0.2)
        else:
            continue
        break
    shutil.rmtree(server.home, ignore_errors=True)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def db_mb(path: Path | None) -> float | None:
    """The database file and its -wal, in MB."""
    if path is None:
        return None
    total = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    return round(total / 1e6, 1)


# --- memesh's embedding backlog ----------------------------------------------------------------


class BacklogProbe:
    """Asks a child process (Django set up on the server's home, reading the database beside the
    running server) how many memories wait for a vector, through the same manager method
    `memesh doctor` uses. `GET /v1/doctor` says the same, but it also runs the consistency
    check, whose cost at 100k memories would load the server being measured."""

    def __init__(self, home: Path) -> None:
        env = {**memesh_env(home), "DJANGO_SETTINGS_MODULE": "memesh_site.settings"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from bench.peer_servers import backlog_probe; backlog_probe()"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def read(self) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the backlog probe exited {self.proc.wait()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def backlog_probe() -> None:
    """The probe's child: one JSON line per line read. `pending` counts active memories without
    a current vector in the live generation (all of them before the first vector exists);
    `last_write` and `last_vector` are the newest memory's and the newest vector's creation
    times (epoch seconds), so the time the backlog took is read from the database itself."""
    import django

    django.setup()
    from django.db.models import Max

    from graph.indexing import generations
    from graph.models import Entity, EntityVector, Status

    for _ in sys.stdin:
        active = Entity.objects.filter(status=Status.ACTIVE)
        live = generations.live_generation()
        pending = EntityVector.objects.pending_count(live.generation) if live else active.count()
        last_write = active.aggregate(at=Max("created_at"))["at"]
        last_vector = (
            EntityVector.objects.filter(generation=live.generation).aggregate(at=Max("created_at"))[
                "at"
            ]
            if live
            else None
        )
        answer = {
            "pending": pending,
            "last_write": last_write.timestamp() if last_write else None,
            "last_vector": last_vector.timestamp() if last_vector else None,
        }
        print(json.dumps(answer), flush=True)
