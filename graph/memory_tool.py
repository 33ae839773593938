"""Anthropic's client-side memory tool (`memory_20250818`) with the memory graph as storage.

Claude asks for file operations under `/memories`; `handle_memory_command` performs them on
entities. The path space is exactly `/memories/<namespace>/<name>.md`; a file's lines are the
entity's observations in id (insertion) order, joined by newlines, with no header, so a line
number read by one `view` still addresses the same memory when the next turn edits it.

The input comes from a model over the wire, so every field is validated here and every
refusal is a result with `is_error=True`, never an exception. Each mutating command is one
transaction that ends with `Entity.objects.index_sync`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from django.db import transaction
from django.utils import timezone

from graph.models import Entity, Namespace, Observation, Status, Tag
from graph.ops.fields import MAX_NAME, MAX_OBSERVATION_CHARS

TOOL_DEFINITION: Final[dict[str, str]] = {"type": "memory_20250818", "name": "memory"}

ROOT = "/memories"
SOURCE_HOST = "memory-tool"
# Type given to an entity the tool creates; an existing entity keeps its own.
DEFAULT_TYPE = "note"
NAMESPACES: Final[tuple[str, ...]] = tuple(Namespace.values)
COMMANDS: Final[tuple[str, ...]] = ("view", "create", "str_replace", "insert", "delete", "rename")

# Only these three are encoded, so every name has exactly one filename and back.
_ENCODE = {"%": "%25", "/": "%2F", "\\": "%5C"}
_DECODE = {"%25": "%", "%2F": "/", "%5C": "\\"}
_PERCENT = re.compile(r"%(..)?", re.DOTALL)


@dataclass(frozen=True, slots=True)
class MemoryToolResult:
    """What goes back to Claude as the `tool_result`: its content and `is_error`."""

    content: str
    is_error: bool = False

    def tool_result(self, tool_use_id: str) -> dict[str, Any]:
        """The Messages API `tool_result` block answering the `tool_use` with this id."""
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": self.content,
            "is_error": self.is_error,
        }


class MemoryToolError(Exception):
    """A refusal: reported to the model as an error result, nothing changed."""


def handle_memory_command(input: object) -> MemoryToolResult:
    """Perform one memory-tool command; refusals come back as error results."""
    try:
        return MemoryToolResult(_dispatch(input))
    except MemoryToolError as exc:
        return MemoryToolResult(str(exc), is_error=True)


def _dispatch(data: object) -> str:
    if not isinstance(data, Mapping):
        raise MemoryToolError("Input must be an object with a `command` field")
    command = data.get("command")
    if not isinstance(command, str) or command not in COMMANDS:
        raise MemoryToolError(f"Unknown command {command!r}: expected one of {', '.join(COMMANDS)}")
    if command == "view":
        return _view(_path(data, "path"), _view_range(data.get("view_range")))
    if command == "create":
        return _create(_file_path(data, "path", "write to"), _string(data, "file_text"))
    if command == "str_replace":
        new_str = data.get("new_str")
        if new_str is not None and not isinstance(new_str, str):
            raise MemoryToolError("`new_str` must be a string")
        return _str_replace(
            _file_path(data, "path", "edit"), _string(data, "old_str"), new_str or ""
        )
    if command == "insert":
        line = data.get("insert_line")
        if not isinstance(line, int) or isinstance(line, bool):
            raise MemoryToolError("`insert_line` must be an integer")
        return _insert(_file_path(data, "path", "insert into"), line, _string(data, "insert_text"))
    if command == "delete":
        return _delete(_file_path(data, "path", "delete"))
    old = _file_path(data, "old_path", "rename")
    return _rename(old, _file_path(data, "new_path", "rename onto"))


def _string(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise MemoryToolError(f"`{key}` is required and must be a string")
    return value


# --- paths ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryPath:
    """`/memories` (no namespace), a namespace directory (no name), or one memory file."""

    namespace: str | None = None
    name: str | None = None

    def __str__(self) -> str:
        if self.namespace is None:
            return ROOT
        if self.name is None:
            return f"{ROOT}/{self.namespace}"
        return f"{ROOT}/{self.namespace}/{encode_name(self.name)}.md"


def encode_name(name: str) -> str:
    """The filename stem of an entity name: `/`, `\\` and `%` percent-encoded, nothing else."""
    return "".join(_ENCODE.get(ch, ch) for ch in name)


def decode_name(stem: str) -> str:
    """Inverse of `encode_name`; any other `%` sequence is refused, not guessed at."""

    def replace(match: re.Match[str]) -> str:
        code = match.group(0).upper()
        if code == "%2E":
            # An encoded dot only exists to smuggle `.` or `..` past the traversal check.
            raise MemoryToolError("Encoded dots (%2e) are not allowed in a path")
        if code not in _DECODE:
            raise MemoryToolError(
                f"Invalid percent-encoding {match.group(0)!r}: only %2F (/), %5C (\\) and "
                "%25 (%) are encoded in a memory filename"
            )
        return _DECODE[code]

    return _PERCENT.sub(replace, stem)


def parse_path(raw: object) -> MemoryPath:
    if not isinstance(raw, str):
        raise MemoryToolError("A path must be a string")
    if raw != ROOT and not raw.startswith(ROOT + "/"):
        # Checked with the separator: `/memories-of-you/x` starts with `/memories` too.
        raise MemoryToolError(f"Path {raw!r} is outside {ROOT}")
    if "\x00" in raw:
        raise MemoryToolError("A path must not contain NUL")
    if "\\" in raw:
        raise MemoryToolError("A path must not contain a backslash (write it as %5C)")
    segments = raw[len(ROOT) + 1 :].split("/") if raw != ROOT else []
    for segment in segments:
        if segment in ("", ".", ".."):
            # No filesystem here, but `..` or `//` could still resolve to a memory other than
            # the one named: a silent wrong write.
            raise MemoryToolError(f"Path {raw!r} has an empty, `.` or `..` segment")
        if re.search(r"%2e", segment, re.IGNORECASE):
            raise MemoryToolError("Encoded dots (%2e) are not allowed in a path")
    if len(segments) > 2:
        raise MemoryToolError(f"Path {raw!r} is too deep: paths are {ROOT}/<namespace>/<name>.md")
    if not segments:
        return MemoryPath()
    namespace = segments[0]
    if namespace not in NAMESPACES:
        raise MemoryToolError(
            f"Unknown namespace {namespace!r}: expected one of {', '.join(NAMESPACES)}"
        )
    if len(segments) == 1:
        return MemoryPath(namespace)
    filename = segments[1]
    if not filename.endswith(".md") or filename == ".md":
        raise MemoryToolError(f"Memory files are named <name>.md (got {filename!r})")
    name = decode_name(filename[: -len(".md")])
    if "\x00" in name:
        raise MemoryToolError("A path must not contain NUL")
    if name in (".", ".."):
        raise MemoryToolError(f"Path {raw!r} names `.` or `..`")
    if not name.strip() or name != name.strip():
        raise MemoryToolError("A memory name must not be blank or start or end with whitespace")
    if len(name) > MAX_NAME:
        raise MemoryToolError(f"A memory name is at most {MAX_NAME} characters")
    return MemoryPath(namespace, name)


def _path(data: Mapping[str, Any], key: str) -> MemoryPath:
    if key not in data:
        raise MemoryToolError(f"`{key}` is required")
    return parse_path(data[key])


def _file_path(data: Mapping[str, Any], key: str, verb: str) -> MemoryPath:
    path = _path(data, key)
    if path.name is None:
        # The root and the namespaces are directories the tool defines; Claude cannot
        # write, delete or rename them.
        raise MemoryToolError(f"Cannot {verb} {path}: it is a directory")
    return path


def _view_range(raw: object) -> tuple[int, int] | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, Sequence)
        or isinstance(raw, str)
        or len(raw) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw)
    ):
        raise MemoryToolError("`view_range` must be [start_line, end_line] (end -1 = to the end)")
    return raw[0], raw[1]


# --- lines ------------------------------------------------------------------------------


def _render(texts: Sequence[str]) -> str:
    return "\n".join(texts)


def _line_owners(texts: Sequence[str]) -> list[int]:
    """Index of the observation each rendered line (0-based) belongs to; observations may span
    several lines, so the map is computed, not assumed one-to-one."""
    owners: list[int] = []
    for i, text in enumerate(texts):
        owners.extend([i] * (text.count("\n") + 1))
    return owners


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


def _file_lines(text: str) -> list[str]:
    """Observations for a written file: one per line. Blank lines cannot be observations."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _check_observation(text: str) -> None:
    if len(text) > MAX_OBSERVATION_CHARS:
        raise MemoryToolError(
            f"A memory line is at most {MAX_OBSERVATION_CHARS} characters (got {len(text)})"
        )


