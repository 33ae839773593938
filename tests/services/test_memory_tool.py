"""The Anthropic memory tool (`memory_20250818`) mapped onto the memory graph."""

from __future__ import annotations

from typing import Any

import pytest

from api.memory_tool import (
    TOOL_DEFINITION,
    MemoryToolResult,
    decode_name,
    encode_name,
    handle_memory_command,
)
from graph.indexing import consistency
from graph.models import Entity, Observation, Status, Tag
from tests.helpers import forget, names, observations_of, recall, remember

pytestmark = pytest.mark.django_db


def run(command: str, **fields: Any) -> MemoryToolResult:
    return handle_memory_command({"command": command, **fields})


def ok(command: str, **fields: Any) -> str:
    result = run(command, **fields)
    assert not result.is_error, result.content
    return result.content


def refused(command: str, **fields: Any) -> str:
    result = run(command, **fields)
    assert result.is_error, result.content
    return result.content


def snapshot() -> list[tuple[Any, ...]]:
    """Everything a refused command must leave as it was."""
    return [
        *Entity.objects.order_by("id").values_list("id", "name", "namespace", "status", "type"),
        *Observation.objects.order_by("id").values_list("id", "entity_id", "text"),
    ]


def test_the_tool_definition_is_the_anthropic_memory_tool() -> None:
    assert TOOL_DEFINITION == {"type": "memory_20250818", "name": "memory"}


def test_a_result_renders_as_a_tool_result_block() -> None:
    block = run("view", path="/nope").tool_result("toolu_1")
    assert block["type"] == "tool_result"
    assert block["tool_use_id"] == "toolu_1"
    assert block["is_error"] is True
    assert "outside /memories" in block["content"]


# --- path space ---------------------------------------------------------------------------


def test_view_root_lists_the_three_namespaces_with_counts() -> None:
    remember("a", "one", namespace="team")
    remember("b", "two", namespace="team")
    remember("c", "three")
    out = ok("view", path="/memories")
    assert out.splitlines() == [
        "/memories",
        "- personal/ (1 memory)",
        "- team/ (2 memories)",
        "- global/ (0 memories)",
    ]


def test_view_namespace_lists_active_entities_with_type_and_tags() -> None:
    remember("Project Apollo", "moon", type="project", tags=["space", "nasa"], namespace="team")
    remember("a/b\\c%d", "odd name", namespace="team")
    remember("gone", "bye", namespace="team")
    remember("elsewhere", "not here", namespace="global")
    ok("delete", path="/memories/team/gone.md")
    out = ok("view", path="/memories/team")
    assert out.splitlines() == [
        "/memories/team (2 memories)",
        "- Project Apollo.md (type: project) tags: space, nasa",
        "- a%2Fb%5Cc%25d.md (type: note)",
    ]


def test_only_slash_backslash_and_percent_are_encoded_and_decoding_inverts_it() -> None:
    assert encode_name("Project Apollo") == "Project Apollo"
    assert encode_name("a/b\\c%d é") == "a%2Fb%5Cc%25d é"
    assert decode_name("a%2Fb%5Cc%25d é") == "a/b\\c%d é"
    remember("src/app.py", "entry point")
    assert ok("view", path="/memories/personal/src%2Fapp.py.md") == "     1\tentry point"


def test_a_percent_sequence_other_than_the_three_is_refused_not_guessed() -> None:
    remember("Project Apollo", "moon")
    assert "Invalid percent-encoding" in refused(
        "view", path="/memories/personal/Project%20Apollo.md"
    )


# --- view -----------------------------------------------------------------------------------


def test_view_file_numbers_lines_in_observation_id_order_without_header() -> None:
    remember("m", "first", "second", "third")
    assert (
        ok("view", path="/memories/personal/m.md") == "     1\tfirst\n     2\tsecond\n     3\tthird"
    )


def test_view_order_is_insertion_order_not_score() -> None:
    remember("m", "zzz first")
    remember("m", "aaa second")
    Entity.objects.filter(name="m").update(access_count=99)
    assert ok("view", path="/memories/personal/m.md").splitlines() == [
        "     1\tzzz first",
        "     2\taaa second",
    ]


