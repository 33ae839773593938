"""`memesh export-schema`: OpenAI function-calling tools from the operation registry, honest
strict mode, and the checked-in snapshots in docs/schema/ kept equal to what the code makes."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from api.operations import tool_operations
from api.schema_export import (
    SNAPSHOT_FILES,
    openai_tool_definitions,
    render,
    strict_allowed,
    strict_reason,
)
from api.tool_schemas import tool_definitions
from memesh_site.cli import command_args

SNAPSHOTS = Path(settings.BASE_DIR) / "docs" / "schema"
REGENERATE = "run `.venv/bin/memesh export-schema --write` and commit docs/schema/"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("export_schema", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


# -- the drift test --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(SNAPSHOT_FILES))
def test_snapshot_matches_the_code(fmt: str) -> None:
    path = SNAPSHOTS / SNAPSHOT_FILES[fmt]
    assert path.exists(), f"{path} is missing: {REGENERATE}"
    assert path.read_text(encoding="utf-8") == render(fmt), (
        f"{path} has drifted from the tool schemas the code generates: {REGENERATE}"
    )


def test_check_passes_on_the_checked_in_snapshots() -> None:
    assert "up to date" in run("--check")


# -- the OpenAI format -----------------------------------------------------------------------


def test_every_operation_is_an_openai_tool_with_a_prefixed_name() -> None:
    tools = openai_tool_definitions()
    names = [t["function"]["name"] for t in tools]
    assert names == [f"memesh_{op.name}" for op in tool_operations()]
    for tool, mcp in zip(tools, tool_definitions(), strict=True):
        assert tool["type"] == "function"
        assert set(tool["function"]) == {"name", "description", "parameters", "strict"}
        assert tool["function"]["description"] == mcp["description"]
        assert tool["function"]["parameters"] == mcp["inputSchema"]


def test_strict_only_where_the_schema_allows_it() -> None:
    for tool in openai_tool_definitions():
        fn = tool["function"]
        assert fn["strict"] is strict_allowed(fn["parameters"]), fn["name"]


def test_every_operation_is_an_mcp_tool() -> None:
    data = json.loads(run("--format", "mcp"))
    assert [t["name"] for t in data] == [op.name for op in tool_operations()]
    assert all({"name", "description", "inputSchema", "annotations"} <= set(t) for t in data)


def test_output_is_deterministic_sorted_and_ends_with_a_newline(tmp_path: Path) -> None:
    first = run("--format", "openai")
    assert first == run("--format", "openai") == render("openai")
    assert first.endswith("}\n]\n")
    assert (
        first == json.dumps(json.loads(first), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )
    target = tmp_path / "tools.json"
    assert run("--format", "openai", "--output", str(target)) == ""
    assert target.read_text(encoding="utf-8") == first


# -- strict_allowed --------------------------------------------------------------------------


STRICT_OK: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "kind", "tags", "rel"],
    "properties": {
        "name": {"type": "string", "description": "An entity."},
        "kind": {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "rel": {"$ref": "#/$defs/Rel"},
    },
    "$defs": {
        "Rel": {
            "type": "object",
            "additionalProperties": False,
            "required": ["to"],
            "properties": {"to": {"type": ["string", "null"], "title": "To"}},
        }
    },
}


def mutate(path: list[str], key: str, value: Any = None, remove: bool = False) -> dict[str, Any]:
    schema = json.loads(json.dumps(STRICT_OK))
    node = schema
    for step in path:
        node = node[step]
    if remove:
        del node[key]
    else:
        node[key] = value
    return schema


def test_strict_allowed_accepts_a_schema_inside_the_subset() -> None:
    assert strict_allowed(STRICT_OK), strict_reason(STRICT_OK)
    assert strict_allowed({"type": "object", "properties": {}, "additionalProperties": False})


@pytest.mark.parametrize(
    "schema",
    [
        # an optional property
        mutate([], "required", ["name", "kind", "tags"]),
        # a nested object without additionalProperties: false
        mutate(["$defs", "Rel"], "additionalProperties", remove=True),
        mutate([], "additionalProperties", True),
        # keywords outside the subset
        mutate(["properties", "name"], "default", "x"),
        mutate(["properties", "name"], "minLength", 1),
        mutate(["properties", "name"], "maxLength", 9),
        mutate(["properties", "name"], "pattern", "^a"),
        mutate(["properties", "name"], "format", "email"),
        mutate(["properties", "tags"], "maxItems", 3),
        mutate(["properties", "name"], "minimum", 1),
        mutate(["properties", "name"], "oneOf", [{"type": "string"}]),
        # a reference to nothing, or outside the schema
        mutate(["properties", "rel"], "$ref", "#/$defs/Missing"),
        mutate(["properties", "rel"], "$ref", "https://example.com/s.json"),
        # a root that is not an object
        {"anyOf": [STRICT_OK, {"type": "null"}]},
        {"type": "string"},
    ],
)
def test_strict_allowed_refuses_what_strict_mode_rejects(schema: dict[str, Any]) -> None:
    assert not strict_allowed(schema)
    assert strict_reason(schema)


def test_strict_allowed_refuses_too_many_properties_or_too_deep_nesting() -> None:
    wide = {
        "type": "object",
        "additionalProperties": False,
        "properties": {f"p{i}": {"type": "string"} for i in range(101)},
        "required": [f"p{i}" for i in range(101)],
    }
    assert not strict_allowed(wide)
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(6):
        deep = {
            "type": "object",
            "additionalProperties": False,
            "properties": {"x": deep},
            "required": ["x"],
        }
    assert not strict_allowed(deep)


def test_the_registry_schemas_are_not_strict_because_they_have_optional_fields() -> None:
    remember = next(
        t for t in openai_tool_definitions() if t["function"]["name"] == "memesh_remember"
    )
    assert remember["function"]["strict"] is False
    assert strict_reason(remember["function"]["parameters"])


# -- --check and --write ---------------------------------------------------------------------


def test_write_then_check_in_another_directory(tmp_path: Path) -> None:
    run("--write", "--snapshot-dir", str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SNAPSHOT_FILES.values())
    assert "up to date" in run("--check", "--snapshot-dir", str(tmp_path))


def test_check_fails_and_names_the_modified_snapshot(tmp_path: Path) -> None:
    shutil.copytree(SNAPSHOTS, tmp_path, dirs_exist_ok=True)
    openai = tmp_path / SNAPSHOT_FILES["openai"]
    openai.write_text(openai.read_text().replace('"strict": false', '"strict": true', 1))
    with pytest.raises(CommandError) as exc:
        run("--check", "--snapshot-dir", str(tmp_path))
    assert "openai-tools.json" in str(exc.value)
    assert "mcp-tools.json" not in str(exc.value)
    assert "--write" in str(exc.value)
    # only the MCP snapshot checked: it is still current
    assert "up to date" in run("--check", "--format", "mcp", "--snapshot-dir", str(tmp_path))


def test_check_fails_on_a_missing_snapshot(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"mcp-tools\.json is missing"):
        run("--check", "--snapshot-dir", str(tmp_path))


def test_output_is_refused_with_check() -> None:
    with pytest.raises(CommandError):
        run("--check", "--output", "x.json")


@pytest.mark.slow
def test_memesh_export_schema_check_exits_non_zero_on_drift(tmp_path: Path) -> None:
    """The real command line, hyphenated as the reference spells it."""
    shutil.copytree(SNAPSHOTS, tmp_path, dirs_exist_ok=True)
    (tmp_path / SNAPSHOT_FILES["mcp"]).write_text("[]\n")
    cmd = [sys.executable, "-m", "memesh_site.cli", "export-schema"]
    env_cwd = str(settings.BASE_DIR)
    bad = subprocess.run(
        [*cmd, "--check", "--snapshot-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=env_cwd,
        timeout=60,
    )
    assert bad.returncode == 1
    assert "mcp-tools.json differs" in bad.stderr
    good = subprocess.run(
        [*cmd, "--format", "openai"], capture_output=True, text=True, cwd=env_cwd, timeout=60
    )
    assert good.returncode == 0, good.stderr
    assert good.stdout == render("openai")


def test_cli_accepts_hyphenated_command_names() -> None:
    assert command_args(["export-schema", "--format", "openai"]) == [
        "export_schema",
        "--format",
        "openai",
    ]
    assert command_args(["serve", "--no-worker"]) == ["serve", "--no-worker"]
    assert command_args(["--version"]) == ["--version"]
    assert command_args([]) == []
