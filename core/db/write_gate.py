"""An orderly way into SQLite's write lock for every process and thread on one database file.

SQLite lets one writer in at a time; the others wait in its busy handler, which polls with
sleeps that grow to 100 ms and so lets a waiter sleep through many free moments. With eight
writer processes on two cores that put the slowest 1 % of remembers past 250 ms although a
write holds the lock for about a millisecond. So a writer first takes an exclusive `flock` on
a file beside the database: the kernel wakes a waiter the moment the holder releases, which
happens at commit, at rollback, and when the holder dies. (Polling the same lock with short
pauses measured four times worse at p99: newcomers overtake the sleepers.)

The gate only orders memesh's own transactions (`BEGIN IMMEDIATE`, every atomic block);
SQLite's lock and busy timeout still guard the database against anything else. A wait for the
gate is bounded by the busy timeout: past it the writer goes on without the gate and SQLite's
lock decides, as it would without one. The two waits share one budget (base.py's
`_begin_within`): a write waits about the busy timeout in all, not once per lock.
"""

from __future__ import annotations

import fcntl
import os
import threading


class WriteGate:
    """One per connection. Each hold is its own open file, so threads of one process queue
    behind each other too (an `flock` belongs to the open file, not to the process)."""

    def __init__(self, database_path: str) -> None:
        self.path = database_path + ".write-lock"
        self.fd: int | None = None  # the open file holding the gate, while held

    def acquire(self, timeout: float) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            # A read-only directory or file system: go on without the gate, so that SQLite
            # itself says what is wrong (a read-only database) instead of this open failing.
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not _wait_for_lock(fd, timeout):
                return  # gave up waiting; the waiter thread owns and closes `fd`
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)  # closing the file releases its lock


def _wait_for_lock(fd: int, timeout: float) -> bool:
    """Block in a helper thread (a blocking flock cannot time out) for at most `timeout`.
    True: the lock is held on `fd`. False: abandoned; the helper closes `fd` when it gets it."""
    state = {"acquired": False, "abandoned": False}
    guard = threading.Lock()
    done = threading.Event()

    def wait() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with guard:
            state["acquired"] = True
            abandoned = state["abandoned"]
        if abandoned:
            os.close(fd)
        done.set()

    threading.Thread(target=wait, name="write-gate", daemon=True).start()
    done.wait(timeout)
    with guard:
        if state["acquired"]:
            return True
        state["abandoned"] = True
        return False
