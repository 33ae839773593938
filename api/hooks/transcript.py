"""The session that is running, as the Stop and PreCompact hooks read it (core/transcripts reads
the file — Claude Code's transcript or Codex's rollout file, whichever the host handed over —
its format, what is skipped, the size bound): the agent's replies, its tool calls with their
results, and where the current turn began.

A reply is the text of one assistant message, which the host may write as several records
sharing its id; what the agent said is only what it said in its own messages, never the memory
block memesh injected (that reaches the transcript as hook attachments and meta records, which
the reader skips). A turn begins at a prompt the user typed (a user record whose content is
text, not tool results). Only the last MAX_BYTES of the file are read: a long session's
earlier turns were read by the Stop hooks that ended them.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from api.hooks.tools import COMMIT_COMMAND, COMMIT_LINE, EDIT_TOOLS, PATCH_TOOL, patch_files
from core.transcripts import as_recorded, claude_projects_dir, read_session
from graph.capture.session_evidence import ErrorSignal, FixSignal, SessionEvidence

MAX_BYTES = 8 * 1024 * 1024
SUBJECT_CHARS = 120
MESSAGE_CHARS = 200

_TEST_COMMAND = re.compile(
    r"\b(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|"
    r"go\s+test|cargo\s+test|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test|make\s+(?:test|check)|"
    r"gradlew?\s+test|mvn\s+test|dotnet\s+test|mix\s+test|deno\s+test|"
    r"python3?\s+-m\s+(?:pytest|unittest))\b"
)
_MEMESH_WRITE_COMMAND = re.compile(r"\bmemesh\s+(?:remember|learn)\b")


@dataclass
class ToolCall:
    id: str
    name: str
    input: dict[str, object]
    turn: int
    is_error: bool | None = None  # None: no result seen (yet)
    result: str = ""

    @property
    def command(self) -> str:
        value = self.input.get("command")
        return value if isinstance(value, str) else ""

    @property
    def file(self) -> str:
        if self.name == PATCH_TOOL:
            return next(iter(self.edited_files()), "")
        for key in ("file_path", "notebook_path", "path"):
            value = self.input.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    def edited_files(self) -> list[str]:
        """The files this call wrote: an edit tool's one, every file a patch names."""
        if self.name == PATCH_TOOL:
            patch = self.input.get("patch")
            return patch_files(patch) if isinstance(patch, str) else []
        return [self.file] if self.name in EDIT_TOOLS and self.file else []


@dataclass
class Transcript:
    replies: list[tuple[int, str]] = field(default_factory=list)  # (turn, text), oldest first
    calls: list[ToolCall] = field(default_factory=list)
    turn: int = 0  # the current (last) turn's number
    truncated: bool = False  # the file was longer than MAX_BYTES

    def reply_texts(self) -> list[str]:
        return [text for _, text in self.replies]

    def turn_calls(self) -> list[ToolCall]:
        return [c for c in self.calls if c.turn == self.turn]


def read_transcript(path: Path) -> Transcript:
    """The transcript at `path` (the module docstring says what is read); a missing file
    raises OSError."""
    session = read_session(path, view=as_recorded, tail_bytes=MAX_BYTES)
    out = Transcript(truncated=session.truncated)
    texts: dict[str, list[str]] = {}  # message id -> its text, record by record
    order: list[tuple[str, int]] = []  # (message id, turn) in order of first appearance
    by_id: dict[str, ToolCall] = {}
    for turn in session.turns:
        if turn.role == "user":
            if turn.is_prompt:
                out.turn += 1
                continue
            for result in turn.tool_results:
                call = by_id.get(result.tool_use_id)
                if call is not None:
                    call.is_error = result.is_error
                    call.result = result.text
            continue
        message_id = turn.message_id or str(len(order))
        if turn.text:
            if message_id not in texts:
                texts[message_id] = []
                order.append((message_id, out.turn))
            texts[message_id].append(turn.text)
        for use in turn.tool_uses:
            call = ToolCall(id=use.id, name=use.name, input=use.input, turn=out.turn)
            by_id[call.id] = call
            out.calls.append(call)
    out.replies = [(turn, "\n\n".join(texts[mid]).strip()) for mid, turn in order]
    out.replies = [(turn, text) for turn, text in out.replies if text]
    return out


# --- what happened: the session's evidence ----------------------------------------------------


_ERROR_WORDS = re.compile(
    r"(?i)\b(?:error|failed|failure|exception|fatal|denied|not found|no such|cannot|refused|"
    r"timed out)\b"
)


