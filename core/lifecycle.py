"""Child processes that must not outlive the `memesh serve` that started them.

A server killed outright (SIGKILL, OOM) runs no cleanup, so its children watch for it instead:
its background worker, and its HTTP worker processes, which would otherwise keep the port
open and go on answering.
"""

from __future__ import annotations

import os
import signal
import threading
import time

SERVE_PID_ENV = "MEMESH_SERVE_PID"
POLL_SECONDS = 1.0
# A worker asked to stop gets this long to finish its requests and flush access counts.
GRACE_SECONDS = 10.0


def exit_with_parent(parent: int, *, graceful: bool) -> None:
    """Leave when `parent` is gone (this process was re-parented). `graceful`: SIGTERM this
    process first, so it shuts down as it would when told to; else exit at once."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_SECONDS)
        if graceful:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(GRACE_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def watch_serve_parent() -> None:
    """In an HTTP worker process of `memesh serve --workers N` (not in serve itself). The pid is
    read from the environment, where serve put it for its children after its own settings
    loaded (memesh_site/settings.py names these hand-offs)."""
    parent = os.environ.get(SERVE_PID_ENV, "")
    if parent.isdigit() and int(parent) != os.getpid():
        exit_with_parent(int(parent), graceful=True)