def test_view_splits_a_multi_line_observation_into_numbered_lines() -> None:
    remember("m", "one", "two-a\ntwo-b\ntwo-c", "three")
    lines = ok("view", path="/memories/personal/m.md").splitlines()
    assert lines == [
        "     1\tone",
        "     2\ttwo-a",
        "     3\ttwo-b",
        "     4\ttwo-c",
        "     5\tthree",
    ]


def test_view_range_selects_lines_and_minus_one_reads_to_the_end() -> None:
    remember("m", "a", "b", "c", "d")
    assert ok("view", path="/memories/personal/m.md", view_range=[2, 3]).splitlines() == [
        "     2\tb",
        "     3\tc",
    ]
    assert ok("view", path="/memories/personal/m.md", view_range=[3, -1]).splitlines() == [
        "     3\tc",
        "     4\td",
    ]
    assert "Invalid view_range" in refused(
        "view", path="/memories/personal/m.md", view_range=[3, 9]
    )
    assert "view_range" in refused("view", path="/memories/personal/m.md", view_range="1-2")


def test_a_file_exists_only_at_its_own_namespace() -> None:
    remember("m", "x", namespace="team")
    assert "does not exist" in refused("view", path="/memories/personal/m.md")
    assert ok("view", path="/memories/team/m.md") == "     1\tx"


# --- create ---------------------------------------------------------------------------------


def test_create_makes_an_entity_with_one_observation_per_line() -> None:
    out = ok("create", path="/memories/global/a%2Fb.md", file_text="first line\n\nsecond line\n")
    assert "created" in out
    entity = Entity.objects.get(name="a/b")
    assert entity.namespace == "global"
    assert entity.type == "note"
    assert entity.status == Status.ACTIVE
    assert entity.metadata["provenance"]["source_host"] == "memory-tool"
    assert observations_of("a/b") == ["first line", "second line"]
    assert names(recall("second")) == ["a/b"]


def test_create_overwrites_observations_and_preserves_tags_and_type() -> None:
    remember("m", "old wombatfact", type="pattern", tags=["keep-me"])
    out = ok("create", path="/memories/personal/m.md", file_text="new koalafact")
    assert "overwritten" in out
    assert observations_of("m") == ["new koalafact"]
    entity = Entity.objects.get(name="m")
    assert entity.type == "pattern"
    assert list(Tag.objects.filter(entity=entity).values_list("name", flat=True)) == ["keep-me"]
    # The index follows the write in the same transaction.
    assert names(recall("koalafact")) == ["m"]
    assert names(recall("wombatfact")) == []


def test_create_onto_an_archived_entity_of_the_same_namespace_brings_it_back() -> None:
    remember("m", "old")
    ok("delete", path="/memories/personal/m.md")
    ok("create", path="/memories/personal/m.md", file_text="fresh")
    assert Entity.objects.get(name="m").status == Status.ACTIVE
    assert observations_of("m") == ["fresh"]


def test_create_refuses_a_name_taken_in_another_namespace_and_changes_nothing() -> None:
    remember("m", "team fact", namespace="team")
    before = snapshot()
    out = refused("create", path="/memories/personal/m.md", file_text="other")
    assert "already taken" in out and "team" in out
    assert snapshot() == before


def test_create_refuses_a_name_taken_by_an_archived_entity_in_another_namespace() -> None:
    remember("m", "team fact", namespace="team")
    ok("delete", path="/memories/team/m.md")
    before = snapshot()
    assert "already taken" in refused("create", path="/memories/global/m.md", file_text="x")
    assert snapshot() == before


def test_create_stores_a_repeated_line_once_and_says_so() -> None:
    out = ok("create", path="/memories/personal/m.md", file_text="same  fact\nother\nsame fact\n")
    assert "2 lines" in out and "1 repeated line" in out
    assert observations_of("m") == ["same  fact", "other"]


