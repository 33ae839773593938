"""The memory tool's pure parts: the path space and a memory as a file (no database)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from api.memory_tool import lines
from api.memory_tool.paths import (
    NAMESPACES,
    MemoryFile,
    MemoryPath,
    decode_name,
    encode_name,
    parse_file_path,
    parse_path,
)
from core.errors import InvalidInput, OperationFailed
from graph.models import Namespace

PURE = ["api/memory_tool/paths.py", "api/memory_tool/lines.py", "graph/errors.py"]
ROOT = Path(__file__).resolve().parent.parent.parent


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("module", PURE)
def test_the_pure_modules_import_no_django(module: str) -> None:
    imported = _imports(ROOT / module)
    assert not {m for m in imported if m.split(".")[0] == "django"}
    # Their graph imports are pure too: errors (plain Python) and the shared field types
    # (pydantic, and the plain project-tag helpers).
    assert {m for m in imported if m.startswith("graph.")} <= {
        "graph.errors",
        "graph.ops.kit.fields",
        "api.memory_tool.paths",
    }
    fields = _imports(ROOT / "graph/ops/kit/fields.py")
    assert not {m for m in fields if m.split(".")[0] == "django"}
    assert {m for m in fields if m.startswith("graph")} <= {"graph.project_tags"}
    assert not {
        m for m in _imports(ROOT / "graph/project_tags.py") if m.startswith(("django", "graph"))
    }


def test_the_namespaces_are_the_models_namespaces() -> None:
    assert NAMESPACES == tuple(Namespace.values) == ("personal", "team", "global")


def test_a_path_parses_to_its_address_and_prints_back() -> None:
    assert parse_path("/memories") == MemoryPath()
    assert parse_path("/memories/team") == MemoryPath("team")
    assert parse_path("/memories/team/a%2Fb.md") == MemoryPath("team", "a/b")
    assert str(MemoryPath("team", "a/b")) == "/memories/team/a%2Fb.md"
    assert str(MemoryFile("global", "100%")) == "/memories/global/100%25.md"
    assert parse_file_path("/memories/personal/x.md", "edit") == MemoryFile("personal", "x")


def test_encoding_round_trips_any_name() -> None:
    for name in ["plain", "a/b", "c\\d", "50%", "%2F", "é ü 中文", "a%25b/c"]:
        assert decode_name(encode_name(name)) == name


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "must be a string"),
        ("/memories-of-you/x.md", "outside /memories"),
        ("/memories/personal/../team/m.md", "`..` segment"),
        ("/memories//team", "empty"),
        ("/memories/personal/%2E%2E.md", "Encoded dots"),
        ("/memories/personal/a\\b.md", "backslash"),
        ("/memories/personal/m\x00.md", "NUL"),
        ("/memories/personal/m%00.md", "Invalid percent-encoding"),
        ("/memories/personal/a/b.md", "too deep"),
        ("/memories/private", "Unknown namespace"),
        ("/memories/personal/notes.txt", "<name>.md"),
        ("/memories/personal/ padded.md", "whitespace"),
        ("/memories/personal/" + "n" * 256 + ".md", "at most 255"),
    ],
)
def test_every_refused_path_says_why(raw: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace(".", r"\.").replace("[", r"\[")):
        parse_path(raw)


@pytest.mark.parametrize("raw", ["/memories", "/memories/team"])
def test_a_directory_is_not_a_file(raw: str) -> None:
    with pytest.raises(InvalidInput, match="is a directory"):
        parse_file_path(raw, "delete")


# --- a memory as a file ---------------------------------------------------------------------


def test_file_lines_are_stripped_non_blank_and_length_checked() -> None:
    assert lines.file_lines("  a  \n\n\tb\n   \n") == ["a", "b"]
    with pytest.raises(InvalidInput, match="at most 10000"):
        lines.file_lines("ok\n" + "x" * 10_001)


def test_numbered_counts_the_lines_of_multi_line_observations() -> None:
    texts = ["one", "two-a\ntwo-b", "three"]
    assert (
        lines.numbered(texts, None, "f")
        == "     1\tone\n     2\ttwo-a\n     3\ttwo-b\n     4\tthree"
    )
    assert lines.numbered(texts, (3, -1), "f") == "     3\ttwo-b\n     4\tthree"
    assert lines.numbered([], None, "f") == "f is empty"
    with pytest.raises(InvalidInput, match="Invalid view_range"):
        lines.numbered(texts, (0, 2), "f")


def test_an_insert_goes_after_the_whole_observation_owning_the_line() -> None:
    texts = ["one", "two-a\ntwo-b\ntwo-c", "three"]
    assert [lines.insert_position(texts, n, "f") for n in range(6)] == [0, 1, 2, 2, 2, 3]
    with pytest.raises(InvalidInput, match="insert_line"):
        lines.insert_position(texts, 6, "f")


@pytest.mark.parametrize(
    ("texts", "old", "new", "plan"),
    [
        (["a", "the old one", "z"], "old", "new", lines.Splice(1, 2, "the new one", 2)),
        (["one", "two", "three"], "two\n", "", lines.Splice(1, 2, None, 2)),
        (["one", "two"], "one\ntwo", "one\nnew\ntwo", lines.Splice(1, 1, "new", 1)),
        (["alpha", "beta", "gamma"], "pha\nbe", "-", lines.Splice(0, 2, "al-ta", 1)),
        (["a", "b"], "b", "  spaced  ", lines.Splice(1, 2, "spaced", 2)),
    ],
)
def test_str_replace_plans_the_smallest_splice(
    texts: list[str], old: str, new: str, plan: lines.Splice
) -> None:
    assert lines.plan_str_replace(texts, old, new, "f") == plan


def test_str_replace_refuses_empty_absent_and_ambiguous_old_str() -> None:
    with pytest.raises(InvalidInput, match="must not be empty"):
        lines.plan_str_replace(["a"], "", "x", "f")
    with pytest.raises(OperationFailed, match="No match"):
        lines.plan_str_replace(["a"], "b", "x", "f")
    with pytest.raises(OperationFailed, match="2 times in f, at lines 1, 2"):
        lines.plan_str_replace(["use tabs", "never use tabs"], "tabs", "x", "f")
    # Overlapping occurrences are each ambiguous.
    with pytest.raises(OperationFailed, match="2 times in f, at lines 1, 1"):
        lines.plan_str_replace(["aaa"], "aa", "x", "f")
