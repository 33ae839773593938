"""`memesh import --from basic-memory DIR`: a basic-memory project folder, one memory per note.

basic-memory (the PyPI program) keeps each note as a Markdown file with YAML front matter
(`title`, `type`, `permalink`, `tags`, optional `created`/`modified`) and two kinds of list
lines that its parser (markdown-it plugins in basic_memory/markdown/plugins.py) gives meaning:

- observations: `- [category] text #tag #other (context)`; a list line with `#tags` and no
  category is one too. `[ ]`, `[x]`, `[-]` are tasks and a clock value (`[00:01:02]`) is a
  timecode, not a category.
- relations: `- relation_type [[Target]] (context)` (a type with spaces is quoted); any other
  `[[Target]]` in the text links to it (`links_to`).

A memory is named by the note's title (its permalink when an earlier note has that title);
its observations are the observation lines in order, the category kept as a `category:` tag
and the `#tags` as tags, with the note's prose (text under each heading, by section) among
them in the order of the file. A relation's target is written as basic-memory resolves it: a
note's title, permalink or path names that note's memory; a link to no note of the folder is
kept in `extra` (memesh relates only memories that exist). A note whose front matter does not
parse is named and skipped (basic-memory itself would index it as plain text). The project is
`--project`, else the name basic-memory's config.json gives the folder, else its name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from django.conf import settings
from markdown_it.token import Token

from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.readers import markdown_files as md
from graph.ops.foreign.records import ForeignMemory, ForeignProblem, ForeignRelation, Place

DEFAULT_TYPE = "note"
# Headings basic-memory's own writers put over the list lines; they carry no text of their own.
LIST_HEADINGS = frozenset({"observations", "relations"})

_CATEGORY = re.compile(r"^\[([^\[\]()]+)\]\s+(.+)$", re.S)
_CLOCK = re.compile(r"^\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?:\s+-\s+\S+)?$")
_RELATION = re.compile(
    r"""^(?P<type>"[^"]+"|'[^']+'|[^\s\[\]"']+)\s*\[\[(?P<target>[^\[\]]+)\]\]"""
    r"""\s*(?:\((?P<context>[^()\[\]]*)\))?$""",
    re.S,
)
_LINK = re.compile(r"\[\[([^\[\]]+)\]\]")


@dataclass
class _Note:
    """A note read, before its relations' targets are resolved against the other notes."""

    memory: ForeignMemory
    permalink: str | None
    path: str  # relative to the folder, without `.md`
    relations: list[ForeignRelation] = field(default_factory=list)


def read(source: Path, *, project: str | None) -> Iterator[ForeignMemory | ForeignProblem]:
    if not source.is_dir():
        raise NotThisFormat(f"{source}: not a folder (basic-memory keeps a project in one)")
    project = project or _project_name(source)
    notes: list[_Note] = []
    for path in _note_files(source):
        note = _read_note(path, source, project)
        if isinstance(note, ForeignProblem):
            yield note
        else:
            notes.append(note)
    yield from _resolved(notes)


