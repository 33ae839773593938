"""The basic-memory reader on notes in basic-memory's documented format (its markdown parser,
basic_memory/markdown/plugins.py, is the reference), hostile ones included. A folder written
by the real program is read in tests/e2e/test_foreign_basic_memory.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.readers import basic_memory
from graph.ops.foreign.records import ForeignMemory, ForeignProblem, ForeignRelation

NOTE = """---
title: Cache Layer
type: decision
permalink: cache-layer
tags:
- performance
- '#redis'
created: 2026-03-01T09:30:00+00:00
owner: platform
---

# Cache Layer

We put Redis in front of the billing database.

## Observations
- [decision] Cache invoices for 5 minutes #billing (the March review)
- [risk] Stale totals after a refund #billing #refunds
- A plain note with a #perf tag
- [x] a finished task, not an observation #billing
- [00:01:02] a transcript timecode, not a category

## Relations
- implements [[Billing Design]]
- "depends on" [[infra/redis-cluster]] (for sessions)
- see [[Incident 42]] for the outage

```python
# not a heading: code
- [fake] not an observation either
```
"""


@pytest.fixture
def bm_config(tmp_path: Path, settings: Any) -> Path:
    """basic-memory's config folder for the test, empty until a test writes config.json."""
    config = tmp_path / "bm-config"
    config.mkdir()
    settings.BASIC_MEMORY_CONFIG_DIR = config
    return config


def _write(folder: Path, relative: str, text: str | bytes) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _read(folder: Path, project: str | None = None) -> list[ForeignMemory | ForeignProblem]:
    return list(basic_memory.read(folder, project=project))


def _memories(records: list[ForeignMemory | ForeignProblem]) -> dict[str, ForeignMemory]:
    return {r.name: r for r in records if isinstance(r, ForeignMemory)}


def _problems(records: list[ForeignMemory | ForeignProblem]) -> list[ForeignProblem]:
    return [r for r in records if isinstance(r, ForeignProblem)]


def test_a_note_becomes_one_memory_with_its_observations_in_order(
    tmp_path: Path, bm_config: Path
) -> None:
    folder = tmp_path / "kb"
    _write(folder, "decisions/cache.md", NOTE)
    _write(folder, "design/Billing Design.md", "---\ntitle: Billing Design\n---\nInvoices.\n")
    _write(folder, "infra/redis-cluster.md", "---\ntitle: Redis Cluster\n---\nThree nodes.\n")

    memories = _memories(_read(folder))

    cache = memories["Cache Layer"]
    assert cache.type == "decision"
    assert cache.title == "Cache Layer"
    assert cache.observations == [
        "We put Redis in front of the billing database.",
        "Cache invoices for 5 minutes #billing (the March review)",
        "Stale totals after a refund #billing #refunds",
        "A plain note with a #perf tag",
        "- [x] a finished task, not an observation #billing\n"
        "- [00:01:02] a transcript timecode, not a category",
        "- see [[Incident 42]] for the outage\n\n"
        "```python\n# not a heading: code\n- [fake] not an observation either\n```",
    ]
    assert cache.tags == [
        "performance",
        "redis",
        "category:decision",
        "billing",
        "category:risk",
        "refunds",
        "perf",
    ]
    # Targets are written as the names of the notes they point at (a title, or a path).
    assert cache.relations == [
        ForeignRelation(to="Billing Design", type="implements"),
        ForeignRelation(to="Redis Cluster", type="depends on"),
    ]
    # A link to a note the folder does not hold (yet) is kept, but is no relation.
    assert cache.extra["unresolved_relations"] == ["links_to [[Incident 42]]"]
    assert cache.project == "kb"
    assert cache.created_at is not None and cache.created_at.isoformat().startswith("2026-03-01")
    assert cache.updated_at is not None and cache.updated_at.tzinfo is not None
    assert cache.extra["permalink"] == "cache-layer"
    assert cache.extra["file"] == "decisions/cache.md"
    assert cache.extra["front_matter"] == {"owner": "platform"}
    assert str(cache.place) == f"{folder / 'decisions/cache.md'}:1"


def test_the_project_is_the_name_basic_memory_gives_the_folder(
    tmp_path: Path, bm_config: Path
) -> None:
    folder = tmp_path / "kb"
    _write(folder, "a.md", "Plain text, no front matter.\n")
    config = {"projects": {"research": {"path": str(folder), "mode": "local"}}}
    (bm_config / "config.json").write_text(json.dumps(config))

    [memory] = _read(folder)
    assert isinstance(memory, ForeignMemory)
    assert (memory.project, memory.name, memory.type) == ("research", "a", "note")
    assert memory.observations == ["Plain text, no front matter."]

    [given] = _read(folder, project="mine")
    assert isinstance(given, ForeignMemory) and given.project == "mine"


