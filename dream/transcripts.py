"""Claude Code's session transcripts of one project: where they are, and their conversation as
plain turns (transcript mining, dream/transcript_mining.py, reads them). Pure Python over
files; no Django models.

Where: `<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<slug>/<session-uuid>.jsonl`, one file per
session. The slug is the absolute path of the folder Claude Code was started in with every
character other than an ASCII letter or digit replaced by `-` (`/work/my_app.v2` ->
`-work-my-app-v2`); a slug longer than 200 characters is cut to 200 and given a hash suffix.
The record format is Claude Code's own and undocumented (Anthropic calls it internal), so it is
read defensively: a line that is not a JSON object, or a record of another shape, is skipped
and counted, never an error.

Which folders belong to a project: the slug of its root (the repository's top-level folder)
and of every folder inside it (a session started in `docs/` is the project's too). Slugs are
lossy (`/a/b.c` and `/a/b-c` share one), so a session is taken only when the `cwd` it records
is the root or inside it; a session that records no `cwd` is taken from the root's own slug.

What a turn is: a `user` or `assistant` record of the main conversation — not a sidechain
(`isSidechain`: a subagent's), not a meta record (`isMeta`: command caveats), not the summary
/compact writes (`isCompactSummary`: it retells turns the file already holds), not an API
error. Of its `message.content` (a string, or a list of blocks) only the text is kept:
`tool_use`, `tool_result`, `thinking` and image blocks are left out, as are the tags Claude
Code wraps around injected context and slash commands (`<system-reminder>`,
`<command-name>`, `<local-command-stdout>`, ...), ANSI escapes and control characters.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SLUG_LIMIT = 200  # Claude Code cuts longer slugs and adds a hash suffix
MAX_TURN_CHARS = 4_000  # a pasted log is cut: the durable part of a turn is rarely past this
ROLES = ("user", "assistant")

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
# Context Claude Code injects into turns, and slash-command bookkeeping: not the conversation.
_INJECTED = re.compile(
    r"<(system-reminder|command-name|command-message|command-args|command-contents|"
    r"local-command-stdout|local-command-stderr|user-memory-input)>.*?</\1>",
    re.DOTALL,
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BLANK_LINES = re.compile(r"\n{3,}")
_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]]*\]$")


@dataclass(frozen=True)
class Turn:
    role: str  # user | assistant
    text: str
    timestamp: str  # as recorded (ISO 8601), "" when absent


@dataclass(frozen=True)
class Session:
    session_id: str
    path: Path
    turns: tuple[Turn, ...]
    cwd: str  # the first recorded working directory, "" when none is recorded
    skipped_lines: int  # lines that are not JSON objects

    @property
    def started_at(self) -> str:
        return next((t.timestamp for t in self.turns if t.timestamp), "")

    @property
    def ended_at(self) -> str:
        return next((t.timestamp for t in reversed(self.turns) if t.timestamp), "")


def slug(directory: Path) -> str:
    """Claude Code's folder name for sessions started in `directory` (before any hash suffix)."""
    return _NOT_ALNUM.sub("-", str(directory))


def _dir_matches(name: str, root_slug: str) -> str | None:
    """ "exact" when `name` is the root's own folder, "inside" when it may be a folder inside the
    root (or the root's cut-and-hashed name), None otherwise."""
    if name == root_slug:
        return "exact"
    if name.startswith(root_slug[:SLUG_LIMIT] + "-"):
        return "inside"
    return None


def _inside(cwd: str, root: Path) -> bool:
    path = Path(cwd)
    return path == root or root in path.parents


def project_sessions(projects_dir: Path, root: Path) -> list[Session]:
    """Every readable session of the project rooted at `root` (an absolute, resolved path),
    oldest first (by first turn, then file name). Sessions without a turn are left out."""
    if not projects_dir.is_dir():
        return []
    root_slug = slug(root)
    sessions: list[Session] = []
    for folder in sorted(projects_dir.iterdir()):
        match = _dir_matches(folder.name, root_slug)
        if match is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.jsonl")):
            session = read_session(path)
            if not session.turns:
                continue
            if session.cwd and not _inside(session.cwd, root):
                continue  # a slug shared with an unrelated folder
            if not session.cwd and match != "exact":
                continue
            sessions.append(session)
    return sorted(sessions, key=lambda s: (s.started_at, s.path.name))


def _records(path: Path) -> Iterator[object]:
    """Each line decoded (None for a line that is not JSON). A file being written ends in a
    partial line: it decodes to None like any other bad line."""
    with path.open("rb") as handle:
        for raw in handle:
            line = raw.strip()
            if not line:
                continue
            try:
                yield json.loads(line.decode("utf-8", errors="replace"))
            except ValueError:
                yield None


def read_session(path: Path) -> Session:
    """One session file as its conversation turns."""
    turns: list[Turn] = []
    session_id, cwd, skipped = "", "", 0
    try:
        records = list(_records(path))
    except OSError:
        records = []
    for record in records:
        if not isinstance(record, dict):
            skipped += 1
            continue
        session_id = session_id or _string(record.get("sessionId"))
        cwd = cwd or _string(record.get("cwd"))
        turn = record_turn(record)
        if turn is not None:
            turns.append(turn)
    return Session(
        session_id=session_id or path.stem,
        path=path,
        turns=tuple(turns),
        cwd=cwd,
        skipped_lines=skipped,
    )


def _string(value: object) -> str:
    return value if isinstance(value, str) else ""


def record_turn(record: dict[str, object]) -> Turn | None:
    """The conversation turn a record holds, or None (not a turn, or nothing but tool traffic
    and injected context)."""
    role = record.get("type")
    if role not in ROLES:
        return None
    if any(record.get(flag) is True for flag in _NOT_CONVERSATION):
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    text = clean_text(content_text(message.get("content")))
    if not text or _INTERRUPTED.match(text):
        return None
    return Turn(role=str(role), text=text, timestamp=_string(record.get("timestamp")))


_NOT_CONVERSATION = ("isSidechain", "isMeta", "isCompactSummary", "isApiErrorMessage")


def content_text(content: object) -> str:
    """The text of a message's content: the string itself, or its `text` blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(parts)


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
