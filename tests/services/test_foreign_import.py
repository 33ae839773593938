"""Importing the original MeMesh's database and the official MCP memory server's file
(graph/ops/foreign/): each written by the real program, imported, and compared with what the
program holds; dry runs, idempotence, hostile files, secrets and another project's names; and
the projects a source's records are filed under."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graph.models import Entity, Relation, Status, TrustStatus
from graph.ops.bundle.exporter import ExportInput, bundle_export
from graph.ops.foreign.errors import (
    NotThisFormat,
    SourceMissing,
    StoppedAtProblem,
    UnknownFormat,
)
from graph.ops.foreign.service import ForeignImportOutput, foreign_import
from graph.ops.kit.trust.view import source_origin
from tests.foreign_sources import memesh4_home
from tests.helpers import observations_of, remember

pytestmark = pytest.mark.django_db

GITHUB_TOKEN = "ghp_" + "Q7x" * 12  # a token's shape, built here so no file holds one


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An original MeMesh 4.6 database written by its own CLI (tests/foreign_sources.py)."""
    return memesh4_home(tmp_path_factory.mktemp("memesh4") / "home")


def run(fmt: str, source: Path, **options: Any) -> ForeignImportOutput:
    return foreign_import(format_name=fmt, source=source, source_host="cli", **options)


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _original_memories(db: Path) -> dict[str, dict[str, Any]]:
    """What the original holds, in the fields memesh keeps."""
    out: dict[str, dict[str, Any]] = {}
    for entity_id, name, type_, title, namespace, status, created, access in _rows(
        db,
        "SELECT id, name, type, title, namespace, status, created_at, access_count FROM entities",
    ):
        out[name] = {
            "type": type_,
            "title": title,
            "namespace": namespace,
            "archived": status == "archived",
            "created_at": datetime.fromisoformat(created).replace(tzinfo=UTC),
            "access_count": access,
            "observations": [
                r[0]
                for r in _rows(
                    db, f"SELECT content FROM observations WHERE entity_id={entity_id} ORDER BY id"
                )
            ],
            "tags": sorted(
                r[0] for r in _rows(db, f"SELECT tag FROM tags WHERE entity_id={entity_id}")
            ),
            "relations": sorted(
                _rows(
                    db,
                    "SELECT e.name, r.relation_type FROM relations r JOIN entities e "
                    f"ON e.id = r.to_entity_id WHERE r.from_entity_id={entity_id}",
                )
            ),
        }
    return out


def test_a_database_written_by_the_original_is_imported_field_by_field(original: Path) -> None:
    result = run("memesh4", original, apply=True)

    held = _original_memories(original)
    assert result.created == len(held) == 5 and result.skipped == 0 and not result.errors
    assert result.relations == 2
    for name, want in held.items():
        entity = Entity.objects.get(name=name)
        assert entity.type == want["type"] and entity.title == want["title"], name
        assert entity.namespace == want["namespace"], name
        assert (entity.status == Status.ARCHIVED) == want["archived"], name
        assert entity.created_at == want["created_at"], name
        assert entity.access_count == want["access_count"], name
        assert observations_of(name) == want["observations"], name
        assert sorted(t.name for t in entity.tags.all()) == want["tags"], name
        mine = sorted(
            Relation.objects.filter(from_entity=entity).values_list("to_entity__name", "type")
        )
        assert mine == want["relations"], name
    # memesh's export of the result: the original's active memories, field by field.
    exported = bundle_export(data=ExportInput(cross_project=True)).entities
    active = {n for n, w in held.items() if not w["archived"]}
    assert {e["name"] for e in exported} == active
    for e in exported:
        want = held[e["name"]]
        assert (e["type"], e["title"], e["namespace"]) == (
            want["type"],
            want["title"],
            want["namespace"],
        )
        assert e["observations"] == want["observations"]
        assert sorted(e["tags"]) == want["tags"]
        assert sorted((r["to"], r["type"]) for r in e["relations"]) == want["relations"]


