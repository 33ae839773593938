"""The mem0 reader on exports in the shapes mem0's documentation and source give (its library
cannot store a memory without a hosted model, so no file here was written by mem0 itself):
the open-source `Memory.get_all()` result `{"results": [...]}`, the platform's
`MemoryClient.get_all()` list, and JSON Lines of the same items; hostile files too."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graph.ops.foreign.errors import NotThisFormat
from graph.ops.foreign.readers import mem0
from graph.ops.foreign.records import ForeignMemory, ForeignProblem

# Memory.get_all(user_id="alice") of the open-source library (mem0/memory/main.py): the
# MemoryItem fields, the promoted session ids, the rest of the payload under `metadata`.
OSS = {
    "results": [
        {
            "id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
            "memory": "Prefers vegetarian food",
            "hash": "0ec9ef1c7bbf2f7a4b4e0f9d5a1c2b3e",
            "created_at": "2024-07-20T01:23:45.123456-07:00",
            "updated_at": None,
            "user_id": "alice",
            "agent_id": "chef-bot",
            "metadata": {"project": "kitchen", "source_app": "chat"},
        },
        {
            "id": "a1b2c3d4-0000-4000-8000-000000000002",
            "memory": "Is allergic to nuts",
            "hash": "9d5a1c2b3e0ec9ef1c7bbf2f7a4b4e0f",
            "created_at": "2024-07-21T10:00:00-07:00",
            "updated_at": "2024-07-22T08:30:00-07:00",
            "user_id": "alice",
            "run_id": "trip-2024",
            "actor_id": "alice",
            "role": "user",
        },
    ]
}
# MemoryClient.get_all() of the platform (GET /v1/memories/): a list, with categories.
PLATFORM = [
    {
        "id": "3c90c3cc-0d44-4b50-8888-8dd25736052a",
        "memory": "Works on the billing service\nand owns its on-call rota",
        "user_id": "bob",
        "categories": ["work", "professional_details"],
        "metadata": {},
        "immutable": False,
        "expiration_date": None,
        "created_at": "2023-11-07T05:31:56Z",
        "updated_at": "2023-11-07T05:31:56Z",
        "owner": "bob",
        "organization": "acme",
    }
]


def _read(path: Path, project: str | None = None) -> list[ForeignMemory | ForeignProblem]:
    return list(mem0.read(path, project=project))


def _memories(records: list[ForeignMemory | ForeignProblem]) -> list[ForeignMemory]:
    return [r for r in records if isinstance(r, ForeignMemory)]


def test_the_open_source_get_all_result_is_one_memory_per_item(tmp_path: Path) -> None:
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps(OSS))

    first, second = _read(path)

    assert isinstance(first, ForeignMemory) and isinstance(second, ForeignMemory)
    assert first.name == "mem0-892db2ae-06d9-49e5-8b3e-585ef9b85b8e"
    assert first.observations == ["Prefers vegetarian food"]
    assert first.type == "fact"
    assert first.tags == ["user:alice", "agent:chef-bot"]
    assert first.project == "kitchen"  # from the exporting program's metadata
    assert first.created_at == datetime(2024, 7, 20, 8, 23, 45, 123456, tzinfo=UTC)
    assert first.updated_at is None
    assert first.extra["metadata"] == {"project": "kitchen", "source_app": "chat"}
    assert first.extra["hash"] == "0ec9ef1c7bbf2f7a4b4e0f9d5a1c2b3e"
    assert str(first.place) == f"{path} (results[0])"
    assert second.tags == ["user:alice", "run:trip-2024"]
    assert second.project is None
    assert (second.extra["actor_id"], second.extra["role"]) == ("alice", "user")
    assert second.updated_at == datetime(2024, 7, 22, 15, 30, tzinfo=UTC)


def test_the_platform_list_keeps_categories_as_tags_and_project_comes_from_the_command(
    tmp_path: Path,
) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(PLATFORM))

    [memory] = _read(path, project="payments")

    assert isinstance(memory, ForeignMemory)
    assert memory.tags == ["category:work", "category:professional_details", "user:bob"]
    assert memory.title == "Works on the billing service"
    assert memory.observations == ["Works on the billing service\nand owns its on-call rota"]
    assert memory.project == "payments"
    assert memory.extra["categories"] == ["work", "professional_details"]
    assert memory.extra["immutable"] is False
    assert memory.extra["organization"] == "acme"
    assert str(memory.place) == f"{path} ([0])"


def test_json_lines_of_the_same_items_are_read_line_by_line_and_a_bad_line_is_named(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mem0.jsonl"
    items = OSS["results"]
    lines = [json.dumps(items[0]), "", '{"id": "x", "memory": ', json.dumps(items[1])]
    lines += ['{"id": "no-text", "memory": "  "}', json.dumps(items[0]), "[1, 2]"]
    path.write_text("\n".join(lines) + "\n")

    records = _read(path)

    assert [m.name for m in _memories(records)] == [
        "mem0-892db2ae-06d9-49e5-8b3e-585ef9b85b8e",
        "mem0-a1b2c3d4-0000-4000-8000-000000000002",
    ]
    problems = {p.place.line: p for p in records if isinstance(p, ForeignProblem)}
    assert sorted(problems) == [3, 5, 6, 7]
    assert problems[3].value == '{"id": "x", "memory":'
    assert problems[5].field == "memory"
    assert "same memory again" in problems[6].message
    assert problems[7].message == "not a JSON object"


def test_a_truncated_export_keeps_what_came_before_the_break(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    text = json.dumps(OSS)
    path.write_text(text[: text.index("Is allergic")])

    records = _read(path)

    assert [type(r) for r in records] == [ForeignMemory, ForeignProblem]
    problem = records[1]
    assert isinstance(problem, ForeignProblem)
    assert problem.place.row == "results[1]"
    assert "breaks off after results[0]" in problem.message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not JSON"),
        (b'{"memories": []}', "no `results`"),
        (b"{not json", "not JSON"),
    ],
)
def test_a_file_that_is_no_mem0_export_is_refused_in_one_sentence(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "other.json"
    path.write_bytes(content)
    with pytest.raises(NotThisFormat, match=message):
        _read(path)


def test_an_item_without_an_id_is_named_by_its_text(tmp_path: Path) -> None:
    path = tmp_path / "noid.json"
    path.write_text(json.dumps([{"memory": "Likes tea"}, {"memory": "Likes tea"}]))

    records = _read(path)

    assert isinstance(records[0], ForeignMemory)
    assert records[0].name.startswith("mem0-") and len(records[0].name) == len("mem0-") + 16
    assert isinstance(records[1], ForeignProblem)  # the same text twice is one memory
