"""One memory-tool command in, one `tool_result` out.

This is the tool's edge, as a view is a REST endpoint's: the input comes from a model over the
wire, so the declared schema describes what should arrive, not what does — every field is
checked here, each command calls one selector or service, and every refusal (a
`core.errors.MemeshError`, or a schema error the services raise) becomes a result with
`is_error=True`, never an exception. Nothing changes when a command is refused.

An application working for one repository passes its project (graph.project.project_id):
the tool then sees that project's memories, those with no project and global ones
(graph/ops/kit/scope.py), says so at the root, and files new memories under the project.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from api.memory_tool import lines
from api.memory_tool.paths import (
    NAMESPACES,
    ROOT,
    MemoryFile,
    MemoryPath,
    encode_name,
    parse_file_path,
    parse_path,
)
from api.memory_tool.selectors import (
    memory_file_entity,
    memory_file_observations,
    memory_namespace_counts,
    memory_namespace_list,
)
from api.memory_tool.services import (
    memory_file_create,
    memory_file_delete,
    memory_file_insert,
    memory_file_rename,
    memory_file_str_replace,
)
from core.errors import InvalidInput, MemeshError
from graph.ops.kit.scope import UNBOUND, ReadScope
from graph.ops.kit.validation_errors import describe_validation_error
from graph.project_tags import project_of

TOOL_DEFINITION: Final[dict[str, str]] = {"type": "memory_20250818", "name": "memory"}
COMMANDS: Final[tuple[str, ...]] = ("view", "create", "str_replace", "insert", "delete", "rename")


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


def handle_memory_command(input: object, *, project: str | None = None) -> MemoryToolResult:
    """Perform one memory-tool command (`tool_use.input`); refusals come back as error
    results. `project`: the project the application works for (None: every project's
    memories, as before)."""
    scope = UNBOUND if not project else ReadScope(project_of(project), all_projects=False)
    try:
        return MemoryToolResult(_dispatch(input, scope))
    except MemeshError as exc:
        return MemoryToolResult(exc.message, is_error=True)
    except ValidationError as exc:
        return MemoryToolResult(describe_validation_error(exc), is_error=True)


def _dispatch(data: object, scope: ReadScope) -> str:
    if not isinstance(data, Mapping):
        raise InvalidInput("Input must be an object with a `command` field")
    command = data.get("command")
    if not isinstance(command, str) or command not in COMMANDS:
        raise InvalidInput(f"Unknown command {command!r}: expected one of {', '.join(COMMANDS)}")
    if command == "view":
        return _view(
            parse_path(_required(data, "path")), _view_range(data.get("view_range")), scope
        )
    if command == "create":
        return _create(
            parse_file_path(_required(data, "path"), "write to"),
            _string(data, "file_text"),
            scope,
        )
    if command == "str_replace":
        new_str = data.get("new_str")
        if new_str is not None and not isinstance(new_str, str):
            raise InvalidInput("`new_str` must be a string")
        file = parse_file_path(_required(data, "path"), "edit")
        line = memory_file_str_replace(
            file=file, old_str=_string(data, "old_str"), new_str=new_str or "", scope=scope
        )
        return f"Edited {file} at line {line}"
    if command == "insert":
        at = data.get("insert_line")
        if not isinstance(at, int) or isinstance(at, bool):
            raise InvalidInput("`insert_line` must be an integer")
        return _insert(
            parse_file_path(_required(data, "path"), "insert into"),
            at,
            _string(data, "insert_text"),
            scope,
        )
    if command == "delete":
        file = parse_file_path(_required(data, "path"), "delete")
        memory_file_delete(file=file, scope=scope)
        return f"Deleted {file} (archived; it can be restored)"
    old = parse_file_path(_required(data, "old_path"), "rename")
    new = parse_file_path(_required(data, "new_path"), "rename onto")
    memory_file_rename(old=old, new=new, scope=scope)
    return f"Renamed {old} to {new}"


def _required(data: Mapping[str, Any], key: str) -> object:
    if key not in data:
        raise InvalidInput(f"`{key}` is required")
    return data[key]


def _string(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise InvalidInput(f"`{key}` is required and must be a string")
    return value


def _view_range(raw: object) -> tuple[int, int] | None:
    if raw is None:
        return None
    if (
        not isinstance(raw, Sequence)
        or isinstance(raw, str)
        or len(raw) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in raw)
    ):
        raise InvalidInput("`view_range` must be [start_line, end_line] (end -1 = to the end)")
    return raw[0], raw[1]


def _plural(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def _view(path: MemoryPath, view_range: tuple[int, int] | None, scope: ReadScope) -> str:
    if path.name is None and view_range is not None:
        raise InvalidInput("`view_range` applies to files only")
    if path.namespace is None:
        counts = memory_namespace_counts(scope)
        listing = [ROOT, *(f"- {ns}/ ({_plural(counts[ns])})" for ns in NAMESPACES)]
        if scope.project is not None:
            listing.append(
                f"(project {scope.project}: its memories, those with no project and global ones)"
            )
        return "\n".join(listing)
    if path.name is None:
        entries = memory_namespace_list(path.namespace, scope)
        listing = [f"{path} ({_plural(len(entries))})"]
        for entry in entries:
            line = f"- {encode_name(entry.name)}.md (type: {entry.type})"
            if entry.tags:
                line += f" tags: {', '.join(entry.tags)}"
            listing.append(line)
        return "\n".join(listing)
    file = MemoryFile(path.namespace, path.name)
    texts = [o.text for o in memory_file_observations(memory_file_entity(file, scope))]
    return lines.numbered(texts, view_range, str(file))


def _create(file: MemoryFile, file_text: str, scope: ReadScope) -> str:
    written = memory_file_create(file=file, lines=lines.file_lines(file_text), scope=scope)
    verb = "created" if written.created else "overwritten"
    reply = f"File {verb} at {file} ({written.lines} lines)"
    if written.duplicates:
        reply += f"; {written.duplicates} repeated line(s) not stored twice"
    return reply


def _insert(file: MemoryFile, insert_line: int, raw_text: str, scope: ReadScope) -> str:
    text = lines.insert_text(raw_text)
    if not memory_file_insert(file=file, insert_line=insert_line, text=text, scope=scope):
        return f"{file} already holds that line; nothing inserted"
    return f"Inserted into {file} after line {insert_line}"
