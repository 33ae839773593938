"""Remember N entities in this process: `remember_many.py PROC N [START_FILE]`.

Entity `p{PROC}-e{i}` gets one observation holding a token found nowhere else,
`w{PROC}x{i}`, plus filler text shared by every entity. Runs against the database named by
MEMESH_DB_PATH / MEMESH_HOME; exits non-zero (with the traceback) on the first exception.

With START_FILE, the process gets fully ready (Django set up, connection open) and then
waits for that file to appear, so several processes can be released to write at once.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"

FILLER = "shared filler text written by two processes at the same time"
START_WAIT_SECONDS = 60


def unique_token(proc: str, i: int) -> str:
    return f"w{proc}x{i}"


def wait_for(start_file: Path) -> None:
    deadline = time.monotonic() + START_WAIT_SECONDS
    while not start_file.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{start_file} never appeared")
        time.sleep(0.005)


def main() -> None:
    import django

    django.setup()
    from django.db import connection

    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS

    proc, count = sys.argv[1], int(sys.argv[2])
    remember = OPERATIONS["remember"]
    ctx = CallContext(source_host="cli")
    connection.ensure_connection()
    if len(sys.argv) > 3:
        wait_for(Path(sys.argv[3]))
    for i in range(count):
        result = remember.run(
            {
                "name": f"p{proc}-e{i}",
                "type": "note",
                "observations": [f"{unique_token(proc, i)} {FILLER}"],
                "tags": [f"proc:{proc}"],
            },
            ctx,
        )
        if not result["created"]:
            raise RuntimeError(f"p{proc}-e{i} already existed")
    sys.stdout.write(f"remembered {count}\n")


if __name__ == "__main__":
    main()
