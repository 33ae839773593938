"""Whether `memesh serve` is running for this MEMESH_HOME.

serve records itself as it starts, in MEMESH_HOME/serve.json (pid, host, port, start time,
whether it started the background worker; mode 0600), and removes the record when it stops. A
server killed outright (SIGKILL, OOM, power loss) leaves its record behind, so a record alone
proves nothing: `server_state` checks that the process still exists and asks the recorded port
for /v1/health. It only reads — a stale record is reported, not removed; the next serve
replaces it.

Without a record, the configured port (MEMESH_HTTP_PORT) is asked too: something answering
there as memesh is another MEMESH_HOME's server, or one that could not write its record.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core import paths
from core.paths import RUNTIME_FILENAME

logger = logging.getLogger(__name__)

RECORD_FILENAME = RUNTIME_FILENAME  # also read, without Django, by api/cli/forward.py
PROBE_TIMEOUT_SECONDS = 1.0


def record_path() -> Path:
    return paths.memesh_home() / RECORD_FILENAME


def record_write(
    *, host: str, port: int, worker: bool, extra: dict[str, Any] | None = None
) -> None:
    """Record this process as the home's server (atomically, 0600), with `extra` fields (what
    a CLI process checks before it forwards a command: api/cli/forward.py). A home
    that cannot be written to does not stop the server: status then says it found no record,
    and CLI commands run in their own processes."""
    record = {
        **(extra or {}),
        "pid": os.getpid(),
        "host": host,
        "port": port,
        "worker": worker,
        "startedAt": datetime.now(UTC).isoformat(),
    }
    path = record_path()
    try:
        paths.write_private_json(path, record)
    except OSError as exc:
        logger.warning("memesh serve could not record itself in %s: %s", path, exc)


def record_clear() -> None:
    """Remove the record if it is this process's (another serve may have replaced it)."""
    record = record_read()
    if record is not None and record.get("pid") == os.getpid():
        with contextlib.suppress(OSError):
            record_path().unlink()


def record_read() -> dict[str, Any] | None:
    try:
        raw = json.loads(record_path().read_text())
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) else None


def process_exists(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without signalling)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def _probe_host(host: str) -> str:
    """Where to reach a listener bound to `host`: a wildcard bind answers on loopback."""
    bare = host.strip("[]")
    if bare in ("0.0.0.0", ""):
        return "127.0.0.1"
    if bare == "::":
        return "::1"
    return bare


def answers_as_memesh(host: str, port: int, timeout: float = PROBE_TIMEOUT_SECONDS) -> str | None:
    """The version a memesh server on host:port reports on /v1/health; "" when something
    answers there with memesh's envelope but no version (a remote listener asking for its
    bearer token, a database it cannot open); None when nothing answers, or not as memesh."""
    target = _probe_host(host)
    conn = http.client.HTTPConnection(target, port, timeout=timeout)
    try:
        # The Host header names loopback, as a local client would (memesh refuses others).
        conn.request("GET", "/v1/health", headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        body = json.loads(response.read(64 * 1024) or b"null")
    except (OSError, http.client.HTTPException, ValueError):  # timeouts are OSErrors
        return None
    finally:
        conn.close()
    if not isinstance(body, dict) or "success" not in body:
        return None
    data = body.get("data")
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else ""


@dataclass(frozen=True)
class ServerState:
    running: bool
    # running | not-answering (the process exists, the port does not answer as memesh: starting,
    # or hung) | stale (the recorded process is gone) | not-running (no record) | unrecorded
    # (no record, but a memesh server answers on the configured port)
    state: str
    detail: str
    pid: int | None = None
    url: str | None = None
    version: str | None = None
    started_at: str | None = None
    worker: bool | None = None

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["startedAt"] = out.pop("started_at")
        return out


def _url(host: str, port: int) -> str:
    bare = host.strip("[]")
    return f"http://{f'[{bare}]' if ':' in bare else bare}:{port}"


def server_state(default_host: str, default_port: int) -> ServerState:
    """Is this home's server running? The record, checked against the process and the port."""
    record = record_read()
    if record is None:
        version = answers_as_memesh(default_host, default_port)
        if version is not None:
            return ServerState(
                False,
                "unrecorded",
                f"no server recorded in this MEMESH_HOME, but a memesh server answers on "
                f"{_url(default_host, default_port)}: another MEMESH_HOME's, or one that could "
                "not record itself",
                url=_url(default_host, default_port),
                version=version or None,
            )
        return ServerState(False, "not-running", "not running (`memesh serve` starts it)")
    pid, host, port = record.get("pid"), record.get("host"), record.get("port")
    if not (isinstance(pid, int) and pid > 0 and isinstance(host, str) and isinstance(port, int)):
        return ServerState(False, "not-running", f"not running ({RECORD_FILENAME} is unreadable)")
    url = _url(host, port)
    started = record.get("startedAt")
    worker = record.get("worker")
    recorded = ServerState(
        False,
        "stale",
        f"not running: the server recorded at {url} (pid {pid}) is gone without removing its "
        "record (killed?)",
        pid=pid,
        url=url,
        started_at=started if isinstance(started, str) else None,
        worker=worker if isinstance(worker, bool) else None,
    )
    if not process_exists(pid):
        return recorded
    version = answers_as_memesh(host, port)
    if version is None:
        return replace(
            recorded,
            state="not-answering",
            detail=f"pid {pid} exists but {url} does not answer as memesh (starting, hung, or "
            "the pid now belongs to another process)",
        )
    return replace(
        recorded,
        running=True,
        state="running",
        detail=f"running at {url} (pid {pid})",
        version=version or None,
    )
