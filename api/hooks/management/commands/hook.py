"""`memesh hook <event>`: Claude Code's hooks (api/hooks/), as the plugin's hooks file calls
them — `session-start`, `pre-tool-use`, `post-tool-use`, `stop`, `pre-compact`,
`user-prompt-submit`, with `--host <host>` when another host than Claude Code runs them
(core/hook_hosts.py: what the hook stores is stamped with it). The hook input is read from
stdin (at most cli_forward.MAX_STDIN_BYTES); the answer is printed exactly as Claude Code
reads it (api/hooks/output.py).

A hook never fails out loud: whatever goes wrong (bad input, an unknown event, a database
that cannot be opened) is recorded in MEMESH_HOME/hook-outcomes.jsonl, nothing is printed, and
the exit status is 0 — exit 2 would block the agent's tool call or prompt. So this command
takes over argument parsing from Django (whose usage errors exit 2), `--help` aside.

Fast by design: run by `memesh serve` when it runs (api/cli/forward.py, stdin
carried with the request); in process otherwise, with no system checks and no embedding model
(no handler embeds a query).
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from api.cli.forward import MAX_STDIN_BYTES
from api.hooks.dispatch import HANDLERS, run_hook_reply
from core import hook_outcomes
from core.db.schema import migrate_if_needed
from core.hook_hosts import HOOK_HOSTS, HOST_OPTION, hook_host

HELP_FLAGS = ("-h", "--help")


class Command(MemeshCommand):
    help = "Run one of Claude Code's hooks: the hook input on stdin, its answer on stdout."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("event", choices=list(HANDLERS), help="The hook event.")
        parser.add_argument(
            HOST_OPTION,
            choices=HOOK_HOSTS,
            help="The host running the hook (`memesh setup` writes it); Claude Code when left out.",
        )

    def run_from_argv(self, argv: list[str]) -> None:
        args = argv[2:]
        if any(a in HELP_FLAGS for a in args):
            super().run_from_argv(argv)
            return
        event = args[0] if args else ""
        try:
            host = hook_host(args[1:])
            migrate_if_needed()
            stdin = sys.stdin.read(MAX_STDIN_BYTES + 1) if sys.stdin is not None else ""
            answer, line = run_hook_reply(event, stdin, limit=MAX_STDIN_BYTES, host=host)
        except BaseException as exc:
            hook_outcomes.record(event or "?", "failed", error=exc)
            answer, line = "", ""
            if event == "session-start":  # an invalid recipient id is refused all the same
                from api.hooks.session_start import refusal_without_database

                answer, line = refusal_without_database()
        if line:
            self.stderr.write(line)
        if answer:
            self.stdout.write(answer)

    def handle(self, *args: Any, **options: Any) -> None:  # only --help reaches Django
        pass
