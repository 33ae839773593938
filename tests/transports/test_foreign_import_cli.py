"""`memesh import --from FORMAT PATH` and `memesh export --format mcp-memory`: a file written
by the official MCP memory server goes in and comes back out equal; a dry run says what it
would do; refusals carry their stable errorCode."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from graph.models import Entity
from tests.foreign_sources import jsonl, mcp_memory_file

pytestmark = pytest.mark.django_db

SERVER_CALLS: list[tuple[str, dict[str, Any]]] = [
    (
        "create_entities",
        {
            "entities": [
                {"name": "Alice", "entityType": "person", "observations": ["Likes tea"]},
                {"name": "Bob", "entityType": "person", "observations": []},
                {"name": "Café Roma", "entityType": "place", "observations": ["Opens at 7"]},
            ]
        },
    ),
    (
        "create_relations",
        {
            "relations": [
                {"from": "Alice", "to": "Bob", "relationType": "knows"},
                {"from": "Bob", "to": "Café Roma", "relationType": "works_at"},
            ]
        },
    ),
    (
        "add_observations",
        {"observations": [{"entityName": "Bob", "contents": ["Writes Rust", "Lives in Oslo"]}]},
    ),
]


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mcp_memory_file(tmp_path_factory.mktemp("mcp-memory") / "memory.jsonl", SERVER_CALLS)


def _import(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _refusal(*args: str) -> dict[str, Any]:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit):
        call_command("import", *args, "--json", stdout=out, stderr=err)
    assert out.getvalue() == ""
    return json.loads(err.getvalue())


def test_the_servers_file_is_imported_and_exported_back_equal(
    server_file: Path, tmp_path: Path
) -> None:
    out, _ = _import("--from", "mcp-memory", str(server_file), "--apply", "--json")
    result = json.loads(out)
    assert (result["created"], result["relations"], result["skipped"]) == (3, 2, 0)

    back = tmp_path / "back.jsonl"
    call_command(
        "export", "--format", "mcp-memory", "--cross-project", "--output", str(back),
        stdout=StringIO(),
    )  # fmt: skip

    original, exported = jsonl(server_file), jsonl(back)
    entities = [line for line in original if line["type"] == "entity"]
    assert [line for line in exported if line["type"] == "entity"] == entities
    relations = sorted(json.dumps(line) for line in original if line["type"] == "relation")
    assert sorted(json.dumps(line) for line in exported if line["type"] == "relation") == relations
    # The server's own form, byte for byte: one JSON.stringify per line, non-ASCII kept.
    written = set(back.read_text(encoding="utf-8").splitlines())
    assert set(server_file.read_text(encoding="utf-8").splitlines()) == written


def test_a_dry_run_says_what_it_would_do_and_writes_nothing(server_file: Path) -> None:
    out, _ = _import("--from", "mcp-memory", str(server_file))

    assert out.splitlines()[0] == "Would create 3, append 0, unchanged 0, skipped 0."
    assert "run again with --apply" in out
    assert not Entity.objects.exists()


def test_a_second_apply_reports_everything_unchanged(server_file: Path) -> None:
    _import("--from", "mcp-memory", str(server_file), "--apply")

    out, _ = _import("--from", "mcp-memory", str(server_file), "--apply")

    assert out.splitlines()[0] == "Created 0, appended 0, unchanged 3, skipped 0; 0 relations."


def test_refusals_carry_stable_error_codes(server_file: Path, tmp_path: Path) -> None:
    assert _refusal("--from", "obsidian", str(tmp_path))["errorCode"] == "import.unknown-format"
    missing = _refusal("--from", "mcp-memory", str(tmp_path / "absent.jsonl"))
    assert missing["errorCode"] == "import.source-not-found"
    wrong = _refusal("--from", "memesh4", str(server_file))
    assert wrong["errorCode"] == "import.wrong-format"
    assert "not a readable SQLite database" in wrong["error"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"entity","name":"A","entityType":"x","observations":[]}\nnot json\n')
    strict = _refusal("--from", "mcp-memory", str(bad), "--apply", "--strict")
    assert strict["errorCode"] == "import.bad-record"
    assert f"{bad}:2" in strict["error"]
    assert not Entity.objects.exists()


def test_a_bundle_import_still_needs_its_file() -> None:
    assert _refusal()["errorCode"] == "validation.bad-param"
