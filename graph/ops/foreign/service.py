"""Import from another program's files: read with the format's reader, plan, then (with
`apply`) write through the bundle import (graph/ops/bundle/importer.py) — the one write path
for imported memories, which indexes them and queues their embedding as any write does.

Two passes over the source, so memory stays flat for a source of any size:
1. The plan, which writes nothing: each record is checked (a reader's problem, an entry the
   bundle import would refuse, a secret found by the capture path's one detector,
   core/redact.py — reported by kind and place, never quoted) and classified against what
   memesh holds: created, appended (new observations or tags for a memory of the same name
   and project), unchanged, or skipped, and why. `strict` stops at the first problem, before
   anything is written. This is the dry run's whole answer.
2. With `apply`, the records the plan kept are read again and imported with the `append`
   strategy: a memory already imported gets only what is new, so a second run creates and
   appends nothing. A record's identity is its name (names are unique in memesh) within its
   project, and an observation's its text, whitespace ignored.

A name held by a memory of another project (filed under projects, none of them this record's)
is never merged into it: the record is imported as `<name> (<project>)` — the relations that
name it follow — and the rename is reported.

Trust (docs/import.md): every imported memory is marked imported (`provenance.imported`,
`source: import:<format>:<path>` and the record's place) and is a hypothesis, never injected
as a fact, unless its source names where it can be checked (ForeignMemory.source).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import Field, ValidationError

from core.redact import find_secret
from graph.models import Entity, Namespace, Observation, Tag
from graph.ops.bundle.entry import BundleEntry
from graph.ops.bundle.importer import bundle_import
from graph.ops.foreign.errors import SourceMissing, StoppedAtProblem, UnknownFormat
from graph.ops.foreign.records import ForeignMemory, ForeignProblem, ForeignRecord
from graph.ops.kit.fields import Output
from graph.ops.kit.validation_errors import describe_validation_error
from graph.project_tags import is_project_tag, project_of, project_tag
from graph.search.text import normalize_observation

# --from's names, and the reader module of each (graph/ops/foreign/readers/).
FORMATS = {
    "memesh4": "memesh4",
    "mcp-memory": "mcp_memory",
    "basic-memory": "basic_memory",
    "mem0": "mem0",
    "claude-code": "claude_code",
}
PLAN_CHUNK = 500
NAMESPACES = frozenset(Namespace.values)  # an enum's `values` is rebuilt on every read
MAX_REPORTED = 100
Progress = Callable[[str, int], None]  # (phase: "reading" | "writing", records handled)


class Reader(Protocol):
    def __call__(self, source: Path, *, project: str | None) -> Iterator[ForeignRecord]: ...


class ForeignImportOutput(Output):
    format: str = Field(description="The format read (`--from`).")
    path: str = Field(description="The file or folder read.")
    applied: bool = Field(description="False for a dry run: the counts say what would happen.")
    created: int = Field(description="Memories created (or that would be).")
    appended: int = Field(description="Memories that got new observations or tags.")
    unchanged: int = Field(description="Memories already imported, nothing new in them.")
    skipped: int = Field(description="Records not imported; `problems` says why.")
    relations: int = Field(description="Relations created (0 in a dry run).")
    renamed: list[str] = Field(
        description="Records renamed because another project's memory holds their name."
    )
    problems: list[str] = Field(
        description=f"Why records were skipped (at most {MAX_REPORTED} listed)."
    )
    errors: list[str] = Field(description="What the write itself could not store.")


@dataclass
class _Plan:
    keep: bytearray = field(default_factory=bytearray)  # one byte per record: 1 = import it
    renames: dict[str, str] = field(default_factory=dict)
    created: int = 0
    appended: int = 0
    unchanged: int = 0
    skipped: int = 0
    renamed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def mark(self, index: int, keep: bool) -> None:
        if index >= len(self.keep):  # records are planned a chunk at a time, problems at once
            self.keep.extend(bytes(index + 1 - len(self.keep)))
        self.keep[index] = keep

    def skip(self, index: int, why: str) -> None:
        self.mark(index, False)
        self.skipped += 1
        if len(self.problems) < MAX_REPORTED:
            self.problems.append(why)
        elif len(self.problems) == MAX_REPORTED:
            self.problems.append("... and more (the counts are complete)")


def reader_for(format_name: str) -> Reader:
    module = FORMATS.get(format_name)
    if module is None:
        raise UnknownFormat(
            f"--from: unknown format {format_name!r}; memesh reads {', '.join(FORMATS)}",
            field="from",
        )
    try:
        loaded = importlib.import_module(f"graph.ops.foreign.readers.{module}")
    except ModuleNotFoundError:
        raise UnknownFormat(f"--from {format_name}: this memesh has no reader for it") from None
    read: Reader = loaded.read
    return read


def _project_of(memory: ForeignMemory, project: str | None) -> str | None:
    if memory.unfiled:  # the source says "no project's": `--project` does not claim it
        return None
    own = [project_of(t) for t in memory.tags if is_project_tag(t)]
    return memory.project or (own[0] if own else None) or project


def _entry(
    memory: ForeignMemory, project: str | None, name: str, label: str, renames: dict[str, str]
) -> dict[str, Any]:
    """The bundle entry of `memory` (graph/ops/bundle/entry.py), with its origin."""
    tags = list(memory.tags)
    if project is not None and project_tag(project) not in tags:
        tags.append(project_tag(project))
    namespace = memory.namespace if memory.namespace in NAMESPACES else None
    usage = memory.usage
    origin: dict[str, Any] = {
        "source": label,
        "place": str(memory.place),
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
        "archived": memory.archived,
        "extra": memory.extra,
    }
    if usage is not None:
        origin.update(
            access_count=usage.access_count,
            last_accessed_at=usage.last_accessed_at,
            recall_hits=usage.recall_hits,
            recall_misses=usage.recall_misses,
        )
    return {
        "name": name,
        "type": memory.type,
        "title": memory.title,
        "namespace": namespace,
        "observations": memory.observations,
        "tags": tags,
        "relations": [{"to": renames.get(r.to, r.to), "type": r.type} for r in memory.relations],
        "trust": {"source": memory.source} if memory.source else None,
        "origin": origin,
    }


def _secret_in(memory: ForeignMemory) -> str | None:
    """Where a secret sits in `memory` and its kind (never the secret itself); None: clean."""
    texts = [("name", memory.name), ("title", memory.title or "")]
    texts += [(f"observations[{i}]", o) for i, o in enumerate(memory.observations)]
    texts += [(f"tags[{i}]", t) for i, t in enumerate(memory.tags)]
    for where, text in texts:
        found = find_secret(text)
        if found is not None:
            return f"{where} holds a secret ({found.detector})"
    return None


@dataclass(frozen=True)
class _Held:
    """What memesh holds under the names of one chunk."""

    ids: dict[str, int]
    projects: dict[int, set[str]]
    observations: dict[int, set[str]]
    tags: dict[int, set[str]]

    @classmethod
    def of(cls, names: set[str]) -> _Held:
        ids = dict(Entity.objects.filter(name__in=names).values_list("name", "id"))
        projects: dict[int, set[str]] = {}
        tags: dict[int, set[str]] = {}
        for entity_id, tag in Tag.objects.filter(entity_id__in=ids.values()).values_list(
            "entity_id", "name"
        ):
            tags.setdefault(entity_id, set()).add(tag)
            if is_project_tag(tag):
                projects.setdefault(entity_id, set()).add(project_of(tag))
        observations: dict[int, set[str]] = {}
        for entity_id, text in Observation.objects.filter(entity_id__in=ids.values()).values_list(
            "entity_id", "text"
        ):
            observations.setdefault(entity_id, set()).add(normalize_observation(text))
        return cls(ids, projects, observations, tags)

    def other_project(self, name: str, project: str | None) -> bool:
        held = self.projects.get(self.ids[name], set()) if name in self.ids else set()
        return bool(held) and project not in held


def _renamed(name: str, project: str | None) -> str:
    return f"{name} ({project or 'no project'})"


def _plan_chunk(
    chunk: list[tuple[int, ForeignMemory, str | None]],
    plan: _Plan,
    label: str,
    strict: bool,
) -> None:
    names = {m.name for _, m, _ in chunk} | {_renamed(m.name, p) for _, m, p in chunk}
    held = _Held.of(names)
    for index, memory, project in chunk:
        name = memory.name
        if held.other_project(name, project):
            name = _renamed(memory.name, project)
            if held.other_project(name, project):
                plan.skip(index, f"{memory.place}: name {memory.name!r} is another project's")
                continue
            plan.renames[memory.name] = name
            if len(plan.renamed) < MAX_REPORTED:
                plan.renamed.append(f"{memory.place}: {memory.name!r} -> {name!r}")
        raw = _entry(memory, project, name, label, {})
        try:
            entry = BundleEntry.model_validate(raw)
        except ValidationError as exc:
            problem = f"{memory.place}: {describe_validation_error(exc)}"
            if strict:
                raise StoppedAtProblem(problem) from None
            plan.skip(index, problem)
            continue
        plan.mark(index, True)
        entity_id = held.ids.get(name)
        if entity_id is None:
            plan.created += 1
            continue
        known = held.observations.get(entity_id, set())
        new_obs = {normalize_observation(o) for o in entry.observations if o.strip()} - known
        new_tags = set(entry.tags) - held.tags.get(entity_id, set())
        if new_obs or new_tags:
            plan.appended += 1
        else:
            plan.unchanged += 1


def _plan(
    read: Reader,
    source: Path,
    project: str | None,
    label: str,
    strict: bool,
    progress: Progress | None,
) -> _Plan:
    plan = _Plan()
    chunk: list[tuple[int, ForeignMemory, str | None]] = []
    for index, record in enumerate(read(source, project=project)):
        if isinstance(record, ForeignProblem):
            if strict:
                raise StoppedAtProblem(f"stopped at the first problem (--strict): {record}")
            plan.skip(index, str(record))
        else:
            secret = _secret_in(record)
            if secret is not None:
                plan.skip(index, f"{record.place}: {secret}; not imported")
            else:
                chunk.append((index, record, _project_of(record, project)))
        if len(chunk) >= PLAN_CHUNK:
            _plan_chunk(chunk, plan, label, strict)
            chunk = []
        if progress is not None:
            progress("reading", 1)
    if chunk:
        _plan_chunk(chunk, plan, label, strict)
    return plan


def _kept_entries(
    read: Reader, source: Path, project: str | None, label: str, plan: _Plan
) -> Callable[[], Iterator[object]]:
    def entries() -> Iterator[object]:
        for index, record in enumerate(read(source, project=project)):
            if index < len(plan.keep) and plan.keep[index] and isinstance(record, ForeignMemory):
                where = _project_of(record, project)
                name = plan.renames.get(record.name, record.name)
                yield _entry(record, where, name, label, plan.renames)

    return entries


def foreign_import(
    *,
    format_name: str,
    source: Path,
    apply: bool = False,
    project: str | None = None,
    strict: bool = False,
    source_host: str,
    progress: Progress | None = None,
) -> ForeignImportOutput:
    """Import the memories of `source`, a file or folder of format `format_name` (the module
    docstring); a dry run unless `apply`."""
    read = reader_for(format_name)
    if not source.exists():
        raise SourceMissing(f"{source}: no such file or folder", field="path")
    label = f"import:{format_name}:{source.resolve()}"
    plan = _plan(read, source, project, label, strict, progress)
    relations, errors = 0, []
    if apply and any(plan.keep):
        result = bundle_import(
            entries=_kept_entries(read, source, project, label, plan),
            strategy="append",
            namespace=None,
            source_host=source_host,
            progress=(lambda n: progress("writing", n)) if progress is not None else None,
            foreign=True,
        )
        relations, errors = result.relations, result.errors
    return ForeignImportOutput(
        format=format_name,
        path=str(source),
        applied=apply,
        created=plan.created,
        appended=plan.appended,
        unchanged=plan.unchanged,
        skipped=plan.skipped,
        relations=relations,
        renamed=plan.renamed,
        problems=plan.problems,
        errors=errors,
    )
