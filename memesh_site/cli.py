"""The `memesh` command: Django's management commands under the product's name.

`memesh serve`, `memesh migrate`, `memesh check`, ... are the same commands as
`python manage.py ...`, usable from any directory once memesh is installed.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(["memesh", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    main()
