"""Text of a briefing: memory lines, the shared character budget, and the fence.

Memory content is attacker-influenced (a pasted web page, an imported bundle, a tool output that
was remembered), so everything here treats it as data: each memory becomes exactly one line
(newlines collapsed, so it cannot forge a heading or a fence line of its own), and the whole
block sits inside a fence longer than any backtick run in it, after a preamble saying it is
background data, not instructions (core/fence.py). Memory is wrapped here and only here, so
every path (MCP, HTTP, CLI, hooks) gets the same protection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.fence import MEMORY_INFO, MEMORY_PREAMBLE, untrusted_block
from graph.search.citations import handle

# One limit for everything inside the fence (handoff, task state, memory lines, index); the
# preamble and the fence itself are outside it, as repository facts are in the agent guide.
BUDGET_CHARS = 4000
# A single line never eats the budget alone: titles are short by schema (200), but an untitled
# memory's snippet comes from an observation of up to 10,000 characters.
MAX_SNIPPET_CHARS = 160
MAX_REASON_CHARS = 160

_WHITESPACE = re.compile(r"\s+")
# A memory must not be able to print a handle that points at another memory.
_HANDLE = re.compile(r"\[mem:", re.IGNORECASE)


def clean(text: str, limit: int = MAX_SNIPPET_CHARS) -> str:
    """One line of at most `limit` characters: whitespace (newlines included) collapsed."""
    one_line = _WHITESPACE.sub(" ", text).strip()
    one_line = _HANDLE.sub("[mem ", one_line)
    if len(one_line) > limit:
        one_line = one_line[: limit - 1].rstrip() + "…"
    return one_line


def memory_line(type_: str, label: str, entity_id: int, suffix: str = "") -> str:
    """`- [type] title-or-snippet[ suffix] [mem:id]` — the one shape of a memory line."""
    tail = f" {suffix}" if suffix else ""
    return f"- [{clean(type_, 40)}] {label}{tail} {handle(entity_id)}"


@dataclass
class Section:
    heading: str
    lines: list[str] = field(default_factory=list)
    # Memory lines count toward entityCount; task-state lines do not.
    counts: bool = True


@dataclass
class Rendered:
    body_lines: list[str]
    memory_lines: int


def fit(sections: list[Section], *, head: list[str], budget: int = BUDGET_CHARS) -> Rendered:
    """Lay sections out in priority order until the budget is spent.

    A heading is written only together with its first line (no empty headings); a line that
    does not fit is skipped, and a later shorter one may still fit, so the budget is used
    rather than cut at the first long line.
    """
    out = list(head)
    used = sum(len(line) + 1 for line in out)
    counted = 0
    for section in sections:
        started = False
        for line in section.lines:
            cost = len(line) + 1
            extra = 0 if started else len(section.heading) + 2  # blank line + heading
            if used + cost + extra > budget:
                continue
            if not started:
                out.extend(["", section.heading])
                started = True
            out.append(line)
            used += cost + extra
            if section.counts:
                counted += 1
    return Rendered(out, counted)


def wrap(body_lines: list[str]) -> str:
    """The lines as the fenced memory block every path shows (core/fence.py)."""
    return untrusted_block("\n".join(body_lines), preamble=MEMORY_PREAMBLE, info=MEMORY_INFO)