def test_an_imported_memory_is_a_hypothesis_that_names_where_it_came_from(original: Path) -> None:
    run("memesh4", original, apply=True)

    entity = Entity.objects.get(name="auth-new")
    assert entity.trust == TrustStatus.HYPOTHESIS and entity.source is None
    assert source_origin(entity.metadata) == "imported"
    provenance = entity.metadata["provenance"]
    assert provenance["source"] == f"import:memesh4:{original.resolve()}"
    assert provenance["place"].endswith("(entities.id=2)")
    assert entity.metadata["foreign"]["metadata"]["provenance"]["source_host"] == "cli"


def test_the_original_database_is_never_written(original: Path) -> None:
    before = original.read_bytes()
    files = sorted(p.name for p in original.parent.iterdir())

    run("memesh4", original, apply=True)
    run("memesh4", original.parent.parent / ".memesh")

    assert original.read_bytes() == before
    assert sorted(p.name for p in original.parent.iterdir()) == files


def test_a_dry_run_counts_what_it_would_do_and_writes_nothing(original: Path) -> None:
    result = run("memesh4", original)

    assert not result.applied
    assert (result.created, result.appended, result.skipped) == (5, 0, 0)
    assert not Entity.objects.exists()


def test_a_second_apply_creates_and_appends_nothing(original: Path) -> None:
    run("memesh4", original, apply=True)
    before = sorted(Entity.objects.values_list("name", "updated_at"))

    again = run("memesh4", original, apply=True)

    assert (again.created, again.appended, again.unchanged) == (0, 0, 5)
    assert again.relations == 0
    assert sorted(Entity.objects.values_list("name", "updated_at")) == before


def test_a_truncated_database_is_refused_in_one_sentence(original: Path, tmp_path: Path) -> None:
    cut = tmp_path / "knowledge-graph.db"
    cut.write_bytes(original.read_bytes()[: original.stat().st_size // 3])

    with pytest.raises(NotThisFormat, match="damaged or truncated"):
        run("memesh4", cut, apply=True)
    assert not Entity.objects.exists()


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")

    with pytest.raises(NotThisFormat, match="not the original MeMesh's: it has no entities"):
        run("memesh4", other, apply=True)


def test_a_file_that_is_no_database_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("just some notes, not a database at all\n" * 200)

    with pytest.raises(NotThisFormat, match=r"not a readable SQLite database.*not the original"):
        run("memesh4", text)


def test_a_missing_path_and_an_unknown_format_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SourceMissing):
        run("memesh4", tmp_path / "absent.db")
    with pytest.raises(UnknownFormat, match="memesh reads memesh4, mcp-memory"):
        run("obsidian", tmp_path)


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_a_bad_line_is_named_and_skipped_and_strict_stops_before_writing(tmp_path: Path) -> None:
    source = _jsonl(
        tmp_path / "memory.jsonl",
        '{"type":"entity","name":"Alice","entityType":"person","observations":["Likes tea"]}',
        '{"type":"entity","name":"Bob","entityType":"person","observations":[',
        '{"type":"entity","name":"","entityType":"person","observations":[]}',
    )

    with pytest.raises(StoppedAtProblem, match=r"memory.jsonl:2"):
        run("mcp-memory", source, apply=True, strict=True)
    assert not Entity.objects.exists()

    result = run("mcp-memory", source, apply=True)
    assert (result.created, result.skipped) == (1, 2)
    assert "memory.jsonl:2: not JSON" in result.problems[0]
    assert result.problems[1].startswith(f"{source}:3: name: must be a non-empty string")
    assert observations_of("Alice") == ["Likes tea"]


def test_a_secret_in_the_source_is_reported_and_never_stored(tmp_path: Path) -> None:
    source = _jsonl(
        tmp_path / "memory.jsonl",
        '{"type":"entity","name":"deploy","entityType":"note","observations":'
        f'["Deploy with {GITHUB_TOKEN}"]}}',
        '{"type":"entity","name":"clean","entityType":"note","observations":["No secret"]}',
    )

    result = run("mcp-memory", source, apply=True)

    assert (result.created, result.skipped) == (1, 1)
    assert result.problems == [
        f"{source}:1: observations[0] holds a secret (github-token); not imported"
    ]
    assert GITHUB_TOKEN not in result.model_dump_json()
    assert not Entity.objects.filter(name="deploy").exists()


def test_a_name_held_by_another_projects_memory_is_not_merged_into_it(tmp_path: Path) -> None:
    remember("Alice", "Works on billing", project="billing")
    source = _jsonl(
        tmp_path / "memory.jsonl",
        '{"type":"entity","name":"Alice","entityType":"person","observations":["Likes tea"]}',
        '{"type":"entity","name":"Bob","entityType":"person","observations":["Writes Rust"]}',
        '{"type":"relation","from":"Bob","to":"Alice","relationType":"knows"}',
    )

    result = run("mcp-memory", source, apply=True, project="webapp")

    assert observations_of("Alice") == ["Works on billing"]
    assert observations_of("Alice (webapp)") == ["Likes tea"]
    assert result.renamed == [f"{source}:1: 'Alice' -> 'Alice (webapp)'"]
    assert Relation.objects.filter(
        from_entity__name="Bob", to_entity__name="Alice (webapp)", type="knows"
    ).exists()
    again = run("mcp-memory", source, apply=True, project="webapp")
    assert (again.created, again.appended, again.unchanged) == (0, 0, 2)


def test_a_memesh_database_is_not_taken_for_the_originals(tmp_path: Path) -> None:
    copy = tmp_path / "memesh.db"
    with sqlite3.connect(copy) as conn:
        # memesh's own tables, and one the original has too (`tags`), but not the original's.
        for table in ("graph_entity", "django_migrations", "tags"):
            conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY)")

    with pytest.raises(NotThisFormat, match="memesh's own database"):
        run("memesh4", copy)


