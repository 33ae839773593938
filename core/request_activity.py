"""When the server last saw a request, shared with the background worker of the same home.

The worker embeds the backlog of new memories at a lower CPU priority, but niceness alone
leaves it in the way: onnxruntime keeps both cores of a small machine and their caches busy,
so a recall answered while it embeds took up to a third longer than with the worker stopped
(docs/performance-notes.md, "The worker waits for a quiet moment"). So every server process
stamps the time of each request's start and end here, and the worker's local embedder waits
before each model call until no request has been seen for QUIET_SECONDS, or for at most
MEMESH_WORKER_YIELD_SECONDS: under a steady stream of requests it still embeds, one call per
wait, and an idle server lets it run at full speed.

The stamp is one float of `time.monotonic()` (a clock shared by the processes of one machine)
in a small memory-mapped file of the home: a request pays a store into memory, no system call.
Several servers of one home share it, and a worker yields to any of them. Losing the file, or
never having one, only means the worker does not wait.
"""

from __future__ import annotations

import math
import mmap
import os
import struct
import time
from pathlib import Path

from core import paths

FILENAME = "request-activity"
# A sequential client sends its next request well within this; an agent thinks for seconds.
QUIET_SECONDS = 0.05
# Between two looks at the stamp while waiting: short enough to resume soon after the quiet.
POLL_SECONDS = 0.01
# Rounding can leave a remainder too small to wait for: one millisecond is the least wait.
MIN_SLEEP_SECONDS = 0.001
# A stamp further ahead of the clock than this was written before the machine restarted.
STALE_AHEAD_SECONDS = 60.0
_STAMP = struct.Struct("d")


def activity_path() -> Path:
    return paths.memesh_home() / FILENAME


class Stamp:
    """The shared stamp of one home, mapped on first use (`create` makes the file if missing:
    servers write it, the worker only reads one that exists)."""

    def __init__(self, path: Path, *, create: bool) -> None:
        self.path = path
        self.create = create
        self._map: mmap.mmap | None = None
        self._unwritable = False

    def _mapped(self) -> mmap.mmap | None:
        if self._map is None and not self._unwritable:
            try:
                self._map = self._open()
            except (OSError, ValueError):
                # A server whose home refuses the file stops trying (no system calls on every
                # request); a reader looks again next time, for a server that starts later.
                self._unwritable = self.create
        return self._map

    def _open(self) -> mmap.mmap | None:
        if self.create:
            paths.ensure_private_file(self.path)
        elif not self.path.exists():
            return None
        fd = os.open(self.path, os.O_RDWR)
        try:
            if os.fstat(fd).st_size < _STAMP.size:
                if not self.create:
                    return None  # a server is creating it; look again next time
                os.ftruncate(fd, _STAMP.size)
            return mmap.mmap(fd, _STAMP.size)
        finally:
            os.close(fd)  # the mapping keeps its own reference to the file

    def mark(self, now: float | None = None) -> None:
        mapped = self._mapped()
        if mapped is not None:
            _STAMP.pack_into(mapped, 0, time.monotonic() if now is None else now)

    def last(self) -> float | None:
        """The latest stamp, or None when there is none to read."""
        mapped = self._mapped()
        if mapped is None:
            return None
        value: float = _STAMP.unpack_from(mapped, 0)[0]
        return value

    def quiet_for(self) -> float:
        """Seconds since the latest stamp; infinite when there is none (or a stale one)."""
        age = _age(self.last(), time.monotonic())
        return math.inf if age is None else max(0.0, age)

    def pace(self, longest: float) -> float:
        """The worker's pace before a model call: wait for quiet (at most `longest` seconds),
        then answer how long the server has been quiet (its embedder batches more when idle)."""
        self.wait_for_quiet(longest)
        return self.quiet_for()

    def wait_for_quiet(self, longest: float) -> float:
        """Sleep until no request was stamped for QUIET_SECONDS, or `longest` seconds have
        passed; the seconds slept."""
        started = time.monotonic()
        deadline = started + longest
        while True:
            now = time.monotonic()
            age = _age(self.last(), now)
            if age is None or age >= QUIET_SECONDS or now >= deadline:
                return now - started
            pause = min(POLL_SECONDS, deadline - now, QUIET_SECONDS - age)
            time.sleep(max(MIN_SLEEP_SECONDS, pause))


def _age(last: float | None, now: float) -> float | None:
    """Seconds since the stamp `last`; None when there is none, or when it was written before
    the machine restarted (the clock restarts at boot: such a stamp is far in the future)."""
    if last is None or last > now + STALE_AHEAD_SECONDS:
        return None
    return now - last


_server_stamp: Stamp | None = None


def note_request() -> None:
    """Stamp a request's start or end (a server process's ASGI application)."""
    global _server_stamp
    if _server_stamp is None:
        _server_stamp = Stamp(activity_path(), create=True)
    _server_stamp.mark()