# --- reads ------------------------------------------------------------------------------


def _active(path: MemoryPath) -> Entity:
    """The active entity at exactly this address (a name in another namespace is not it)."""
    entity = Entity.objects.filter(
        name=path.name, namespace=path.namespace, status=Status.ACTIVE
    ).first()
    if entity is None:
        raise MemoryToolError(f"The path {path} does not exist")
    return entity


def _observations(entity: Entity) -> list[Observation]:
    return list(Observation.objects.filter(entity=entity).order_by("id"))


def _plural(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def _view(path: MemoryPath, view_range: tuple[int, int] | None) -> str:
    if path.name is None and view_range is not None:
        raise MemoryToolError("`view_range` applies to files only")
    if path.namespace is None:
        counts = dict.fromkeys(NAMESPACES, 0)
        for ns in Entity.objects.filter(status=Status.ACTIVE).values_list("namespace", flat=True):
            counts[ns] = counts.get(ns, 0) + 1
        lines = [f"{ROOT}"] + [f"- {ns}/ ({_plural(counts[ns])})" for ns in NAMESPACES]
        return "\n".join(lines)
    if path.name is None:
        entities = list(
            Entity.objects.filter(namespace=path.namespace, status=Status.ACTIVE).order_by("name")
        )
        tags: dict[int, list[str]] = {}
        for entity_id, tag in Tag.objects.filter(entity__in=entities).values_list(
            "entity_id", "name"
        ):
            tags.setdefault(entity_id, []).append(tag)
        lines = [f"{path} ({_plural(len(entities))})"]
        for e in entities:
            line = f"- {encode_name(e.name)}.md (type: {e.type})"
            if tags.get(e.pk):
                line += f" tags: {', '.join(tags[e.pk])}"
            lines.append(line)
        return "\n".join(lines)

    entity = _active(path)
    lines = _render([o.text for o in _observations(entity)]).split("\n")
    if lines == [""]:
        lines = []
    start, end = 1, len(lines)
    if view_range is not None:
        start, end = view_range
        if end == -1:
            end = len(lines)
        if start < 1 or start > max(len(lines), 1) or end < start or end > len(lines):
            raise MemoryToolError(
                f"Invalid view_range {list(view_range)}: {path} has {len(lines)} lines"
            )
    if not lines:
        return f"{path} is empty"
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))


