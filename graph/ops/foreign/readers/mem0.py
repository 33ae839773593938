"""`memesh import --from mem0 FILE`: memories exported from mem0, one memesh memory each.

The shape is taken from mem0's documentation and source, not from a run of mem0 (its library
needs a hosted model to store anything): `Memory.get_all()` of the open-source library
returns `{"results": [...]}`, each item a `MemoryItem` (`id`, `memory`, `hash`, `created_at`,
`updated_at`) with `user_id`, `agent_id`, `run_id`, `actor_id`, `role` beside it and the rest
of its payload under `metadata`; the platform's `MemoryClient.get_all()` (GET /v1/memories/)
returns a bare list of the same items with `categories`, `immutable`, `expiration_date`,
`owner`, `organization`. The file holds either, as JSON, or JSON Lines of the items.

A JSON file is streamed (ijson), so memory stays flat for an export of any size. A memory is
named `mem0-<id>` (the same each run, so a second import creates nothing); its one observation
is the text; `categories` become `category:` tags and the user, agent and run ids `user:`,
`agent:`, `run:` tags; everything else is kept in `extra`. The project is `--project`, else
`metadata.project` where the exporting program set one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import ijson

from core.json_limits import bounded_events, loads
from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.readers import markdown_files as md
from graph.ops.foreign.records import ForeignMemory, ForeignProblem, Place

TYPE = "fact"
ID_TAGS = (("user_id", "user"), ("agent_id", "agent"), ("run_id", "run"))
# Kept in `extra` as they are (the text, the times and the ids have places of their own).
EXTRA_FIELDS = (
    "hash", "user_id", "agent_id", "run_id", "actor_id", "role", "categories", "immutable",
    "expiration_date", "owner", "organization", "app_id",
)  # fmt: skip
TITLE_CHARS = 80
QUOTED = 80


def read(source: Path, *, project: str | None) -> Iterator[ForeignMemory | ForeignProblem]:
    if not source.is_file():
        raise NotThisFormat(f"{source}: not a file (mem0's export is one JSON or JSONL file)")
    seen: set[str] = set()
    for place, item in _items(source):
        if isinstance(item, ForeignProblem):
            yield item
            continue
        record = _memory(item, place, project)
        if isinstance(record, ForeignMemory):
            if record.name in seen:
                record = ForeignProblem(
                    place, "the same memory again (its id came earlier)", "id", record.name
                )
            else:
                seen.add(record.name)
        yield record


def _items(path: Path) -> Iterator[tuple[Place, dict[str, object] | ForeignProblem]]:
    with path.open("rb") as f:
        first = _first_byte(f)
        if first == b"":
            raise NotThisFormat(f"{path}: empty, not an export of mem0's memories")
        if first == b"[":
            yield from _streamed(f, path, "item", "[{}]")
            return
        if first != b"{":
            raise NotThisFormat(f"{path}: not JSON (mem0's export is a JSON list or object)")
        line = f.readline()
        f.seek(0)
        if _is_memory(line):
            yield from _lines(f, path)
        else:
            yield from _streamed(f, path, "results.item", "results[{}]")


def _first_byte(f: IO[bytes]) -> bytes:
    """The file's first byte that is not white space (a byte-order mark skipped); the file is
    rewound."""
    head = f.read(4096)
    f.seek(0)
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1]


def _is_memory(line: bytes) -> bool:
    """Whether the first line is a whole memory on its own: then the file is JSON Lines."""
    try:
        item = loads(line.removeprefix(b"\xef\xbb\xbf"))
    except ValueError:
        return False
    return isinstance(item, dict) and "memory" in item


def _streamed(
    f: IO[bytes], path: Path, prefix: str, row: str
) -> Iterator[tuple[Place, dict[str, object] | ForeignProblem]]:
    index = -1
    events = bounded_events(ijson.parse(f, use_float=True))
    try:
        for index, item in enumerate(ijson.items(events, prefix)):
            place = Place(str(path), row=row.format(index))
            if not isinstance(item, dict):
                yield place, ForeignProblem(place, "not a JSON object", value=_quote(item))
            else:
                yield place, item
    except (ijson.JSONError, ValueError) as exc:
        where = f"after {row.format(index)}" if index >= 0 else "before its first memory"
        if index < 0 and isinstance(exc, ijson.JSONError):
            raise NotThisFormat(f"{path}: not JSON ({exc})") from None
        place = Place(str(path), row=row.format(index + 1))
        yield place, ForeignProblem(place, f"the JSON breaks off {where}: {exc}")
        return
    if index < 0 and prefix == "results.item":
        raise NotThisFormat(f"{path}: a JSON object with no `results` list of mem0's memories")


def _lines(f: IO[bytes], path: Path) -> Iterator[tuple[Place, dict[str, object] | ForeignProblem]]:
    for number, raw in enumerate(f, start=1):
        place = Place(str(path), line=number)
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            yield place, ForeignProblem(place, "not UTF-8 text")
            continue
        if not text.strip():
            continue
        try:
            item = loads(text)
        except (json.JSONDecodeError, ValueError) as exc:
            yield place, ForeignProblem(place, f"not JSON: {exc}", value=_quote(text))
            continue
        if not isinstance(item, dict):
            yield place, ForeignProblem(place, "not a JSON object", value=_quote(text))
            continue
        yield place, item


def _memory(
    item: dict[str, object], place: Place, project: str | None
) -> ForeignMemory | ForeignProblem:
    text = item.get("memory")
    if not isinstance(text, str) or not text.strip():
        return ForeignProblem(place, "must be the memory's text", "memory", _quote(text))
    raw_id = item.get("id")
    if raw_id is not None and not isinstance(raw_id, str | int):
        return ForeignProblem(place, "must be a string", "id", _quote(raw_id))
    # A record without an id is named by its text, so the same text is still one memory.
    ident = str(raw_id) if raw_id is not None else hashlib.sha256(text.encode()).hexdigest()[:16]
    metadata = item.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    categories = item.get("categories")
    tags = [
        f"category:{c.strip()}"
        for c in (categories if isinstance(categories, list) else [])
        if isinstance(c, str) and c.strip()
    ]
    tags += [
        f"{tag}:{item[key]}" for key, tag in ID_TAGS if isinstance(item.get(key), str) and item[key]
    ]
    extra: dict[str, object] = {"mem0_id": ident}
    extra.update({k: md.plain(item[k]) for k in EXTRA_FIELDS if item.get(k) is not None})
    if metadata:
        extra["metadata"] = md.plain(metadata)
    own_project = metadata.get("project")
    first_line = text.strip().split("\n", 1)[0]
    return ForeignMemory(
        name=f"mem0-{ident}",
        type=TYPE,
        observations=md.chunks(text),
        place=place,
        title=md.shorten(first_line, TITLE_CHARS),
        tags=list(dict.fromkeys(tags)),
        project=project or (own_project if isinstance(own_project, str) and own_project else None),
        created_at=md.timestamp(item.get("created_at")),
        updated_at=md.timestamp(item.get("updated_at")),
        extra=extra,
    )


def _quote(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return md.shorten(text.strip(), QUOTED)
