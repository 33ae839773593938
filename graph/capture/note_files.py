"""Claude Code's memory directory (`~/.claude/projects/<slug>/memory/*.md`) ingested as
memories: one per file, so what the host keeps in its own notes is recallable from every host.

A note file starts with a frontmatter block (`---` lines) holding `name`, `description` and
`metadata.type`; files without one (the directory's MEMORY.md index) are not notes. Each note
becomes a `note` memory named after the file's path (`note-file-<hash>`): the frontmatter
`name` as title, the description and the body's paragraphs as observations, tagged
`source:note-file`, `note-type:<metadata.type>` and the project, with `metadata.note_file`
{path, dir, sha256}. An unchanged file (same sha256) is not written again; a changed one is
rewritten (a few versions kept). A file that disappeared is tagged `source:note-file:missing`
— never archived or deleted: the memory may be all that is left of it — and loses the tag when
it comes back. A file carrying a secret is not stored.

The frontmatter is read by a small parser of `key: value` lines with one level of nesting
(what the host writes), not a YAML library: memesh does not depend on one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from graph.capture.capture import (
    AUTO_CAPTURE_TAG,
    CAPTURE_SOURCE_HOST,
    entity_capture,
    first_secret,
    tags_remove,
)
from graph.capture.clipping import clip
from graph.models import Entity, Status
from graph.project_tags import project_tag

NOTE_FILE_TAG = "source:note-file"
MISSING_TAG = "source:note-file:missing"
NOTE_TYPE = "note"
MAX_FILES = 200
MAX_FILE_BYTES = 256 * 1024
MAX_PARAGRAPHS = 50
HISTORY = 3

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*:\s*(.*)$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")
_TYPE_SLUG = re.compile(r"[^a-z0-9_-]+")


def parse_frontmatter(text: str) -> tuple[dict[str, str], str] | None:
    """({"name": …, "description": …, "metadata.type": …}, body), or None without a
    frontmatter block. Nested keys are joined with a dot; quotes around a value are dropped."""
    match = _FRONTMATTER.match(text)
    if match is None:
        return None
    fields: dict[str, str] = {}
    parent: str | None = None
    for raw in match.group(1).splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indented = raw[:1] in (" ", "\t")
        found = _KEY.match(raw.strip())
        if found is None:
            continue
        key, value = found.group(1), found.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if indented and parent is not None:
            fields[f"{parent}.{key}"] = value
        elif value:
            fields[key] = value
            parent = None
        else:
            parent = key  # `metadata:` opens a nested block
    return fields, text[match.end() :]


@dataclass
class NoteFilesResult:
    created: list[str] = field(default_factory=list)  # file names
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    missing: list[str] = field(default_factory=list)  # newly tagged missing
    restored: list[str] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (file name, detector)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.missing or self.restored)


def note_name(path: Path) -> str:
    return f"note-file-{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"


def _note_files(directory: Path) -> list[Path]:
    try:
        found = sorted(p for p in directory.glob("*.md") if p.is_file())
    except OSError:
        return []
    return found[:MAX_FILES]


def note_files_ingest(
    *, directory: Path, project: str | None, source_host: str = CAPTURE_SOURCE_HOST
) -> NoteFilesResult:
    """Bring the memories of `directory`'s note files up to date (the module docstring)."""
    result = NoteFilesResult()
    directory = directory.expanduser().resolve()
    known = {
        e.name: e
        for e in Entity.objects.filter(
            status=Status.ACTIVE, tags__name=NOTE_FILE_TAG, metadata__note_file__dir=str(directory)
        )
    }
    present: set[str] = set()
    for path in _note_files(directory):
        name = note_name(path)
        present.add(name)  # still there, whatever it now holds: not missing
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            raw = path.read_bytes()
        except OSError:
            continue
        text = raw.decode("utf-8", errors="replace")
        parsed = parse_frontmatter(text)
        if parsed is None:
            continue
        fields, body = parsed
        digest = hashlib.sha256(raw).hexdigest()
        entity = known.get(name)
        stored_note = entity.metadata.get("note_file", {}) if entity is not None else {}
        missing_before = entity is not None and entity.tags.filter(name=MISSING_TAG).exists()
        if entity is not None and stored_note.get("sha256") == digest:
            result.unchanged += 1
            if missing_before:
                tags_remove(entity.pk, [MISSING_TAG])
                result.restored.append(path.name)
            continue
        detector = first_secret(text)
        if detector is not None:
            result.dropped.append((path.name, detector))
            continue
        description = fields.get("description", "")
        paragraphs = [p.strip() for p in _PARAGRAPH_BREAK.split(body.strip()) if p.strip()]
        observations = [*([description] if description else []), *paragraphs][:MAX_PARAGRAPHS]
        if not observations:
            observations = [f"(empty note file {path.name})"]
        note_type = _TYPE_SLUG.sub("-", fields.get("metadata.type", "").lower()).strip("-")
        tags = [AUTO_CAPTURE_TAG, NOTE_FILE_TAG, *([project_tag(project)] if project else [])]
        if note_type:
            tags.append(f"note-type:{note_type[:60]}")
        entity_capture(
            name=name,
            type=NOTE_TYPE,
            title=clip(fields.get("name") or path.stem, 200),
            observations=observations,
            tags=tags,  # a rewrite drops the missing tag with the others
            metadata={"note_file": {"path": str(path), "dir": str(directory), "sha256": digest}},
            replace=entity is not None,
            keep_history=HISTORY,
            source_host=source_host,
        )
        (result.updated if entity is not None else result.created).append(path.name)
        if missing_before:
            result.restored.append(path.name)
    for name, entity in known.items():
        if name in present or entity.tags.filter(name=MISSING_TAG).exists():
            continue
        entity_capture(name=name, type=entity.type, observations=[], tags=[MISSING_TAG])
        result.missing.append(Path(str(entity.metadata["note_file"].get("path", name))).name)
    return result
