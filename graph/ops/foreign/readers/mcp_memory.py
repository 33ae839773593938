"""The official MCP memory server's file (`@modelcontextprotocol/server-memory`, its
MEMORY_FILE_PATH, `memory.jsonl` by default): JSON Lines, one object per line,

    {"type": "entity", "name": ..., "entityType": ..., "observations": [...]}
    {"type": "relation", "from": ..., "to": ..., "relationType": ...}

as the server's own `saveGraph` writes them (entities first, then relations) and its
`loadGraph` reads them (blank lines skipped, any other `type` ignored). The file is read
twice, line by line, so memory stays flat for a file of any size: once for the relations
(an entity's relations may come after it), once for the entities. The server has no titles,
tags, projects, times or trust: each memory is filed under `--project`, if any.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from core.json_limits import loads
from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.records import (
    ForeignMemory,
    ForeignProblem,
    ForeignRecord,
    ForeignRelation,
    Place,
)

QUOTED = 80  # how much of a bad value a problem quotes


def _lines(path: Path) -> Iterator[tuple[int, dict[str, object] | ForeignProblem]]:
    """(line number, the line's object or the problem with it) for each non-blank line."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            place = Place(str(path), line=number)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, ForeignProblem(place, "not UTF-8 text")
                continue
            if not text.strip():
                continue
            try:
                item = loads(text)  # nesting bounded before the parser recurses
            except json.JSONDecodeError as exc:
                yield number, ForeignProblem(place, f"not JSON ({exc.msg})", value=_quote(text))
                continue
            except ValueError as exc:  # too deep, NaN or Infinity
                yield number, ForeignProblem(place, f"not JSON: {exc}", value=_quote(text))
                continue
            if not isinstance(item, dict):
                yield number, ForeignProblem(place, "not a JSON object", value=_quote(text))
                continue
            yield number, item


def _quote(text: str) -> str:
    text = text.strip()
    return text if len(text) <= QUOTED else text[:QUOTED] + "…"


def _text(item: dict[str, object], key: str, place: Place) -> str | ForeignProblem:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        return ForeignProblem(place, "must be a non-empty string", key, _quote(repr(value)))
    return value


def _first_bytes(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(4096)


def _check(path: Path) -> None:
    """NotThisFormat for a file that is plainly something else (a database, a JSON document)."""
    head = _first_bytes(path)
    if head.startswith(b"SQLite format 3\x00"):
        raise NotThisFormat(
            f"{path} is a SQLite database, not the MCP memory server's JSON Lines file "
            "(the original MeMesh's database is imported with --from memesh4)."
        )
    stripped = head.lstrip()
    if stripped[:1] == b"{" and b'"entities"' in stripped.split(b"\n", 1)[0]:
        raise NotThisFormat(
            f"{path} is a memesh export bundle, not the MCP memory server's JSON Lines: "
            "import it with `memesh import FILE`."
        )
    if stripped and stripped[:1] != b"{":
        raise NotThisFormat(
            f"{path} is not JSON Lines (it does not start with `{{`): it is not the MCP "
            "memory server's file."
        )


def read(source: Path, *, project: str | None) -> Iterator[ForeignRecord]:
    """The entities of the server's file at `source`, each with its relations."""
    if source.is_dir():
        source = source / "memory.jsonl"
    if not source.is_file():
        raise NotThisFormat(f"{source} is not a file: name the server's memory.jsonl.")
    _check(source)
    relations: dict[str, list[ForeignRelation]] = {}
    for number, item in _lines(source):
        if isinstance(item, dict) and item.get("type") == "relation":
            place = Place(str(source), line=number)
            fields = [_text(item, key, place) for key in ("from", "to", "relationType")]
            if not any(isinstance(f, ForeignProblem) for f in fields):
                origin, target, rel_type = (str(f) for f in fields)
                relations.setdefault(origin, []).append(ForeignRelation(to=target, type=rel_type))
    seen: set[str] = set()
    for number, item in _lines(source):
        if isinstance(item, ForeignProblem):
            yield item
            continue
        place = Place(str(source), line=number)
        kind = item.get("type")
        if kind == "relation":
            for key in ("from", "to", "relationType"):
                problem = _text(item, key, place)
                if isinstance(problem, ForeignProblem):
                    yield problem
                    break
            continue
        if kind != "entity":
            quoted = _quote(repr(kind))
            yield ForeignProblem(place, "must be `entity` or `relation`", "type", quoted)
            continue
        memory = _entity(item, place, project, relations, seen)
        if isinstance(memory, ForeignMemory):
            seen.add(memory.name)
        yield memory


def _entity(
    item: dict[str, object],
    place: Place,
    project: str | None,
    relations: dict[str, list[ForeignRelation]],
    seen: set[str],
) -> ForeignRecord:
    name = _text(item, "name", place)
    if isinstance(name, ForeignProblem):
        return name
    entity_type = _text(item, "entityType", place)
    if isinstance(entity_type, ForeignProblem):
        return entity_type
    observations = item.get("observations", [])
    if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
        return ForeignProblem(
            place, "must be a list of strings", "observations", _quote(repr(observations))
        )
    if name in seen:
        # The server itself never writes a name twice (create_entities skips known names).
        return ForeignProblem(place, "a second entity of this name; the first kept", "name", name)
    return ForeignMemory(
        name=name,
        type=entity_type,
        observations=list(observations),
        place=place,
        relations=relations.get(name, []),
        project=project,
    )
