"""Principal ids — the routing ids agents send to, and the identity a session declares with
MEMESH_RECIPIENT — checked by one rule everywhere (the operation, the hooks, `memesh mcp`).

The agent guide: an id over 200 characters, or shaped like a filesystem path, is refused
rather than silently accepted. An id names a mailbox, and ids end up in hook state, logs and
the lines an agent is shown; a path-shaped one is most likely a mistake (a directory pasted
into the variable) and must never be usable as one. Blanks and control characters are refused
too: an id sits in the header of a fenced envelope, where a newline could forge a line.

Pure Python: the hooks run this before any database is opened.
"""

from __future__ import annotations

import re
import unicodedata

MAX_PRINCIPAL_CHARS = 200

# A Windows drive (`C:`, `c:\...`) or a URL-ish scheme path: path-shaped as much as `/x` is.
_DRIVE = re.compile(r"^[A-Za-z]:")


def principal_problem(value: str) -> str | None:
    """Why `value` is not a usable principal id, or None when it is one."""
    if not value:
        return "is empty"
    if len(value) > MAX_PRINCIPAL_CHARS:
        return f"is longer than {MAX_PRINCIPAL_CHARS} characters ({len(value)})"
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zs", "Zl", "Zp") for ch in value):
        return "contains blanks or control characters"
    if (
        "/" in value
        or "\\" in value
        or ".." in value
        or value.startswith(("~", "."))
        or _DRIVE.match(value)
    ):
        return "is shaped like a filesystem path"
    return None


def describe(value: str, *, what: str = "recipient id") -> str:
    """The refusal sentence for an invalid id: its first 40 characters quoted (escaped, so a
    control character cannot reach a terminal or a log line raw)."""
    problem = principal_problem(value) or "is valid"
    shown = value if len(value) <= 40 else value[:40] + "…"
    return f"The {what} {shown!r} {problem}; it is refused"