def _note_files(folder: Path) -> list[Path]:
    """The folder's `.md` files, in a stable order; hidden folders (`.git`, `.obsidian`,
    basic-memory's own) hold no notes."""
    return sorted(
        path
        for path in folder.rglob("*.md")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def _project_name(folder: Path) -> str:
    """The name basic-memory's config.json gives this folder, else the folder's name."""
    config = Path(settings.BASIC_MEMORY_CONFIG_DIR) / "config.json"
    try:
        projects = json.loads(config.read_text(encoding="utf-8")).get("projects", {})
    except (OSError, ValueError, AttributeError):
        projects = {}
    target = folder.resolve()
    for name, entry in projects.items() if isinstance(projects, dict) else ():
        # Older releases kept `name: path`; newer ones `name: {"path": ...}`.
        where = entry.get("path") if isinstance(entry, dict) else entry
        if isinstance(where, str) and Path(where).expanduser().resolve() == target:
            return str(name)
    return folder.resolve().name


def _read_note(path: Path, folder: Path, project: str) -> _Note | ForeignProblem:
    relative = path.relative_to(folder).as_posix()
    place = Place(str(path), 1)
    text = md.read_text(path, place)
    if isinstance(text, ForeignProblem):
        return text
    split = md.split_front_matter(text, str(path))
    if isinstance(split, ForeignProblem):
        return split
    meta = split.metadata
    title = _string(meta.get("title")) or path.stem
    permalink = _string(meta.get("permalink"))
    tags = _tags(meta.get("tags"))
    observations, relations, found_tags = _body(split.body, title)
    if not observations:
        return ForeignProblem(place, "has no text besides its front matter: nothing to import")
    updated = md.timestamp(meta.get("modified"))
    if updated is None:
        updated = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    extra: dict[str, object] = {"file": relative}
    if permalink:
        extra["permalink"] = permalink
    other = {k: md.plain(v) for k, v in meta.items() if k not in _KNOWN_FIELDS}
    if other:
        extra["front_matter"] = other
    memory = ForeignMemory(
        name=title,
        type=_string(meta.get("type")) or DEFAULT_TYPE,
        observations=observations,
        place=place,
        title=title,
        tags=_unique(tags + found_tags),
        project=project,
        created_at=md.timestamp(meta.get("created")),
        updated_at=updated,
        extra=extra,
    )
    return _Note(memory, permalink, relative.removesuffix(".md"), relations)


_KNOWN_FIELDS = frozenset({"title", "type", "permalink", "tags", "created", "modified"})


def _body(body: str, title: str) -> tuple[list[str], list[ForeignRelation], list[str]]:
    """The note's observations (observation lines and prose, in file order), its relations and
    the tags its observation lines carry."""
    placed: list[tuple[int, str]] = []
    relations: list[ForeignRelation] = []
    tags: list[str] = []
    taken: set[int] = set()
    tokens = md.blocks(body)
    quoted = 0
    for index, token in enumerate(tokens):
        quoted += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        if token.type != "inline" or token.map is None:
            continue
        in_item = index >= 2 and tokens[index - 2].type == "list_item_open"
        content = token.content.strip()
        if in_item and not quoted:
            relation = _relation(content)
            if relation is not None:
                relations.append(relation)
                taken.update(range(*token.map))
                continue
            observation = _observation(content)
            if observation is not None:
                text, category, found = observation
                placed.append((token.map[0], text))
                tags.extend(([f"category:{category}"] if category else []) + found)
                taken.update(range(*token.map))
        relations.extend(ForeignRelation(to=t, type="links_to") for t in _links(token))
    for section in md.sections(body, 0, skip=frozenset(taken)):
        heading = (section.heading or "").strip()
        if heading.casefold() in LIST_HEADINGS or heading == title:
            text = section.text
        elif section.heading_line is not None:
            text = f"{section.heading_line}\n{section.text}"
        else:
            text = section.text
        # Where its text starts, so that prose left under the observation lines follows them.
        placed.append((section.text_line, text))
    placed.sort(key=lambda item: item[0])
    observations = [piece for _, text in placed for piece in md.chunks(text)]
    return observations, _unique(relations), tags


def _observation(content: str) -> tuple[str, str | None, list[str]] | None:
    """(text, category, #tags) of an observation line, or None when the line is not one."""
    if content.startswith(("[ ]", "[x]", "[-]")):
        return None  # a task, whatever tags it carries
    match = _CATEGORY.match(content)
    category = None
    text = content
    if match and _is_category(match.group(1).strip()):
        category, text = match.group(1).strip(), match.group(2).strip()
    words = text.split()
    tags = [t for word in words if word.startswith("#") for t in word.split("#") if t]
    if category is None and not tags:
        return None
    return text, category, tags


def _is_category(category: str) -> bool:
    if _CLOCK.match(category):
        return False
    # `[x]`, `[/]`, `[?]`: the task-list family's markers, not categories.
    return not (len(category) == 1 and (category in "xX" or not category.isalnum()))


def _relation(content: str) -> ForeignRelation | None:
    match = _RELATION.match(content)
    if match is None:
        return None
    kind = match.group("type").strip("\"'").strip()
    target = _target(match.group("target"))
    if not kind or not target:
        return None
    return ForeignRelation(to=target, type=kind)


def _links(token: Token) -> list[str]:
    """The `[[Target]]` links in an inline token's text, code spans left out."""
    text = "".join(
        child.content if child.type == "text" else "\n" if child.type.endswith("break") else " "
        for child in token.children or []
    )
    return [t for t in (_target(m) for m in _LINK.findall(text)) if t]


def _target(raw: str) -> str:
    """`[[Target|shown text]]` and `[[Target#heading]]` link to Target."""
    return raw.split("|", 1)[0].split("#", 1)[0].strip()


def _resolved(notes: list[_Note]) -> Iterator[ForeignMemory]:
    """The notes as memories, each under a name of its own and each relation's target
    written as the name of the note it points at. A link to no note of the folder (a note
    basic-memory would create later) cannot be a memesh relation: it is kept in `extra`."""
    taken: set[str] = set()
    by_key: dict[str, str] = {}
    for note in notes:
        name = note.memory.name
        if name in taken and note.permalink:
            name = note.permalink
        base, n = name, 2
        while name in taken:
            name, n = f"{base} ({n})", n + 1
        taken.add(name)
        if name != note.memory.name:
            note.memory = replace(
                note.memory,
                name=name,
                extra={**note.memory.extra, "renamed_from": note.memory.name},
            )
        for key in (note.memory.title, note.permalink, note.path, Path(note.path).name):
            if key:
                by_key.setdefault(key.casefold(), name)
    for note in notes:
        # Newer releases start a permalink with the project's name; links may leave it out.
        if note.permalink and "/" in note.permalink:
            by_key.setdefault(note.permalink.split("/", 1)[1].casefold(), note.memory.name)
    for note in notes:
        own = note.memory.name
        found = [
            ForeignRelation(to=by_key[r.to.casefold()], type=r.type)
            for r in note.relations
            if r.to.casefold() in by_key
        ]
        missing = [f"{r.type} [[{r.to}]]" for r in note.relations if r.to.casefold() not in by_key]
        memory = replace(note.memory, relations=_unique([r for r in found if r.to != own]))
        if missing:
            memory = replace(
                memory, extra={**memory.extra, "unresolved_relations": _unique(missing)}
            )
        yield memory


def _string(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    text = str(value).strip()
    return text or None


def _tags(value: object) -> list[str]:
    """Front-matter tags as basic-memory reads them: a list or a comma-separated string, a
    leading `#` dropped."""
    raw = value if isinstance(value, list) else str(value).split(",") if value else []
    return [t for t in (str(v).strip().lstrip("#").strip() for v in raw if v is not None) if t]


T = TypeVar("T")


def _unique(items: list[T]) -> list[T]:
    return list(dict.fromkeys(items))
