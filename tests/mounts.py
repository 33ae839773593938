"""Storage conditions staged for real: a read-only file or a small file system, seen only by the
processes run inside a private mount namespace.

Why namespaces: the tests run as root in CI (where a chmod does not stop a write) and as a
developer elsewhere. `unshare --map-root-user --mount` gives either one a user and mount
namespace of its own without privileges, and inside it a read-only bind mount (EROFS) or a
tmpfs of a few megabytes (ENOSPC) stops root and non-root alike, while the rest of the
machine sees nothing. A holder process keeps the namespace alive; every memesh process of a
test joins it with `nsenter`, and the test reaches its files through /proc/<holder>/root.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from types import TracebackType

from tests.processes import ROOT, STARTUP_DEADLINE

FILL_BLOCK = 64 * 1024

# Shell setups for a namespace ($1... are its arguments). READ_ONLY_BIND: the file or
# directory $1 mounted read-only over itself. SMALL_DISK: a tmpfs of $2 bytes (16m) on the
# directory $1, holding a copy of the directory $3.
READ_ONLY_BIND = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"'
SMALL_DISK = 'mount -t tmpfs -o size="$2" tmpfs "$1" && cp -a "$3"/. "$1"/'


class Namespace:
    """A user + mount namespace set up by `setup` (a shell command given `args` as $1...)."""

    def __init__(self, setup: str, *args: str) -> None:
        script = f"{setup} && echo ready && exec sleep infinity"
        self.holder = subprocess.Popen(
            ["unshare", "--map-root-user", "--mount", "sh", "-c", script, "sh", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.holder.stdout.readline()  # "" when the setup failed and sh exited
        if line.strip() != "ready":
            why = self.holder.stderr.read()
            self.close()
            raise RuntimeError(f"could not stage the namespace: {why}")

    def argv(self, argv: list[str]) -> list[str]:
        """`argv` run inside the namespace, from the repository root (nsenter execs it: the
        process id is the command's own)."""
        pid = str(self.holder.pid)
        return [
            "nsenter", "--target", pid, "--user", "--mount", "--preserve-credentials",
            f"--wd={ROOT}", "--", *argv,
        ]  # fmt: skip

    def path(self, path: Path) -> Path:
        """`path` as the namespace sees it, from outside."""
        return Path(f"/proc/{self.holder.pid}/root{path}")

    def fill(self, directory: Path, leave: int = 0) -> Path:
        """Fill the file system holding `directory` (in the namespace) until at most `leave`
        bytes are free; returns the filler file, whose removal gives the room back."""
        filler = self.path(directory) / "filler"
        block = b"\0" * FILL_BLOCK
        with filler.open("ab", buffering=0) as f:
            while True:
                stats = os.statvfs(filler)
                room = stats.f_bavail * stats.f_frsize - leave
                if room <= 0:
                    return filler
                try:
                    f.write(block[: min(room, FILL_BLOCK)])
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    return filler

    def close(self) -> None:
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait(timeout=STARTUP_DEADLINE)
        for stream in (self.holder.stdout, self.holder.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Namespace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
