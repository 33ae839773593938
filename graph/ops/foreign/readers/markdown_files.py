"""Markdown files as note-keeping programs leave them (basic-memory's notes, Claude Code's
CLAUDE.md and memory files): the file read as text or named as unreadable, its YAML front
matter split off, its body cut at headings, and text longer than one observation cut at
paragraphs. Headings are found by a CommonMark parser (markdown-it-py), so a `#` line inside
a fenced code block stays code."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from graph.ops.foreign.records import ForeignProblem, Place
from graph.ops.kit.fields import MAX_OBSERVATION_CHARS

# A note is text a person or an agent wrote; a file this large is something else (a log, a
# dump) and is named rather than read into memory whole.
MAX_NOTE_BYTES = 16 * 1024 * 1024
FENCE = "---"

MARKDOWN = MarkdownIt("commonmark")


@dataclass(frozen=True)
class FrontMatter:
    """A note split at its front matter: the YAML mapping (empty when there is none), the
    body after it, and the file line (1-based) the body starts on."""

    metadata: dict[str, object]
    body: str
    body_line: int


@dataclass(frozen=True)
class Section:
    """A part of a body that starts at a heading (or the text before the first heading, with
    no heading): the heading's text and source line, the text under it, the file line
    (1-based) it starts on and the file line its text starts on."""

    heading: str | None
    heading_line: str | None
    text: str
    line: int
    text_line: int


def read_text(path: Path, place: Place) -> str | ForeignProblem:
    """The file's text (UTF-8, a byte-order mark dropped), or the problem that keeps it from
    being read: gone, too large, binary, not UTF-8, or empty."""
    try:
        size = path.stat().st_size
        if size > MAX_NOTE_BYTES:
            return ForeignProblem(
                place, f"is {size} bytes, more than a note's {MAX_NOTE_BYTES}; not read"
            )
        data = path.read_bytes()
    except OSError as exc:
        return ForeignProblem(place, f"cannot be read: {exc.strerror or exc}")
    if b"\x00" in data:
        return ForeignProblem(place, "is a binary file (it holds NUL bytes), not Markdown")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.start + 1].hex()
        return ForeignProblem(
            Place(place.file, line), f"is not UTF-8 text (byte 0x{bad} at offset {exc.start})"
        )
    if not text.strip():
        return ForeignProblem(place, "is empty: nothing to import")
    return text


def split_front_matter(text: str, file: str) -> FrontMatter | ForeignProblem:
    """The YAML between a first line `---` and the next `---` line, parsed safely;
    a note without one has empty metadata. An unclosed block, YAML that does not parse or
    YAML that is not a mapping is a problem naming the file line."""
    lines = text.split("\n")
    if lines[0].rstrip() != FENCE:
        return FrontMatter({}, text, 1)
    end = next(
        (i for i in range(1, len(lines)) if lines[i].rstrip() == FENCE),
        None,
    )
    if end is None:
        return ForeignProblem(
            Place(file, 1), "front matter opened with `---` is never closed", field="front matter"
        )
    try:
        loaded = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # The mark counts from 0 within the YAML; the YAML starts on the file's line 2.
        line = mark.line + 2 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc)
        return ForeignProblem(
            Place(file, line),
            f"front matter is not valid YAML: {reason}",
            field="front matter",
            value=shorten(lines[line - 1] if line <= len(lines) else ""),
        )
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        return ForeignProblem(
            Place(file, 2),
            f"front matter must be a mapping of fields, not a {type(loaded).__name__}",
            field="front matter",
            value=shorten(lines[1] if len(lines) > 1 else ""),
        )
    return FrontMatter({str(k): v for k, v in loaded.items()}, "\n".join(lines[end + 1 :]), end + 2)


def sections(
    body: str, first_line: int, *, deepest: int = 2, skip: frozenset[int] = frozenset()
) -> list[Section]:
    """The body cut before every top-level heading of level 1..`deepest` (deeper headings stay
    inside their section); the text before the first such heading is a section with no
    heading. Body lines (0-based) in `skip` are left out (a reader has taken them already);
    sections with no text under their heading are left out."""
    lines = body.split("\n")
    # (first line, first line under the heading, heading): a setext heading takes two lines.
    starts: list[tuple[int, int, str | None]] = [(0, 0, None)]
    tokens = MARKDOWN.parse(body)
    for index, token in enumerate(tokens):
        top = token.type == "heading_open" and token.level == 0 and token.map is not None
        if top and token.map is not None and int(token.tag[1:]) <= deepest:
            starts.append((token.map[0], token.map[1], tokens[index + 1].content.strip()))
    found: list[Section] = []
    ends = [start for start, _, _ in starts[1:]] + [len(lines)]
    for (start, under, heading), end in zip(starts, ends, strict=True):
        kept = [i for i in range(under, end) if i not in skip]
        text = "\n".join(lines[i] for i in kept).strip("\n")
        if text.strip():
            first = next(i for i in kept if lines[i].strip())
            heading_line = "\n".join(lines[start:under]).strip() if heading is not None else None
            found.append(
                Section(heading, heading_line, text, first_line + start, first_line + first)
            )
    return found


def blocks(body: str) -> list[Token]:
    """The body's CommonMark tokens (for readers that look inside list items)."""
    return MARKDOWN.parse(body)


def chunks(text: str, limit: int = MAX_OBSERVATION_CHARS) -> list[str]:
    """`text` as observations of at most `limit` characters: whole when it fits, else packed
    paragraph by paragraph, a paragraph longer than `limit` cut at lines and then at
    characters (the lines of a cut paragraph are then kept apart by blank lines)."""
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    current = ""
    for part in _pieces(text, limit):
        joined = f"{current}\n\n{part}" if current else part
        if len(joined) <= limit:
            current = joined
        else:
            pieces.append(current)
            current = part
    if current:
        pieces.append(current)
    return pieces


def _pieces(text: str, limit: int) -> Iterator[str]:
    for paragraph in text.split("\n\n"):
        paragraph = paragraph.strip("\n")
        if not paragraph.strip():
            continue
        if len(paragraph) <= limit:
            yield paragraph
            continue
        for line in paragraph.split("\n"):
            for start in range(0, len(line), limit):
                if line[start : start + limit].strip():
                    yield line[start : start + limit]


def timestamp(value: object) -> datetime | None:
    """A front-matter date or time as an aware datetime (a date alone is its midnight, a naive
    time the local zone's, as the programs that wrote it meant); None when it is neither."""
    if isinstance(value, datetime):
        found = value
    elif isinstance(value, date):
        found = datetime.combine(value, time())
    elif isinstance(value, str):
        try:
            found = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    return found if found.tzinfo is not None else found.astimezone()


def plain(value: object) -> object:
    """A front-matter value as JSON can hold it (dates as ISO text), for a memory's `extra`."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def shorten(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"