def test_create_stores_lines_stripped_as_remember_does_so_forget_can_match_them() -> None:
    ok("create", path="/memories/personal/m.md", file_text="  indented line  \nplain\n")
    assert observations_of("m") == ["indented line", "plain"]
    forget("m", observation="indented line")
    assert observations_of("m") == ["plain"]


def test_overwriting_a_file_is_not_corroboration_and_keeps_confidence() -> None:
    remember("m", "old")
    before = Entity.objects.get(name="m").confidence
    ok("create", path="/memories/personal/m.md", file_text="new\nnewer")
    assert Entity.objects.get(name="m").confidence == before


def test_overwriting_a_decision_needs_no_why() -> None:
    # remember's `replace` of a decision asks for `why`; the memory tool has no such field,
    # and the reference's create only overwrites observations.
    remember("choice", "use sqlite", type="decision")
    ok("create", path="/memories/personal/choice.md", file_text="use sqlite with WAL")
    entity = Entity.objects.get(name="choice")
    assert entity.type == "decision"
    assert observations_of("choice") == ["use sqlite with WAL"]


# --- str_replace ----------------------------------------------------------------------------


def test_str_replace_edits_the_one_observation_in_place() -> None:
    remember("m", "alpha", "the old wording", "omega")
    ids = list(Observation.objects.order_by("id").values_list("id", flat=True))
    ok("str_replace", path="/memories/personal/m.md", old_str="old", new_str="dingoword")
    assert observations_of("m") == ["alpha", "the dingoword wording", "omega"]
    assert list(Observation.objects.order_by("id").values_list("id", flat=True)) == ids
    assert names(recall("dingoword")) == ["m"]


def test_str_replace_with_two_matches_is_refused_with_both_line_numbers_and_nothing_changed() -> (
    None
):
    remember("m", "use tabs", "unrelated", "never use tabs")
    before = snapshot()
    out = refused("str_replace", path="/memories/personal/m.md", old_str="use tabs", new_str="x")
    assert "2 times" in out
    assert "lines 1, 3" in out
    assert snapshot() == before


def test_ambiguity_line_numbers_count_the_lines_of_multi_line_observations() -> None:
    remember("m", "a\nfoo", "b", "foo")
    out = refused("str_replace", path="/memories/personal/m.md", old_str="foo", new_str="x")
    assert "lines 2, 4" in out


def test_str_replace_without_a_match_is_refused() -> None:
    remember("m", "alpha")
    before = snapshot()
    assert "No match" in refused(
        "str_replace", path="/memories/personal/m.md", old_str="beta", new_str="x"
    )
    assert snapshot() == before


def test_str_replace_omitting_new_str_deletes_the_text_and_an_emptied_line_goes() -> None:
    remember("m", "keep", "drop me", "also keep")
    ok("str_replace", path="/memories/personal/m.md", old_str="drop me")
    assert observations_of("m") == ["keep", "also keep"]


def test_str_replace_deleting_a_whole_line_with_its_newline_keeps_the_neighbours() -> None:
    remember("m", "one", "two", "three")
    ids = dict(Observation.objects.values_list("text", "id"))
    ok("str_replace", path="/memories/personal/m.md", old_str="two\n", new_str="")
    assert observations_of("m") == ["one", "three"]
    assert dict(Observation.objects.values_list("text", "id")) == {
        "one": ids["one"],
        "three": ids["three"],
    }


def test_str_replace_adding_a_line_between_observations_keeps_the_order() -> None:
    remember("m", "one", "two", "three")
    ok("str_replace", path="/memories/personal/m.md", old_str="one\ntwo", new_str="one\nnew\ntwo")
    assert observations_of("m") == ["one", "new", "two", "three"]
    assert ok("view", path="/memories/personal/m.md").splitlines()[1] == "     2\tnew"


def test_str_replace_across_two_observations_merges_the_edited_text() -> None:
    remember("m", "alpha", "beta", "gamma")
    ok("str_replace", path="/memories/personal/m.md", old_str="pha\nbe", new_str="-")
    assert observations_of("m") == ["al-ta", "gamma"]


