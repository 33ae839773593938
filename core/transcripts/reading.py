"""Reading one session transcript file (JSONL, one record a line), whichever host wrote it.

- **Lines.** A file is split at `\n` only (a record's text may hold U+2028 and other
  characters `str.splitlines` would split at), decoded as UTF-8 with bad bytes replaced, and
  parsed with core/json_limits.py's bounds. A line that is not a JSON object — the last line
  of a file the host is still writing, a line nested too deep — is skipped and counted, never
  an error; blank lines are not counted.
- **Size.** `tail_bytes` reads only the last that many bytes, from the first whole line in
  them (a hook reads the turn that just ended; the earlier ones were read by the hooks that
  ended them). Without it the whole file is read, streamed, keeping only the turns the view
  keeps: transcript mining counts what it has read in turns from the file's start, so it must
  see them all.
- **Formats.** Each record goes to the one host format its shape names (FORMATS); a format
  turns it into a Record and owns the rules for what it skips. A new host is one more entry.
  The session's `host` is the format of its first record that one claims. A record that
  restates the message of the turn before it (`Record.restates`) replaces that turn.
- **Views.** What a reader keeps of each turn: `conversation_turn` (the cleaned text, for
  mining) or `as_recorded` (everything, for the hooks).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from core import json_limits
from core.transcripts import claude_code, codex, gemini
from core.transcripts.conversation import conversation_turn
from core.transcripts.turns import Record, Session, Turn

View = Callable[[Turn], Turn | None]
RecordShape = Callable[[dict[str, object]], bool]
RecordParser = Callable[[dict[str, object]], Record]

# (the host, does the record have its shape, how its records read), first match wins.
FORMATS: tuple[tuple[str, RecordShape, RecordParser], ...] = (
    (codex.HOST, codex.is_record, codex.parse),
    (gemini.HOST, gemini.is_record, gemini.parse),
    (claude_code.HOST, claude_code.is_record, claude_code.parse),
)


def parse_record(record: dict[str, object]) -> Record:
    """`record` read by the host format its shape names; no turn when none claims it."""
    return _parsed(record)[1]


def _parsed(record: dict[str, object]) -> tuple[str, Record]:
    """The host whose format claims `record` ("" for none), and the record as it reads it."""
    for host, has_shape, parse in FORMATS:
        if has_shape(record):
            return host, parse(record)
    return "", Record(None)


def record_turn(record: dict[str, object]) -> Turn | None:
    """The conversation turn `record` holds, or None (no turn, or nothing but tool traffic and
    injected context)."""
    turn = parse_record(record).turn
    return conversation_turn(turn) if turn is not None else None


def read_session(
    path: Path, *, view: View = conversation_turn, tail_bytes: int | None = None
) -> Session:
    """The session file at `path` as the turns `view` keeps (the module docstring says how it
    is read). A file that cannot be opened or read raises OSError."""
    turns: list[Turn] = []
    session_id, cwd, host, skipped = "", "", "", 0
    last_id, last_kept = "", False  # the message id of the last turn read, and if it was kept
    with path.open("rb") as handle:
        truncated = _seek_tail(handle, tail_bytes)
        for raw in handle:
            line = raw.strip()
            if not line:
                continue
            record = _decoded(line)
            if record is None:
                skipped += 1
                continue
            format_host, parsed = _parsed(record)
            host = host or format_host
            session_id = session_id or parsed.session_id
            cwd = cwd or parsed.cwd
            if parsed.turn is None:
                continue
            kept = view(parsed.turn)
            message_id = parsed.turn.message_id
            if parsed.restates and message_id and message_id == last_id and last_kept:
                turns.pop()  # the message again, whole: this record replaces the last
            if kept is not None:
                turns.append(kept)
            last_id, last_kept = message_id, kept is not None
    return Session(
        session_id=session_id or path.stem,
        path=path,
        turns=tuple(turns),
        cwd=cwd,
        skipped_lines=skipped,
        truncated=truncated,
        host=host,
    )


def _seek_tail(handle: BinaryIO, tail_bytes: int | None) -> bool:
    """Move to the first whole line of the file's last `tail_bytes`; whether any was left out."""
    if tail_bytes is None:
        return False
    size = os.fstat(handle.fileno()).st_size
    if size <= tail_bytes:
        return False
    handle.seek(size - tail_bytes - 1)
    if handle.read(1) != b"\n":
        handle.readline()  # the rest of a line that began before the tail
    return True


def _decoded(line: bytes) -> dict[str, object] | None:
    try:
        record = json_limits.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
