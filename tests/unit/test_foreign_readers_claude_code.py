"""The claude-code reader on a real git repository and a Claude Code folder of the test's own
(CLAUDE_CONFIG_DIR), laid out as Claude Code's memory documentation describes: the project's
CLAUDE.md files and rules, the user's, and auto memory under `projects/<slug>/memory/`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.transcripts.claude_code import slug
from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.readers import claude_code
from graph.ops.foreign.records import ForeignMemory, ForeignProblem
from tests.git_repos import GitRepo

PROJECT = "acme/shop"  # memesh's identity of the repository, from its origin
CLAUDE_MD = """# Shop

Guidance for working in this repository.

## Commands

- `make test` runs the suite

```bash
# a comment in code, not a heading
make lint
```

## Style
Use type hints everywhere.

## Style
Prefer small modules.
"""
MEMORY_INDEX = """- [Testing feedback](feedback_testing.md) — run the real suite
- [Gone](missing.md) — a link to no file stays text

## Loose notes
The staging database resets nightly.
"""
FEEDBACK = """---
name: Testing feedback
description: Integration tests hit a real database
type: feedback
---

Integration tests must hit a real database, not mocks.

**Why:** a mocked test passed while the migration failed.
"""


@pytest.fixture
def config(tmp_path: Path, settings: Any) -> Path:
    folder = tmp_path / "claude-config"
    folder.mkdir()
    settings.CLAUDE_CONFIG_DIR = folder
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    repo = GitRepo(tmp_path / "shop")
    repo.git("remote", "add", "origin", "git@github.com:acme/shop.git")
    return repo


def _memory_dir(config: Path, root: Path) -> Path:
    folder = config / "projects" / slug(root.resolve()) / "memory"
    folder.mkdir(parents=True)
    return folder


def _read(folder: Path, project: str | None = None) -> list[ForeignMemory | ForeignProblem]:
    return list(claude_code.read(folder, project=project))


def _memories(records: list[ForeignMemory | ForeignProblem]) -> dict[str, ForeignMemory]:
    return {r.name: r for r in records if isinstance(r, ForeignMemory)}


def test_each_section_of_the_project_and_user_instructions_is_a_memory(
    repo: GitRepo, config: Path
) -> None:
    claude_md = repo.write("CLAUDE.md", CLAUDE_MD)
    repo.write(".claude/CLAUDE.md", "## Deploy\nShip on Tuesdays.\n")
    repo.write("CLAUDE.local.md", "My sandbox answers on port 8000.\n")
    repo.write(".claude/rules/testing.md", "---\npaths: ['tests/**']\n---\nUse pytest.\n")
    (config / "CLAUDE.md").write_text("# Preferences\nTerse answers.\n")

    records = _read(repo.root)

    assert all(isinstance(r, ForeignMemory) for r in records), records
    memories = _memories(records)
    assert list(memories) == [
        "CLAUDE.md: Shop",
        "CLAUDE.md: Commands",
        "CLAUDE.md: Style",
        "CLAUDE.md: Style (2)",
        ".claude/CLAUDE.md: Deploy",
        "CLAUDE.local.md",
        ".claude/rules/testing.md",
        "~/.claude/CLAUDE.md: Preferences",
    ]
    commands = memories["CLAUDE.md: Commands"]
    assert commands.observations == [
        "## Commands\n- `make test` runs the suite\n\n"
        "```bash\n# a comment in code, not a heading\nmake lint\n```"
    ]
    assert commands.type == "instruction"
    assert commands.title == "Commands"
    assert commands.project == PROJECT
    assert str(commands.place) == f"{claude_md}:5"
    assert memories["CLAUDE.md: Style (2)"].observations == ["## Style\nPrefer small modules."]
    assert memories["CLAUDE.md: Style (2)"].extra["renamed_from"] == "CLAUDE.md: Style"
    assert memories["CLAUDE.local.md"].observations == ["My sandbox answers on port 8000."]
    assert memories["CLAUDE.local.md"].extra["scope"] == "local"
    rules = memories[".claude/rules/testing.md"]
    assert rules.observations == ["Use pytest."]
    assert rules.extra["front_matter"] == {"paths": ["tests/**"]}
    assert str(rules.place).endswith("testing.md:4")
    user = memories["~/.claude/CLAUDE.md: Preferences"]
    assert user.project is None and user.unfiled  # the user's, not the project's
    assert user.extra["scope"] == "user"


def test_auto_memory_files_are_one_memory_each_and_the_index_only_adds_its_own_text(
    repo: GitRepo, config: Path
) -> None:
    memory_dir = _memory_dir(config, repo.root)
    (memory_dir / "MEMORY.md").write_text(MEMORY_INDEX)
    (memory_dir / "feedback_testing.md").write_text(FEEDBACK)
    (memory_dir / "project_freeze.md").write_text("Merge freeze from 2026-03-05.\n")

    memories = _memories(_read(repo.root))

    assert list(memories) == [
        "memory/MEMORY.md",
        "memory/MEMORY.md: Loose notes",
        "memory/feedback_testing.md: Testing feedback",
        "memory/project_freeze.md: project_freeze",
    ]
    assert memories["memory/MEMORY.md"].observations == [
        "- [Gone](missing.md) — a link to no file stays text"
    ]
    feedback = memories["memory/feedback_testing.md: Testing feedback"]
    assert feedback.type == "feedback"
    assert feedback.title == "Testing feedback"
    assert feedback.observations == [
        "Integration tests must hit a real database, not mocks.\n\n"
        "**Why:** a mocked test passed while the migration failed."
    ]
    assert feedback.extra["description"] == "Integration tests hit a real database"
    assert feedback.project == PROJECT
    assert all(m.project == PROJECT for m in memories.values())


def test_a_subfolder_reads_the_claude_md_files_on_the_way_down_from_the_top(
    repo: GitRepo, config: Path
) -> None:
    repo.write("CLAUDE.md", "Top level.\n")
    repo.write("services/api/CLAUDE.md", "## API\nVersioned routes.\n")
    repo.write("services/web/CLAUDE.md", "Not on the way.\n")

    memories = _memories(_read(repo.root / "services" / "api", project="mine"))

    assert list(memories) == ["CLAUDE.md", "services/api/CLAUDE.md: API"]
    assert {m.project for m in memories.values()} == {"mine"}


def test_hostile_files_are_problems_and_the_rest_is_read(repo: GitRepo, config: Path) -> None:
    repo.write("CLAUDE.md", "# Big\n\n" + "\n\n".join("word " * 500 for _ in range(50)))
    repo.write("CLAUDE.local.md", "")
    memory_dir = _memory_dir(config, repo.root)
    (memory_dir / "broken.md").write_text("---\nname: [unclosed\n---\nText\n")
    (memory_dir / "binary.md").write_bytes(b"\x00\x01\x02")
    (memory_dir / "latin.md").write_bytes("caf\xe9".encode("latin-1"))
    (memory_dir / "meta_only.md").write_text("---\nname: Empty\n---\n")

    records = _read(repo.root)

    memories = _memories(records)
    assert list(memories) == ["CLAUDE.md: Big"]
    assert all(0 < len(o) <= 10_000 for o in memories["CLAUDE.md: Big"].observations)
    assert len(memories["CLAUDE.md: Big"].observations) >= 2
    problems = {Path(p.place.file).name: p for p in records if isinstance(p, ForeignProblem)}
    assert set(problems) == {
        "CLAUDE.local.md",
        "broken.md",
        "binary.md",
        "latin.md",
        "meta_only.md",
    }
    assert "empty" in problems["CLAUDE.local.md"].message
    assert problems["broken.md"].place.line == 2
    assert "front matter is not valid YAML" in problems["broken.md"].message
    assert "binary" in problems["binary.md"].message
    assert "not UTF-8" in problems["latin.md"].message
    assert "no text" in problems["meta_only.md"].message


def test_a_folder_that_is_not_a_repository_is_its_own_project(tmp_path: Path, config: Path) -> None:
    folder = tmp_path / "scratch"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("Scratch notes.\n")

    [memory] = _read(folder)

    assert isinstance(memory, ForeignMemory)
    assert memory.project is not None and memory.project.startswith("scratch-")


def test_a_file_is_refused_as_not_a_project_folder(tmp_path: Path, config: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("x\n")
    with pytest.raises(NotThisFormat, match="not a folder"):
        _read(tmp_path / "CLAUDE.md")


def test_a_project_whose_claude_folder_is_the_users_reads_that_file_once(
    repo: GitRepo, settings: Any
) -> None:
    settings.CLAUDE_CONFIG_DIR = repo.root / ".claude"
    repo.write(".claude/CLAUDE.md", "## Habits\nCommit small.\n")

    memories = _memories(_read(repo.root))

    assert list(memories) == [".claude/CLAUDE.md: Habits"]
    assert memories[".claude/CLAUDE.md: Habits"].project == PROJECT