def test_str_replace_making_a_line_equal_to_another_merges_them() -> None:
    remember("m", "use tabs", "use  spaces")
    ok("str_replace", path="/memories/personal/m.md", old_str="spaces", new_str="tabs")
    assert observations_of("m") == ["use tabs"]


def test_str_replace_is_an_edit_not_corroboration() -> None:
    remember("m", "alpha")
    before = Entity.objects.get(name="m").confidence
    ok("str_replace", path="/memories/personal/m.md", old_str="alpha", new_str="beta")
    assert Entity.objects.get(name="m").confidence == before


def test_str_replace_refuses_an_empty_old_str() -> None:
    remember("m", "alpha")
    assert "old_str" in refused("str_replace", path="/memories/personal/m.md", old_str="")


# --- insert ---------------------------------------------------------------------------------


def test_insert_zero_prepends() -> None:
    remember("m", "one", "two")
    ok("insert", path="/memories/personal/m.md", insert_line=0, insert_text="zero")
    assert observations_of("m") == ["zero", "one", "two"]


def test_insert_goes_after_the_whole_multi_line_memory_owning_the_line() -> None:
    remember("m", "one", "two-a\ntwo-b\ntwo-c", "three")
    ok("insert", path="/memories/personal/m.md", insert_line=2, insert_text="new")
    assert observations_of("m") == ["one", "two-a\ntwo-b\ntwo-c", "new", "three"]


def test_insert_after_the_last_line_appends_and_is_indexed() -> None:
    remember("m", "one")
    ok("insert", path="/memories/personal/m.md", insert_line=1, insert_text="platypusnote\n")
    assert observations_of("m") == ["one", "platypusnote"]
    assert names(recall("platypusnote")) == ["m"]


def test_insert_of_a_line_the_memory_already_holds_stores_nothing() -> None:
    remember("m", "one", "two")
    before = snapshot()
    out = ok("insert", path="/memories/personal/m.md", insert_line=0, insert_text="two ")
    assert "already holds" in out
    assert snapshot() == before


def test_insert_of_a_new_line_keeps_confidence_as_remember_does() -> None:
    # Before the trust model a new observation added 0.05; only `observe` raises it now.
    remember("m", "one")
    before = Entity.objects.get(name="m").confidence
    ok("insert", path="/memories/personal/m.md", insert_line=0, insert_text="zero")
    assert Entity.objects.get(name="m").confidence == before


def test_insert_refuses_a_line_past_the_end_or_not_an_integer() -> None:
    remember("m", "one", "two")
    before = snapshot()
    assert "insert_line" in refused(
        "insert", path="/memories/personal/m.md", insert_line=3, insert_text="x"
    )
    assert "insert_line" in refused(
        "insert", path="/memories/personal/m.md", insert_line="1", insert_text="x"
    )
    assert "insert_line" in refused(
        "insert", path="/memories/personal/m.md", insert_line=-1, insert_text="x"
    )
    assert snapshot() == before


# --- delete ---------------------------------------------------------------------------------


def test_delete_archives_the_entity_and_hides_it_from_view() -> None:
    remember("m", "emufact")
    ok("delete", path="/memories/personal/m.md")
    entity = Entity.objects.get(name="m")
    assert entity.status == Status.ARCHIVED
    assert observations_of("m") == ["emufact"]
    assert "does not exist" in refused("view", path="/memories/personal/m.md")
    assert names(recall("emufact")) == []
    assert names(recall("emufact", include_archived=True)) == ["m"]


def test_delete_of_a_missing_file_is_refused() -> None:
    assert "does not exist" in refused("delete", path="/memories/personal/nothing.md")


# --- rename ---------------------------------------------------------------------------------


def test_rename_renames_and_reindexes_under_the_new_name() -> None:
    remember("oldname", "fact")
    ok("rename", old_path="/memories/personal/oldname.md", new_path="/memories/personal/fresh.md")
    assert not Entity.objects.filter(name="oldname").exists()
    assert names(recall("fresh")) == ["fresh"]
    assert names(recall("oldname")) == []