# --- writes -----------------------------------------------------------------------------


def _touch(entity: Entity, now: datetime, *fields: str) -> None:
    entity.updated_at = now
    entity.save(update_fields=[*fields, "updated_at"])
    Entity.objects.index_sync([entity.pk])


def _taken_elsewhere(name: str, namespace: str) -> Entity | None:
    return Entity.objects.filter(name=name).exclude(namespace=namespace).first()


@transaction.atomic
def _create(path: MemoryPath, file_text: str) -> str:
    assert path.name is not None and path.namespace is not None
    lines = _file_lines(file_text)
    for line in lines:
        _check_observation(line)
    other = _taken_elsewhere(path.name, path.namespace)
    if other is not None:
        # Names are unique database-wide: writing here would really write (or move) the
        # memory that lives at another address.
        raise MemoryToolError(
            f"Cannot create {path}: the name is already taken in namespace {other.namespace!r}"
        )
    now = timezone.now()
    entity = Entity.objects.filter(name=path.name).first()
    if entity is None:
        entity = Entity(
            name=path.name,
            type=DEFAULT_TYPE,
            namespace=path.namespace,
            created_at=now,
            updated_at=now,
            metadata={"provenance": {"source_host": SOURCE_HOST}},
        )
        entity.save()
        verb = "created"
    else:
        # Overwrite means overwrite: the observations go; tags, type and title stay.
        Observation.objects.filter(entity=entity).delete()
        verb = "overwritten" if entity.status == Status.ACTIVE else "created"
        entity.status = Status.ACTIVE
    Observation.objects.bulk_create(
        [Observation(entity=entity, text=line, created_at=now) for line in lines]
    )
    _touch(entity, now, "status")
    return f"File {verb} at {path} ({len(lines)} lines)"


