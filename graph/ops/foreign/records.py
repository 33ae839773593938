"""What a reader of a foreign format yields: a memory as memesh will store it, or a problem
naming the record that could not be read. Readers parse only; they never write, never drop
secrets (the import service does, with the capture path's one detector) and never stop at a
bad record (the service decides, by `--strict`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Place:
    """Where a record sits in its source, for provenance and for naming a bad record: the
    file, and the line (JSONL, Markdown) or row (a database table) when there is one."""

    file: str
    line: int | None = None
    row: str | None = None  # e.g. "entities.id=42"

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.file}:{self.line}"
        if self.row is not None:
            return f"{self.file} ({self.row})"
        return self.file


@dataclass(frozen=True)
class ForeignRelation:
    to: str  # the target memory's name, as the source names it
    type: str  # e.g. "relates_to", "supersedes", "contradicts"


@dataclass(frozen=True)
class Usage:
    """How much the source's own program used a memory: kept on the memory's counters, so
    ranking by use (graph/search/scoring.py) starts from the user's history, not from zero."""

    access_count: int = 0
    last_accessed_at: datetime | None = None
    recall_hits: int = 0
    recall_misses: int = 0


@dataclass(frozen=True)
class ForeignMemory:
    """One memory read from a foreign source. `name` is unique within the source (a reader
    that meets two records of one name merges or renames them and says which in a problem).
    `project` is the source's own notion of a project (None: the command's `--project`, else
    none); `unfiled` says the source means no project at all (a user's own notes, kept for
    every project), so the memory is filed under none even with `--project`. Times are
    timezone-aware. `extra` keeps what has no field of its own (access and recall counts, a
    task's state, a mem0 user id...), stored as the memory's metadata.
    `source` is where the memory can be checked (a file, a URL), when the source names one: only
    then is the memory imported as a fact (docs/import.md, "Trust"). `usage`: the source's
    access and recall counts, where it keeps them."""

    name: str
    type: str
    observations: list[str]
    place: Place
    title: str | None = None
    tags: list[str] = field(default_factory=list)
    relations: list[ForeignRelation] = field(default_factory=list)
    project: str | None = None
    unfiled: bool = False
    namespace: str | None = None  # "personal" | "team" | "global"
    archived: bool = False
    created_at: datetime | None = None
    updated_at: datetime | None = None
    extra: dict[str, object] = field(default_factory=dict)
    source: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class ForeignProblem:
    """A record that was skipped, and why: the field and the bad value, quoted (shortened)."""

    place: Place
    message: str
    field: str | None = None
    value: str | None = None

    def __str__(self) -> str:
        where = f"{self.place}: {self.field}" if self.field else str(self.place)
        quoted = f" (got {self.value!r})" if self.value is not None else ""
        return f"{where}: {self.message}{quoted}"


ForeignRecord = ForeignMemory | ForeignProblem