def test_rename_across_namespaces_moves_the_entity() -> None:
    remember("m", "fact")
    ok("rename", old_path="/memories/personal/m.md", new_path="/memories/team/a%2Fb.md")
    entity = Entity.objects.get(name="a/b")
    assert entity.namespace == "team"
    assert entity.metadata["previous_namespace"] == "personal"
    assert ok("view", path="/memories/team/a%2Fb.md") == "     1\tfact"


def test_rename_to_the_same_name_in_another_namespace_moves_it() -> None:
    remember("m", "fact")
    ok("rename", old_path="/memories/personal/m.md", new_path="/memories/global/m.md")
    assert Entity.objects.get(name="m").namespace == "global"


def test_rename_refuses_a_name_taken_in_any_namespace_and_changes_nothing() -> None:
    remember("m", "fact")
    remember("taken", "other", namespace="global")
    before = snapshot()
    out = refused("rename", old_path="/memories/personal/m.md", new_path="/memories/team/taken.md")
    assert "already taken" in out and "global" in out
    assert snapshot() == before


def test_rename_of_a_missing_file_is_refused() -> None:
    assert "does not exist" in refused(
        "rename", old_path="/memories/personal/none.md", new_path="/memories/personal/x.md"
    )


def test_the_indexes_agree_with_the_rows_after_every_command() -> None:
    remember("m", "one", "two-a\ntwo-b", "three", tags=["t"])
    ok("create", path="/memories/team/n.md", file_text="x\ny")
    ok("insert", path="/memories/personal/m.md", insert_line=1, insert_text="inserted")
    ok("str_replace", path="/memories/personal/m.md", old_str="two-b\nthree", new_str="merged")
    ok("str_replace", path="/memories/team/n.md", old_str="x\n", new_str="")
    ok("rename", old_path="/memories/team/n.md", new_path="/memories/global/n2.md")
    ok("delete", path="/memories/personal/m.md")
    ok("create", path="/memories/personal/m.md", file_text="back")
    report = consistency.check()
    assert report.ok, report.as_json()
    assert names(recall("inserted")) == []  # overwritten by the last create
    assert names(recall("back")) == ["m"]
    assert names(recall("n2")) == ["n2"]


def test_an_edit_is_found_by_recall_by_its_words_and_carries_provenance_like_any_write() -> None:
    ok("create", path="/memories/team/deploys.md", file_text="we ship on fridays\nrollback: manual")
    ok("str_replace", path="/memories/team/deploys.md", old_str="fridays", new_str="quokkadays")
    [found] = recall("quokkadays")["entities"]
    assert found["name"] == "deploys"
    assert found["match"]["source"] == "keyword"
    assert found["observations"] == ["we ship on quokkadays", "rollback: manual"]
    # Created as any unsourced remember creates: the host stamped, a hypothesis, one
    # `remember` event; the edit keeps the previous lines as remember's `replace` does.
    assert found["metadata"]["provenance"] == {"source_host": "memory-tool"}
    assert found["trust"]["status"] == "hypothesis"
    assert found["replaced_history_count"] == 1
    metadata = Entity.objects.get(name="deploys").metadata
    assert [e["action"] for e in metadata["trust_history"]] == ["remember"]
    assert metadata["replaced_history"][0]["observations"] == [
        "we ship on fridays",
        "rollback: manual",
    ]
    assert names(recall("fridays")) == []


def test_overwriting_a_file_keeps_the_previous_lines_and_an_insert_keeps_none() -> None:
    remember("m", "old line")
    ok("insert", path="/memories/personal/m.md", insert_line=0, insert_text="added")
    assert "replaced_history" not in Entity.objects.get(name="m").metadata
    ok("create", path="/memories/personal/m.md", file_text="new line")
    history = Entity.objects.get(name="m").metadata["replaced_history"]
    assert [v["observations"] for v in history] == [["added", "old line"]]