def _relayout(entity: Entity, obs: list[Observation], index: int, text: str, now: datetime) -> None:
    """Put a new observation at position `index`: order is by id, so the ones after it are
    re-created behind it (same text and created_at, new ids)."""
    tail = obs[index:]
    Observation.objects.filter(pk__in=[o.pk for o in tail]).delete()
    Observation.objects.bulk_create(
        [Observation(entity=entity, text=text, created_at=now)]
        + [Observation(entity=entity, text=o.text, created_at=o.created_at) for o in tail]
    )


@transaction.atomic
def _str_replace(path: MemoryPath, old_str: str, new_str: str) -> str:
    if not old_str:
        raise MemoryToolError("`old_str` must not be empty")
    entity = _active(path)
    obs = _observations(entity)
    texts = [o.text for o in obs]
    rendered = _render(texts)
    found = _occurrences(rendered, old_str)
    if not found:
        raise MemoryToolError(f"No match for old_str in {path}; nothing changed")
    if len(found) > 1:
        lines = ", ".join(str(_line_of(rendered, at)) for at in found)
        raise MemoryToolError(
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
    rest = rest.strip("\n")
    if rest.strip():
        _check_observation(rest)

    now = timezone.now()
    changed = obs[keep_lo : keep_hi + 1]
    if rest.strip() and changed:
        # The edited text replaces the changed observations in the first one's row.
        Observation.objects.filter(pk=changed[0].pk).update(text=rest)
        Observation.objects.filter(pk__in=[o.pk for o in changed[1:]]).delete()
    elif rest.strip():
        _relayout(entity, obs, keep_lo, rest, now)
    else:
        Observation.objects.filter(pk__in=[o.pk for o in changed]).delete()
    _touch(entity, now)
    return f"Edited {path} at line {_line_of(rendered, start)}"


@transaction.atomic
def _insert(path: MemoryPath, insert_line: int, insert_text: str) -> str:
    text = insert_text.strip("\n").rstrip()
    if not text.strip():
        raise MemoryToolError("`insert_text` must not be blank")
    _check_observation(text)
    entity = _active(path)
    obs = _observations(entity)
    owners = _line_owners([o.text for o in obs])
    if insert_line < 0 or insert_line > len(owners):
        raise MemoryToolError(
            f"Invalid insert_line {insert_line}: {path} has {len(owners)} lines (0 prepends)"
        )
    # After the whole memory owning that line, never into the middle of a multi-line one.
    index = 0 if insert_line == 0 else owners[insert_line - 1] + 1
    now = timezone.now()
    _relayout(entity, obs, index, text, now)
    _touch(entity, now)
    return f"Inserted into {path} after line {insert_line}"


@transaction.atomic
def _delete(path: MemoryPath) -> str:
    entity = _active(path)
    # Archived, never destroyed: a model asked, not the person whose memory it is.
    entity.status = Status.ARCHIVED
    _touch(entity, timezone.now(), "status")
    return f"Deleted {path} (archived; it can be restored)"


@transaction.atomic
def _rename(old: MemoryPath, new: MemoryPath) -> str:
    assert new.name is not None and new.namespace is not None
    entity = _active(old)
    if old == new:
        raise MemoryToolError(f"{old} and new_path are the same")
    holder = Entity.objects.filter(name=new.name).exclude(pk=entity.pk).first()
    if holder is not None:
        # Names are unique across every namespace (archived ones included).
        raise MemoryToolError(
            f"Cannot rename to {new}: the name is already taken in namespace "
            f"{holder.namespace!r}" + (" (archived)" if holder.status == Status.ARCHIVED else "")
        )
    fields = ["name"]
    if new.namespace != entity.namespace:
        entity.metadata = {**entity.metadata, "previous_namespace": entity.namespace}
        entity.namespace = new.namespace
        fields += ["namespace", "metadata"]
    entity.name = new.name
    _touch(entity, timezone.now(), *fields)
    return f"Renamed {old} to {new}"
