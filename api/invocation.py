"""The directory a `memesh` command was started in, when `memesh serve` runs it for a CLI
process (api/cli/runner.py sets it); None: this process's own working directory.

Its own module, with nothing but the standard library: the hook input's reader
(api/hooks/payload.py) needs it before Django is set up (api/hooks/entry.py).
"""

from __future__ import annotations

from contextvars import ContextVar

invocation_directory: ContextVar[str | None] = ContextVar("invocation_directory", default=None)