# --- refusals (the reference's table) ----------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/memories-of-you/personal/m.md",
        "/memoriesx",
        "/other/m.md",
        "memories/personal/m.md",
        "/",
        "",
    ],
)
def test_a_path_not_under_memories_is_refused(path: str) -> None:
    remember("m", "x")
    assert "outside /memories" in refused("view", path=path)


@pytest.mark.parametrize(
    "path",
    [
        "/memories/personal/../team/m.md",
        "/memories/../memories/personal/m.md",
        "/memories/./personal",
        "/memories/personal/./m.md",
        "/memories//personal",
        "/memories/personal/",
        "/memories/",
        "/memories/personal/%2e%2e/m.md",
        "/memories/%2E%2E/m.md",
        "/memories/personal/%2e%2e.md",
        "/memories/personal/..md",
        "/memories/personal\\m.md",
        "/memories/personal/m\\x.md",
        "/memories/personal/m\x00.md",
        "/memories/personal/m%00.md",
    ],
)
def test_traversal_empty_segments_backslash_and_nul_are_refused(path: str) -> None:
    remember("m", "x")
    remember("m.md", "y")
    before = snapshot()
    assert run("view", path=path).is_error
    assert run("create", path=path, file_text="overwritten").is_error
    assert run("delete", path=path).is_error
    assert snapshot() == before


def test_more_than_two_levels_deep_is_refused() -> None:
    out = refused("create", path="/memories/personal/dir/m.md", file_text="x")
    assert "too deep" in out
    assert not Entity.objects.exists()


def test_an_unknown_namespace_is_refused() -> None:
    assert "Unknown namespace" in refused("view", path="/memories/private")
    assert "Unknown namespace" in refused("create", path="/memories/private/m.md", file_text="x")
    assert not Entity.objects.exists()


@pytest.mark.parametrize("path", ["/memories", "/memories/team"])
def test_writing_to_a_directory_is_refused(path: str) -> None:
    assert "directory" in refused("create", path=path, file_text="x")
    assert "directory" in refused("str_replace", path=path, old_str="a", new_str="b")
    assert "directory" in refused("insert", path=path, insert_line=0, insert_text="x")
    assert not Entity.objects.exists()


@pytest.mark.parametrize("path", ["/memories", "/memories/team"])
def test_deleting_or_renaming_a_directory_is_refused(path: str) -> None:
    remember("m", "x", namespace="team")
    before = snapshot()
    assert "directory" in refused("delete", path=path)
    assert "directory" in refused("rename", old_path=path, new_path="/memories/global")
    assert "directory" in refused("rename", old_path=path, new_path="/memories/global/n.md")
    assert "directory" in refused("rename", old_path="/memories/team/m.md", new_path=path)
    assert snapshot() == before


def test_a_file_without_the_md_suffix_is_refused() -> None:
    assert ".md" in refused("create", path="/memories/personal/notes.txt", file_text="x")


@pytest.mark.parametrize(
    "payload",
    [
        None,
        "view /memories",
        [],
        {},
        {"command": "open", "path": "/memories"},
        {"command": "view"},
        {"command": "view", "path": 7},
        {"command": "create", "path": "/memories/personal/m.md"},
        {"command": "create", "path": "/memories/personal/m.md", "file_text": 3},
        {"command": "str_replace", "path": "/memories/personal/m.md", "old_str": "a", "new_str": 1},
        {
            "command": "insert",
            "path": "/memories/personal/m.md",
            "insert_line": True,
            "insert_text": "x",
        },
        {"command": "rename", "old_path": "/memories/personal/m.md"},
    ],
)
def test_malformed_input_is_an_error_result_not_an_exception(payload: object) -> None:
    remember("m", "a")
    before = snapshot()
    result = handle_memory_command(payload)
    assert result.is_error
    assert result.content
    assert snapshot() == before


def test_a_write_that_fails_validation_midway_changes_nothing() -> None:
    remember("m", "keep")
    before = snapshot()
    refused("create", path="/memories/personal/m.md", file_text="ok\n" + "x" * 10_001)
    assert snapshot() == before
