"""The directory a `memesh` command was started in: the caller's, when `memesh serve` (or a
session's `memesh mcp`) runs a command forwarded by a CLI process or a hook (api/cli/runner.py
sets it for the command's duration), else this process's own working directory.

Every rule that reads "the current directory" — the project a command binds (graph/project.py),
the repository `memesh why` reads, a work package's workspace — asks `caller_directory()`, so a
command answers the same forwarded or not. Standard library only: the hook input's reader needs
it before Django is set up (api/hooks/entry.py).
"""

from __future__ import annotations

import os
from contextvars import ContextVar

invocation_directory: ContextVar[str | None] = ContextVar("invocation_directory", default=None)


def caller_directory() -> str:
    """The directory the command was started in (see the module docstring)."""
    return invocation_directory.get() or os.getcwd()
