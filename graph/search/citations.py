"""`[mem:<id>]` handles: how a memory is cited, and the one parser every path reads them with.

A handle is the entity's id in square brackets after `mem:` — `[mem:42]` — as the briefing
prints it after each memory line (graph/ops/briefing/render.py) and the agent guide asks an
agent to write it back when a memory changed what it did. The feedback service
(graph/ops/feedback.py) counts each cited id as a hit; `remember` and the Stop hook's
transcript reach it through `cited_ids`. Pure Python, no Django.

`mem` is matched in any case (`[MEM:42]` is a handle too, as the briefing's own escaping
treats it); no space is allowed inside the brackets, so prose such as "[mem: the auth note]"
cites nothing. An id longer than 18 digits cannot be a stored id (SQLite's integer is 64-bit)
and is ignored rather than refused: a transcript is text someone else wrote.
"""

from __future__ import annotations

import re

HANDLE_PREFIX = "mem:"
MAX_ID_DIGITS = 18
# The distinct handles read from one text, first ones first: a transcript is bounded by its
# sender, not by us, and no session cites more memories than this.
MAX_CITED = 500

_HANDLE = re.compile(rf"\[mem:(\d{{1,{MAX_ID_DIGITS}}})\]", re.IGNORECASE)


def handle(entity_id: int) -> str:
    """The handle that cites this memory: `[mem:<id>]`."""
    return f"[{HANDLE_PREFIX}{entity_id}]"


def cited_ids(text: str, *, limit: int = MAX_CITED) -> list[int]:
    """The distinct ids cited in `text`, in order of first citation, at most `limit`."""
    seen: dict[int, None] = {}
    for match in _HANDLE.finditer(text):
        seen.setdefault(int(match.group(1)), None)
        if len(seen) >= limit:
            break
    return list(seen)