def _error_line(text: str) -> str:
    """The line of a tool's output that says what went wrong: the first naming an error,
    else the last one (test runners and compilers end with the verdict)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no message)"
    named = next((line for line in lines if _ERROR_WORDS.search(line)), lines[-1])
    return named[:MESSAGE_CHARS]


def _normalised(command: str) -> str:
    return " ".join(command.split())


def is_commit(call: ToolCall) -> bool:
    return call.name == "Bash" and bool(COMMIT_COMMAND.search(call.command))


def committed(call: ToolCall) -> str | None:
    """`abc1234 subject` of the commit a successful `git commit` call printed."""
    if not is_commit(call) or call.is_error:
        return None
    match = COMMIT_LINE.search(call.result)
    return f"{match.group(2)[:7]} {match.group(3)}" if match else None


def session_evidence(transcript: Transcript, session_id: str) -> SessionEvidence:
    evidence = SessionEvidence(session_id=session_id, tool_calls=len(transcript.calls))
    edited: dict[str, None] = {}
    edited_since: list[str] = []  # files edited since each failing command (see below)
    failing: dict[str, tuple[str, int]] = {}  # command -> (error line, edits seen before)
    fixed: set[str] = set()
    for call in transcript.calls:
        for path in call.edited_files():
            base = posixpath.basename(path.replace("\\", "/"))
            edited.setdefault(base, None)
            edited_since.append(base)
        if call.name == "Bash":
            evidence.commands += 1
        if call.is_error:
            subject = (
                f"`{_normalised(call.command)[:SUBJECT_CHARS]}`"
                if call.command
                else posixpath.basename(call.file)
            )
            evidence.errors.append(ErrorSignal(call.name, subject, _error_line(call.result)))
            if call.command:
                failing.setdefault(
                    _normalised(call.command), (_error_line(call.result), len(edited_since))
                )
        elif call.is_error is False and call.command:
            key = _normalised(call.command)
            if key in failing and key not in fixed:
                error, since = failing[key]
                files = list(dict.fromkeys(edited_since[since:]))
                evidence.fixes.append(FixSignal(f"`{key[:SUBJECT_CHARS]}`", error, files))
                fixed.add(key)
        if (commit := committed(call)) is not None:
            evidence.commits.append(commit)
    evidence.files_edited = list(edited)
    return evidence


# --- what the turn did: the "consider a remember" line ----------------------------------------


@dataclass(frozen=True)
class TurnSignals:
    plan_approved: bool = False
    question_answered: bool = False
    committed: bool = False
    tests_red_then_green: bool = False
    remembered: bool = False  # a remember / learn call, or a note file written

    def worth_a_remember(self) -> list[str]:
        if self.remembered:
            return []
        return [
            what
            for what, happened in (
                ("approved a plan", self.plan_approved),
                ("answered a question", self.question_answered),
                ("committed", self.committed),
                ("turned a test red then green", self.tests_red_then_green),
            )
            if happened
        ]


def _writes_memory(call: ToolCall) -> bool:
    name = call.name.lower()
    if "memesh" in name and ("remember" in name or "learn" in name):
        return True
    if call.name == "Bash" and _MEMESH_WRITE_COMMAND.search(call.command):
        return True
    # A note in Claude Code's own memory directory (<slug>/memory/*.md under its projects
    # folder): the configured one, or the default's (the host's environment may differ from
    # the server's that reads its transcript).
    path = call.file.replace("\\", "/")
    configured = f"{claude_projects_dir().as_posix()}/"
    in_projects = path.startswith(configured) or "/.claude/projects/" in path
    return call.name in EDIT_TOOLS and in_projects and "/memory/" in path


def turn_signals(transcript: Transcript) -> TurnSignals:
    calls = transcript.turn_calls()
    red = False
    green_after_red = False
    for call in calls:
        if call.name == "Bash" and _TEST_COMMAND.search(call.command):
            if call.is_error:
                red = True
            elif call.is_error is False and red:
                green_after_red = True
    return TurnSignals(
        plan_approved=any(c.name == "ExitPlanMode" and c.is_error is False for c in calls),
        question_answered=any(c.name == "AskUserQuestion" and c.is_error is False for c in calls),
        committed=any(committed(c) is not None for c in calls),
        tests_red_then_green=green_after_red,
        remembered=any(_writes_memory(c) for c in calls),
    )
