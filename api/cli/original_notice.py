"""The notice a person gets on their first `memesh` command in a home shared with the original
MeMesh: where its memories are, how many, and the one command that brings them in.

Said once, not on every call: what was shown is kept in MEMESH_HOME (NOTICE_FILENAME), and the
notice comes back only when the original holds more memories memesh lacks than when it was
last shown (the original is still in use beside memesh). Once imported, nothing is said.
`memesh status`, `memesh doctor` and `memesh serve` say it every time (they are where one
looks), so they are left out here, as are the processes no person reads (hooks, `memesh mcp`,
the worker), `memesh import` (already the way in) and --json output, which a program reads.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from core import original_memesh, paths

NOTICE_FILENAME = "original-memesh-notice.json"
# Commands that say it themselves, have no person reading their stderr, or are the import.
SILENT_COMMANDS = frozenset({"status", "doctor", "serve", "hook", "mcp", "worker", "import"})


def show_once(command_name: str, options: dict[str, Any], write: Callable[[str], object]) -> None:
    """Write the notice with `write` (the command's stderr) unless it was shown already."""
    if command_name in SILENT_COMMANDS or options.get("json"):
        return
    # Settings looked at this file already (the answer is kept): in a home without the
    # original, every command ends here, before the graph's reads are even imported.
    default = paths.memesh_home() / paths.DB_FILENAME
    if original_memesh.classify(default) is not original_memesh.Owner.ORIGINAL:
        return
    from graph import status

    state = status.original_memesh_state()
    if state is None or not state.not_imported:
        return
    marker = paths.memesh_home() / NOTICE_FILENAME
    try:
        shown = json.loads(marker.read_text())
    except (OSError, ValueError):
        shown = {}
    if not isinstance(shown, dict):
        shown = {}
    path = str(state.found.path)
    if shown.get("path") == path and int(shown.get("notImported", -1)) >= state.not_imported:
        return
    write(f"{state.sentence()}.")
    # A read-only home: said again next time, which is better than never.
    with contextlib.suppress(OSError):
        paths.write_private_json(marker, {"path": path, "notImported": state.not_imported})
