"""remember's `note`: free text parsed into a title, observations and a derived name."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, Field

from graph.ops.kit.fields import (
    MAX_NOTE_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_OBSERVATIONS,
    MAX_TITLE,
    not_blank,
)

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")
_NOT_SLUG = re.compile(r"[^\w]+")
NOTE_SLUG_CHARS = 60
NOTE_HASH_CHARS = 10


@dataclass(frozen=True, slots=True)
class ParsedNote:
    """A `note` split the way remember stores it, and the name that text always gets."""

    title: str
    observations: list[str]
    name: str


def parse_note(text: str) -> ParsedNote:
    """First line -> title, each following paragraph (blank-line separated) -> one observation.

    A first line longer than the title limit is shortened for the title (the note's author
    chose no title, so there is nobody to refuse) and also kept whole as the first
    observation, so no text is lost. The name is `note-<slug of title>-<hash>`, the hash taken
    over the parsed shape with whitespace normalised: the same text twice (even re-wrapped)
    is one memory, while two notes that share a first line stay two.
    """
    first, _, rest = text.strip().partition("\n")
    first = first.strip()
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(rest.strip()) if p.strip()]
    title = first
    if len(first) > MAX_TITLE:
        cut = first[: MAX_TITLE - 1]
        # At a word boundary when there is one in the last quarter; else a hard cut.
        space = cut.rfind(" ")
        title = (cut[:space] if space > MAX_TITLE * 3 // 4 else cut).rstrip() + "…"
        paragraphs.insert(0, first)
    canonical = "\n\n".join(" ".join(part.split()) for part in (first, *paragraphs))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:NOTE_HASH_CHARS]
    slug = _NOT_SLUG.sub("-", first.lower()).strip("-_")[:NOTE_SLUG_CHARS].strip("-_")
    name = f"note-{slug}-{digest}" if slug else f"note-{digest}"
    return ParsedNote(title=title, observations=paragraphs, name=name)


def _valid_note(value: str) -> str:
    value = not_blank(value)
    parsed = parse_note(value)
    if len(parsed.observations) > MAX_OBSERVATIONS:
        raise ValueError(
            f"at most {MAX_OBSERVATIONS} paragraphs after the first line "
            f"(got {len(parsed.observations)})"
        )
    longest = max((len(p) for p in parsed.observations), default=0)
    if longest > MAX_OBSERVATION_CHARS:
        raise ValueError(
            f"each paragraph must be at most {MAX_OBSERVATION_CHARS} characters (one has {longest})"
        )
    return value


NoteText = Annotated[
    str, Field(min_length=1, max_length=MAX_NOTE_CHARS), AfterValidator(_valid_note)
]
