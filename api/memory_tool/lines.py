"""A memory as a file: an entity's observations, in id order, joined by newlines, no header.

Pure Python (no Django). Order is by observation id (insertion), never by score, so a line
number read by one `view` still addresses the same memory when the next turn edits it. An
observation may contain newlines, so the line → observation map is computed from the rendered
text, not assumed one-to-one. Every function takes the observation texts and returns text or a
plan; the services apply plans to rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.errors import InvalidInput, OperationFailed
from graph.ops.kit.fields import MAX_OBSERVATION_CHARS


@dataclass(frozen=True, slots=True)
class Splice:
    """Observations `[start, stop)` (by position in id order) become `text` — one observation,
    or none when `text` is None. `start == stop` inserts `text` before position `start`.
    `line` is the (1-based) line where the edit began, for the reply."""

    start: int
    stop: int
    text: str | None
    line: int


def render(texts: Sequence[str]) -> str:
    return "\n".join(texts)


def file_lines(file_text: str) -> list[str]:
    """The observations a written file holds: one per line, stripped (as remember stores
    them, so forget can match them); blank lines cannot be observations."""
    lines = [line.strip() for line in file_text.splitlines() if line.strip()]
    for line in lines:
        check_observation(line)
    return lines


def check_observation(text: str) -> None:
    if len(text) > MAX_OBSERVATION_CHARS:
        raise InvalidInput(
            f"A memory line is at most {MAX_OBSERVATION_CHARS} characters (got {len(text)})"
        )


def numbered(texts: Sequence[str], view_range: tuple[int, int] | None, path: str) -> str:
    """`view` of a file: each line as `cat -n` numbers it, optionally only `view_range`
    (`[start, end]`, 1-based and inclusive; end -1 reads to the end)."""
    lines = render(texts).split("\n") if texts else []
    start, end = 1, len(lines)
    if view_range is not None:
        start, end = view_range
        if end == -1:
            end = len(lines)
        if start < 1 or start > max(len(lines), 1) or end < start or end > len(lines):
            raise InvalidInput(
                f"Invalid view_range {list(view_range)}: {path} has {len(lines)} lines"
            )
    if not lines:
        return f"{path} is empty"
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))


def insert_position(texts: Sequence[str], insert_line: int, path: str) -> int:
    """Where a line inserted after `insert_line` goes, as an observation position: after the
    whole memory owning that line, never into the middle of a multi-line one; 0 prepends."""
    owners: list[int] = []
    for i, text in enumerate(texts):
        owners.extend([i] * (text.count("\n") + 1))
    if insert_line < 0 or insert_line > len(owners):
        raise InvalidInput(
            f"Invalid insert_line {insert_line}: {path} has {len(owners)} lines (0 prepends)"
        )
    return 0 if insert_line == 0 else owners[insert_line - 1] + 1


def insert_text(raw: str) -> str:
    """The observation an `insert` adds: its text without surrounding blank lines/spaces."""
    text = raw.strip()
    if not text:
        raise InvalidInput("`insert_text` must not be blank")
    check_observation(text)
    return text


def _line_of(rendered: str, offset: int) -> int:
    return rendered.count("\n", 0, offset) + 1


def _occurrences(haystack: str, needle: str) -> list[int]:
    """Start offsets of every occurrence, overlapping ones included (each is ambiguous)."""
    found: list[int] = []
    at = haystack.find(needle)
    while at != -1:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def plan_str_replace(texts: Sequence[str], old_str: str, new_str: str, path: str) -> Splice:
    """The content-addressed edit replacing the one occurrence of `old_str` with `new_str`.

    Refuses (nothing changes) when `old_str` is empty, absent, or occurs more than once — the
    reply then names the line of every occurrence so the model can widen it: editing the first
    match would be a silent wrong write. Observations the edit does not touch keep their rows.
    """
    if not old_str:
        raise InvalidInput("`old_str` must not be empty")
    rendered = render(texts)
    found = _occurrences(rendered, old_str)
    if not found:
        raise OperationFailed(f"No match for old_str in {path}; nothing changed")
    if len(found) > 1:
        lines = ", ".join(str(_line_of(rendered, at)) for at in found)
        raise OperationFailed(
            f"old_str occurs {len(found)} times in {path}, at lines {lines}; nothing changed. "
            "Include more surrounding text so it matches exactly once."
        )
    start, end = found[0], found[0] + len(old_str)

    # Observation i spans [spans[i][0], spans[i][1]) of the rendered text; one "\n" between.
    spans: list[tuple[int, int]] = []
    at = 0
    for text in texts:
        spans.append((at, at + len(text)))
        at += len(text) + 1
    # Affected: observations whose text the match overlaps, widened to a neighbour whose
    # separating newline it consumes (that joins the two).
    hit = [i for i, (s, e) in enumerate(spans) if s < end and start < e]
    first = hit[0] if hit else next(i for i, (s, _) in enumerate(spans) if s >= end)
    last = hit[-1] if hit else first - 1
    if start < spans[first][0]:
        first -= 1
    if end > spans[last][1]:
        last += 1
    region_start, region_end = spans[first][0], spans[last][1]
    new_region = rendered[region_start:start] + new_str + rendered[end:region_end]

    # Keep untouched observations at either edge as they are (same rows, same ids).
    keep_lo, keep_hi = first, last
    rest = new_region
    while keep_lo <= keep_hi and (rest == texts[keep_lo] or rest.startswith(texts[keep_lo] + "\n")):
        rest = rest[len(texts[keep_lo]) + 1 :]
        keep_lo += 1
    while keep_lo <= keep_hi and (rest == texts[keep_hi] or rest.endswith("\n" + texts[keep_hi])):
        rest = rest[: max(len(rest) - len(texts[keep_hi]) - 1, 0)]
        keep_hi -= 1
    # Stored stripped, as every other write stores an observation.
    rest = rest.strip()
    if rest:
        check_observation(rest)
    return Splice(keep_lo, max(keep_hi + 1, keep_lo), rest or None, _line_of(rendered, start))
