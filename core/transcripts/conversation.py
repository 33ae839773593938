"""A session's conversation: of each turn only what was said, as plain text, and the text cut
into pieces an LLM reads (transcript mining and work packages take it from here).

Kept of a turn: its text, cleaned — without the tags a host wraps around the context it injects
and its slash-command bookkeeping (`<system-reminder>`, `<command-name>`,
`<local-command-stdout>`, ...), ANSI escapes and control characters, NFC-normalised, cut at
MAX_TURN_CHARS. Tool calls, their results, thinking and images are left out; a turn with no
text left is no part of the conversation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from core.transcripts.turns import Turn

MAX_TURN_CHARS = 4_000  # a pasted log is cut: the durable part of a turn is rarely past this

# Context a host injects into turns, and slash-command bookkeeping: not the conversation.
_INJECTED = re.compile(
    r"<(system-reminder|command-name|command-message|command-args|command-contents|"
    r"local-command-stdout|local-command-stderr|user-memory-input|hook_context|session_context)>"
    r".*?</\1>",
    re.DOTALL,
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BLANK_LINES = re.compile(r"\n{3,}")


def as_recorded(turn: Turn) -> Turn:
    """Every turn, whole: for a reader that needs the tool traffic and the exact text."""
    return turn


def conversation_turn(turn: Turn) -> Turn | None:
    """What was said in `turn` (its cleaned text), or None when nothing was."""
    text = clean_text(turn.text)
    return Turn(turn.role, text, turn.timestamp) if text else None


def clean_text(text: str) -> str:
    """`text` without injected context, escapes and control characters, NFC-normalised, blank
    runs shortened, cut at MAX_TURN_CHARS."""
    text = _INJECTED.sub("", text)
    text = _ANSI.sub("", text)
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _CONTROL.sub("", text)
    text = _BLANK_LINES.sub("\n\n", text).strip()
    if len(text) > MAX_TURN_CHARS:
        cut = len(text) - MAX_TURN_CHARS
        text = f"{text[:MAX_TURN_CHARS].rstrip()} … ({cut} characters cut)"
    return text


def render_turn(turn: Turn) -> str:
    return f"[{turn.role}] {turn.text}"


def chunks(turns: Sequence[Turn], start: int, max_chars: int) -> list[tuple[int, int]]:
    """`turns[start:]` as contiguous (begin, end) index ranges, each rendering to at most
    `max_chars` (a turn longer than that is a range of its own)."""
    out: list[tuple[int, int]] = []
    begin, size = start, 0
    for index in range(start, len(turns)):
        length = len(render_turn(turns[index])) + 1
        if index > begin and size + length > max_chars:
            out.append((begin, index))
            begin, size = index, 0
        size += length
    if begin < len(turns):
        out.append((begin, len(turns)))
    return out