def test_broken_front_matter_is_named_by_file_and_line_and_the_rest_is_read(
    tmp_path: Path, bm_config: Path
) -> None:
    folder = tmp_path / "kb"
    bad = _write(folder, "bad.md", "---\ntitle: Broken\ntags: [one, two\nbody: x\n---\nText\n")
    unclosed = _write(folder, "unclosed.md", "---\ntitle: Never closed\n\nText\n")
    listed = _write(folder, "list.md", "---\n- just\n- a list\n---\nText\n")
    _write(folder, "good.md", "---\ntitle: Good\n---\nFine.\n")

    records = _read(folder)

    assert list(_memories(records)) == ["Good"]
    problems = {p.place.file: p for p in _problems(records)}
    assert problems[str(bad)].place.line == 4
    assert problems[str(bad)].field == "front matter"
    assert "not valid YAML" in str(problems[str(bad)])
    assert str(problems[str(unclosed)]).startswith(f"{unclosed}:1: front matter")
    assert "never closed" in problems[str(unclosed)].message
    assert "mapping" in problems[str(listed)].message


def test_binary_undecodable_and_empty_files_are_problems_not_exceptions(
    tmp_path: Path, bm_config: Path
) -> None:
    folder = tmp_path / "kb"
    binary = _write(folder, "image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    latin = _write(folder, "latin.md", "first line\ncaf\xe9\n".encode("latin-1"))
    empty = _write(folder, "empty.md", "  \n\n")
    only_meta = _write(folder, "meta.md", "---\ntitle: Only Meta\n---\n\n")
    _write(folder, ".obsidian/workspace.md", "not a note")

    records = _read(folder)

    assert _memories(records) == {}
    messages = {p.place.file: (p.place.line, p.message) for p in _problems(records)}
    assert set(messages) == {str(binary), str(latin), str(empty), str(only_meta)}
    assert "binary" in messages[str(binary)][1]
    assert messages[str(latin)] == (2, "is not UTF-8 text (byte 0xe9 at offset 14)")
    assert "empty" in messages[str(empty)][1]
    assert "no text" in messages[str(only_meta)][1]


def test_a_huge_section_is_cut_into_observations_of_the_largest_size_memesh_keeps(
    tmp_path: Path, bm_config: Path
) -> None:
    folder = tmp_path / "kb"
    paragraphs = [f"Paragraph {i}: " + "word " * 400 for i in range(60)]  # ~120 kB
    one_line = "x" * 25_000
    _write(folder, "big.md", "# Big\n\n" + "\n\n".join(paragraphs) + "\n\n" + one_line + "\n")

    [memory] = _read(folder)

    assert isinstance(memory, ForeignMemory)
    assert all(0 < len(o) <= 10_000 for o in memory.observations)
    text = "\n\n".join(memory.observations)
    assert all(p.strip() in text for p in paragraphs)
    assert text.count("x") >= len(one_line)


def test_notes_of_one_title_get_names_of_their_own_and_links_find_them(
    tmp_path: Path, bm_config: Path
) -> None:
    folder = tmp_path / "kb"
    _write(folder, "a/Plan.md", "---\ntitle: Plan\npermalink: a/plan\n---\nFirst plan.\n")
    _write(folder, "b/Plan.md", "---\ntitle: Plan\npermalink: b/plan\n---\nSecond plan.\n")
    _write(folder, "c/Plan.md", "---\ntitle: Plan\n---\nThird plan.\n")
    _write(folder, "links.md", "Both: [[a/plan]] and [[b/plan|the other]], `[[not a link]]`.\n")

    memories = _memories(_read(folder))

    assert {m.name: m.observations for m in memories.values()} == {
        "Plan": ["First plan."],
        "b/plan": ["Second plan."],
        "Plan (2)": ["Third plan."],
        "links": ["Both: [[a/plan]] and [[b/plan|the other]], `[[not a link]]`."],
    }
    assert memories["b/plan"].extra["renamed_from"] == "Plan"
    assert memories["links"].relations == [
        ForeignRelation(to="Plan", type="links_to"),
        ForeignRelation(to="b/plan", type="links_to"),
    ]


def test_a_file_is_refused_as_not_a_basic_memory_folder(tmp_path: Path, bm_config: Path) -> None:
    note = _write(tmp_path, "note.md", "Text.\n")
    with pytest.raises(NotThisFormat, match="not a folder"):
        _read(note)