def test_a_memory_of_the_same_project_gets_only_what_is_new(tmp_path: Path) -> None:
    remember("Alice", "Likes tea", project="webapp")
    source = _jsonl(
        tmp_path / "memory.jsonl",
        '{"type":"entity","name":"Alice","entityType":"person","observations":'
        '["Likes  tea","Speaks Norwegian"]}',
    )

    planned = run("mcp-memory", source, project="webapp")
    result = run("mcp-memory", source, apply=True, project="webapp")

    assert (planned.created, planned.appended) == (0, 1)
    assert (result.created, result.appended) == (0, 1)
    assert observations_of("Alice") == ["Likes tea", "Speaks Norwegian"]
    imported = Entity.objects.get(name="Alice").metadata["import"]
    assert imported["source"] == f"import:mcp-memory:{source.resolve()}"
    assert imported["place"] == f"{source}:1"


def test_a_memesh_bundle_is_not_taken_for_the_servers_file(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.json"
    bundle.write_text('{"version": "3.0.0", "entity_count": 0, "entities": [\n]}\n')

    with pytest.raises(NotThisFormat, match="memesh export bundle"):
        run("mcp-memory", bundle)


def test_the_users_claude_code_notes_stay_unfiled_even_with_a_project(
    tmp_path: Path, settings: Any
) -> None:
    settings.CLAUDE_CONFIG_DIR = tmp_path / "claude-config"
    settings.CLAUDE_CONFIG_DIR.mkdir()
    (settings.CLAUDE_CONFIG_DIR / "CLAUDE.md").write_text("# Preferences\nTerse answers.\n")
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "CLAUDE.md").write_text("# Deploy\nShip on Tuesdays.\n")

    result = run("claude-code", folder, apply=True, project="webapp")

    assert (result.created, result.skipped) == (2, 0)
    project_note = Entity.objects.get(name="CLAUDE.md: Deploy")
    user_note = Entity.objects.get(name="~/.claude/CLAUDE.md: Preferences")
    assert [t.name for t in project_note.tags.all()] == ["project:webapp"]
    assert [t.name for t in user_note.tags.all()] == []  # read in every project: no one's
    again = run("claude-code", folder, apply=True, project="webapp")
    assert (again.created, again.appended, again.unchanged) == (0, 0, 2)
