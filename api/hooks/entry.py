"""`memesh hook <event>` from the `memesh` entry point (memesh_site/cli.py), before Django.

The hook input is read here, once, so that it can be sent to the running `memesh serve`
(api/cli/forward.py) or, when none can run it, handed to the command in this process
as its stdin. Failures that happen before the command can guard itself — settings that do not
load (a bad MEMESH_* value), a server that stopped answering mid-command — are recorded in
MEMESH_HOME/hook-outcomes.jsonl, and the exit status is 0 all the same: a hook must never
block the agent or show it a traceback.

A call that has nothing to do, as its input alone shows (a PostToolUse of a Bash command that
is no commit: api/hooks/triage.py), is answered here without Django when no server runs.

Standard library only until Django is needed.
"""

from __future__ import annotations

import importlib
import io
import os
import sys

from api.cli import forward as cli_forward
from core import hook_outcomes


def run(args: list[str]) -> int:
    """Run `memesh hook ...` (`args` from `hook` on); always 0."""
    event = args[1] if len(args) > 1 else "?"
    try:
        stdin = cli_forward.read_stdin()
        status = cli_forward.forward(args, stdin=stdin)
        if status is None:
            _run_here(args, stdin)
        elif status != 0:
            # The hook command itself always exits 0: the request did not complete. It may
            # have run, so it is not run again here (a commit captured twice, say).
            hook_outcomes.record(event, "failed", error=ForwardFailed(f"exit status {status}"))
    except BaseException as exc:
        hook_outcomes.record(event, "failed", error=exc)
    return 0


class ForwardFailed(RuntimeError):
    """The running server did not answer a forwarded hook."""


def _run_here(args: list[str], stdin: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    # The settings module is loaded as Django would load it, so that settings which do not
    # load fail (and are recorded) the same way, whether or not Django is needed after.
    importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"])
    from api.hooks import triage

    if triage.nothing_to_do(args, stdin, limit=cli_forward.MAX_STDIN_BYTES):
        return  # the handler's answer: silence
    sys.stdin = io.StringIO(stdin)
    from django.core.management import execute_from_command_line

    execute_from_command_line(["memesh", *args])
