"""Lesson guards: a recorded mistake spoken at the moment it is about to repeat (PreToolUse
Bash). A warning, never a block: the agent reads it, and cites the lesson if it changes what it
does.

Which lessons guard: accepted ones — `lesson_learned` memories in the graph (stated with
`learn`, or a proposal a person accepted), active, trusted (never an import: it was written by
someone else), of this project or of no project. Staged proposals are not in the graph and
never fire.

What a lesson guards against: the commands it records as the mistake — a command quoted in
backticks in its `Error:` or `Root cause:` observation, or a whole `Command:` observation.
The `Fix:` and `Prevention:` lines are not read: they hold the right command, and warning on
it would teach the agent to avoid the fix. A recorded command guards only when it is specific
enough to mean something: at least two words, a program name first, and not matching any of
BENIGN_PROBES (a guard on `git status` would fire all day).

When a command matches, conservatively: the shell command is split into its simple commands
(at `;`, `&&`, `||`, `|` and newlines) and their words (shlex); a recorded command matches a
simple command when its first two words appear there in order, side by side (`git push`), and
each of its other words appears somewhere after them (`--force` anywhere in
`git push origin main --force`).
"""

from __future__ import annotations

import re
import shlex

from graph.capture.file_context import in_scope
from graph.models import Entity
from graph.ops.briefing import is_trusted
from graph.ops.briefing.render import clean, memory_line, wrap

LESSON_TYPE = "lesson_learned"
MAX_LESSONS_READ = 500
MAX_GUARDS_SHOWN = 3
MIN_COMMAND_CHARS = 6
BENIGN_PROBES = (
    "ls",
    "ls -la",
    "cd ..",
    "pwd",
    "echo ok",
    "cat README.md",
    "git status",
    "git diff",
    "git log",
    "npm test",
    "pytest",
    "make",
)

_CODE_SPAN = re.compile(r"`([^`\n]{1,300})`")
_MISTAKE_PREFIXES = ("error:", "root cause:")
_COMMAND_PREFIX = "command:"
_SEPARATORS = re.compile(r"\|\||&&|[;|\n]")
_PROGRAM = re.compile(r"^[\w./+-]+$")


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:  # an unbalanced quote: plain splitting is still conservative
        return command.split()


def simple_commands(command: str) -> list[list[str]]:
    return [words for part in _SEPARATORS.split(command) if (words := _words(part))]


def matches(recorded: list[str], command: list[str]) -> bool:
    """Whether the recorded command's words are in `command` (the module docstring)."""
    head, rest = recorded[:2], recorded[2:]
    for i in range(len(command) - 1):
        if command[i : i + 2] == head:
            after = command[i + 2 :]
            return all(word in after for word in rest)
    return False


def _specific(recorded: list[str]) -> bool:
    if len(recorded) < 2 or len(" ".join(recorded)) < MIN_COMMAND_CHARS:
        return False
    if not _PROGRAM.match(recorded[0]):
        return False
    return not any(matches(recorded, probe.split()) for probe in BENIGN_PROBES)


def recorded_commands(observations: list[str]) -> list[list[str]]:
    """The specific commands a lesson records as the mistake."""
    found: list[list[str]] = []
    for observation in observations:
        text = observation.strip()
        lowered = text.lower()
        candidates: list[str] = []
        if lowered.startswith(_MISTAKE_PREFIXES):
            candidates = _CODE_SPAN.findall(text)
        elif lowered.startswith(_COMMAND_PREFIX):
            candidates = [text[len(_COMMAND_PREFIX) :].strip().strip("`")]
        for candidate in candidates:
            for words in simple_commands(candidate):
                if _specific(words) and words not in found:
                    found.append(words)
    return found


def _field(observations: list[str], prefix: str) -> str | None:
    """The text of the first `<prefix> …` observation (learn writes `Error:`, `Fix:`, …)."""
    for observation in observations:
        if observation.strip().lower().startswith(prefix):
            return observation.strip()[len(prefix) :].strip()
    return None


def _fix(observations: list[str]) -> str | None:
    return _field(observations, "fix:")


def _error(observations: list[str]) -> str | None:
    return _field(observations, "error:")


def command_guards(*, project: str | None, command: str) -> tuple[str, list[int]]:
    """(the fenced warning, the lessons it cites) for a shell command; ("", []) when no
    accepted lesson guards against it."""
    commands = simple_commands(command)
    if not commands:
        return "", []
    lessons = in_scope(Entity.objects.filter(type=LESSON_TYPE), project)
    ids = list(lessons.order_by("-updated_at", "-id").values_list("id", flat=True))
    lines: list[str] = []
    cited: list[int] = []
    for doc in Entity.objects.documents(ids[:MAX_LESSONS_READ]):
        if not is_trusted(doc.metadata):
            continue
        recorded = recorded_commands(doc.observations)
        hit = next((r for r in recorded if any(matches(r, c) for c in commands)), None)
        if hit is None:
            continue
        fix = _fix(doc.observations)
        suffix = f"— matched `{clean(' '.join(hit), 80)}`" + (
            f"; fix: {clean(fix, 200)}" if fix else ""
        )
        label = clean(doc.title or _error(doc.observations) or doc.name)
        lines.append(memory_line(doc.type, label, doc.id, suffix))
        cited.append(doc.id)
        if len(lines) == MAX_GUARDS_SHOWN:
            break
    if not lines:
        return "", []
    head = [
        "Lesson guard: the command about to run matches a mistake recorded before. Check the "
        "lesson before running it, and cite it if it changes what you do."
    ]
    return wrap([*head, *lines]), cited
