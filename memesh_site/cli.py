"""The `memesh` command: Django's management commands under the product's name.

`memesh serve`, `memesh migrate`, `memesh check`, ... are the same commands as
`python manage.py ...`, usable from any directory once memesh is installed.
"""

from __future__ import annotations

import os
import sys

from memesh_site import cli_forward, hook_entry


def command_args(args: list[str]) -> list[str]:
    """Django names commands after modules (`export_schema`); the CLI also takes the hyphenated
    spelling the reference uses (`memesh export-schema`)."""
    if args and not args[0].startswith("-"):
        return [args[0].replace("-", "_"), *args[1:]]
    return args


def main(argv: list[str] | None = None) -> None:
    args = command_args(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not set(args[1:]) & {"-h", "--help"}:
        # Claude Code's hooks read stdin and never fail out loud (memesh_site/hook_entry.py).
        sys.exit(hook_entry.run(args))
    # A short command is run by the `memesh serve` of this home when one is running: it has
    # Django and the model loaded already (memesh_site/cli_forward.py).
    status = cli_forward.forward(args)
    if status is not None:
        sys.exit(status)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["memesh", *args])


if __name__ == "__main__":
    main()
