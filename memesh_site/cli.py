"""The `memesh` command: Django's management commands under the product's name.

`memesh serve`, `memesh migrate`, `memesh check`, ... are the same commands as
`python manage.py ...`, usable from any directory once memesh is installed.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys

from api.cli import forward as cli_forward
from api.hooks import entry as hook_entry


def command_args(args: list[str]) -> list[str]:
    """Django names commands after modules (`export_schema`); the CLI also takes the hyphenated
    spelling the reference uses (`memesh export-schema`)."""
    if args and not args[0].startswith("-"):
        return [args[0].replace("-", "_"), *args[1:]]
    return args


def end_without_collecting() -> None:
    """What a `memesh` process does last (the first exit handler registered, so the last to
    run): close the database, then leave whatever is still alive to the OS (gc.freeze).

    Tearing the interpreter down runs the cycle collector over every object Django, the
    operations and their schemas built: ~0.1-0.2 s of each hook's or command's process
    (docs/performance-notes.md), for memory the OS takes back anyway. What only the collector
    would have closed is closed here first: the database connections (a connection closed
    here checkpoints its WAL as before). Files are closed where they are written, and the
    other exit handlers (logging's, the recall access counts') have run by now."""
    django_db = sys.modules.get("django.db")
    if django_db is not None:
        with contextlib.suppress(Exception):  # settings that never loaded: nothing is open
            django_db.connections.close_all()
    gc.freeze()


def main(argv: list[str] | None = None) -> None:
    atexit.register(end_without_collecting)
    args = command_args(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["mcp"] and not set(args[1:]) & {"-h", "--help"}:
        # The MCP server answers `initialize` before the SDK and Django load
        # (api/mcp_server/early_stdio.py): the host may list its tools that early.
        from api.mcp_server import early_stdio

        early_stdio.begin()
    if args[:1] == ["hook"] and not set(args[1:]) & {"-h", "--help"}:
        # Claude Code's hooks read stdin and never fail out loud (api/hooks/entry.py).
        sys.exit(hook_entry.run(args))
    # A short command is run by the `memesh serve` of this home when one is running: it has
    # Django and the model loaded already (api/cli/forward.py).
    status = cli_forward.forward(args)
    if status is not None:
        sys.exit(status)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["memesh", *args])


if __name__ == "__main__":
    main()
