"""`memesh import --from claude-code [PROJECT_DIR]`: the notes Claude Code keeps for a project
and for its user, one memory per section of an instructions file or per memory file.

Where Claude Code keeps them (its memory documentation; CLAUDE_CONFIG_DIR moves `~/.claude`):
- the project's instructions: `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md` in the
  folder and in every folder above it up to the repository's top, and `.claude/rules/*.md`;
- the user's: `~/.claude/CLAUDE.md` and `~/.claude/rules/*.md` (no project, even with
  `--project`: Claude Code reads them in every project);
- auto memory, the notes Claude writes itself: `~/.claude/projects/<slug>/memory/*.md`, the
  slug being the repository top folder's path as Claude Code spells it
  (core/transcripts/claude_code.py), each file one fact with front matter `name`,
  `description`, `type` (user, feedback, project, reference), and `MEMORY.md` the index that
  links to them (its links are not memories; any other text in it is).

An instructions file is cut before each `#` and `##` heading (a `#` line in a fenced code block
stays code); each part is a memory named `<file>: <heading>`. Project memories are filed under
memesh's own identity of the repository (graph/project.py), or `--project`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from core.transcripts.claude_code import claude_config_dir, claude_projects_dir, slug
from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.readers import markdown_files as md
from graph.ops.foreign.records import ForeignMemory, ForeignProblem, Place
from graph.ops.kit.fields import MAX_NAME
from graph.project import project_id, project_root

INSTRUCTION_FILES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
INSTRUCTION_TYPE = "instruction"
MEMORY_TYPE = "note"
MEMORY_INDEX = "MEMORY.md"


@dataclass(frozen=True)
class _Source:
    """One file to read: its path, the label its memories are named by, its project (None:
    the user's) and what Claude Code uses it for."""

    path: Path
    label: str
    project: str | None
    scope: str  # "project", "local", "rules", "auto-memory", "user"


def read(source: Path, *, project: str | None) -> Iterator[ForeignMemory | ForeignProblem]:
    if not source.is_dir():
        raise NotThisFormat(f"{source}: not a folder (claude-code reads a project's folder)")
    names: set[str] = set()
    files: set[Path] = set()
    for found in _sources(source.resolve(), project):
        # A project in the home folder would read ~/.claude/CLAUDE.md twice.
        if found.path.resolve() in files:
            continue
        files.add(found.path.resolve())
        for record in _read_source(found):
            if isinstance(record, ForeignMemory):
                record = _renamed(record, names)
            yield record


def _sources(folder: Path, project: str | None) -> Iterator[_Source]:
    root = project_root(folder)
    own = project or project_id(root)
    # The folders Claude Code reads CLAUDE.md in: the top folder first, then down to `folder`.
    # (project_root is `folder` or a folder above it.)
    chain = [folder, *(p for p in folder.parents if root in p.parents or p == root)]
    for directory in reversed(chain):
        for name in INSTRUCTION_FILES:
            path = directory / name
            if path.is_file():
                label = path.relative_to(root).as_posix()
                scope = "local" if name == "CLAUDE.local.md" else "project"
                yield _Source(path, label, own, scope)
    for path in _markdown_in(root / ".claude" / "rules"):
        yield _Source(path, path.relative_to(root).as_posix(), own, "rules")
    memory_dirs = dict.fromkeys(claude_projects_dir() / slug(d) / "memory" for d in (root, folder))
    for memory_dir in memory_dirs:
        for path in _markdown_in(memory_dir, recursive=False):
            yield _Source(path, f"memory/{path.name}", own, "auto-memory")
    config = claude_config_dir()
    if (config / "CLAUDE.md").is_file():
        yield _Source(config / "CLAUDE.md", "~/.claude/CLAUDE.md", None, "user")
    for path in _markdown_in(config / "rules"):
        label = f"~/.claude/{path.relative_to(config).as_posix()}"
        yield _Source(path, label, None, "user")


def _markdown_in(folder: Path, *, recursive: bool = True) -> list[Path]:
    if not folder.is_dir():
        return []
    found = folder.rglob("*.md") if recursive else folder.glob("*.md")
    # The index first: it is what Claude Code reads first.
    return sorted((p for p in found if p.is_file()), key=lambda p: (p.name != MEMORY_INDEX, p))


def _read_source(found: _Source) -> Iterator[ForeignMemory | ForeignProblem]:
    text = md.read_text(found.path, Place(str(found.path), 1))
    if isinstance(text, ForeignProblem):
        yield text
        return
    split = md.split_front_matter(text, str(found.path))
    if isinstance(split, ForeignProblem):
        yield split
        return
    updated = datetime.fromtimestamp(found.path.stat().st_mtime, tz=UTC)
    extra: dict[str, object] = {"file": str(found.path), "scope": found.scope}
    if found.scope == "auto-memory" and found.path.name != MEMORY_INDEX:
        yield from _memory_file(found, split, updated, extra)
        return
    skip = _index_links(found, split.body) if found.path.name == MEMORY_INDEX else frozenset()
    front = {k: md.plain(v) for k, v in split.metadata.items()}
    if front:
        extra["front_matter"] = front
    for section in md.sections(split.body, split.body_line, skip=skip):
        text = f"{section.heading_line}\n{section.text}" if section.heading_line else section.text
        name = f"{found.label}: {section.heading}" if section.heading else found.label
        yield ForeignMemory(
            name=_fit(name),
            type=INSTRUCTION_TYPE if found.scope != "auto-memory" else MEMORY_TYPE,
            observations=md.chunks(text),
            place=Place(str(found.path), section.line),
            title=_fit(section.heading or found.label, 200),
            project=found.project,
            unfiled=found.project is None,
            updated_at=updated,
            extra={**extra, "heading": section.heading} if section.heading else extra,
        )


def _memory_file(
    found: _Source, split: md.FrontMatter, updated: datetime, extra: dict[str, object]
) -> Iterator[ForeignMemory | ForeignProblem]:
    """A file of auto memory: one fact, named by its front matter's `name`."""
    meta = split.metadata
    title = _string(meta.get("name")) or found.path.stem
    description = _string(meta.get("description"))
    observations = md.chunks(split.body)
    if description and not observations:
        observations = [description]
    elif description:
        extra = {**extra, "description": description}
    if not observations:
        yield ForeignProblem(Place(str(found.path), 1), "has no text: nothing to import")
        return
    other = {k: md.plain(v) for k, v in meta.items() if k not in ("name", "description", "type")}
    if other:
        extra = {**extra, "front_matter": other}
    yield ForeignMemory(
        name=_fit(f"{found.label}: {title}"),
        type=_string(meta.get("type")) or MEMORY_TYPE,
        observations=observations,
        place=Place(str(found.path), 1),
        title=_fit(title, 200),
        project=found.project,
        updated_at=updated,
        extra=extra,
    )


def _index_links(found: _Source, body: str) -> frozenset[int]:
    """The body lines of MEMORY.md that only point at a memory file beside it (list items
    with a link to one): those files are read on their own."""
    siblings = {p.name for p in found.path.parent.glob("*.md")}
    lines: set[int] = set()
    tokens = md.blocks(body)
    for index, token in enumerate(tokens):
        if token.type != "inline" or token.map is None or index < 2:
            continue
        if tokens[index - 2].type != "list_item_open":
            continue
        hrefs = [
            str(child.attrGet("href") or "")
            for child in token.children or []
            if child.type == "link_open"
        ]
        if any(Path(h).name in siblings for h in hrefs):
            lines.update(range(*token.map))
    return frozenset(lines)


def _renamed(memory: ForeignMemory, names: set[str]) -> ForeignMemory:
    """`memory` under a name no earlier memory of this source has (a heading used twice in
    one file gets ` (2)`)."""
    name, n = memory.name, 2
    while name in names:
        suffix = f" ({n})"
        name, n = _fit(memory.name, MAX_NAME - len(suffix)) + suffix, n + 1
    names.add(name)
    if name == memory.name:
        return memory
    return replace(memory, name=name, extra={**memory.extra, "renamed_from": memory.name})


def _fit(text: str, limit: int = MAX_NAME) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _string(value: object) -> str | None:
    text = str(value).strip() if value is not None else ""
    return text or None
