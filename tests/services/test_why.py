"""POST /v1/why and the `why` operation: commits joined to commit entities and sessions, the
file-tag half labelled as such, and every gap a typed abstention."""

from __future__ import annotations

from typing import Any

import pytest

from graph.ops.registry import OPERATIONS
from tests.helpers import CTX, remember
from tests.helpers import remember_commit as commit
from tests.helpers import remember_in_session as in_session
from tests.rest import assert_error, post_json

pytestmark = pytest.mark.django_db


def why(**payload: Any) -> dict[str, Any]:
    return OPERATIONS["why"].run(payload, CTX)


def test_a_commit_is_joined_to_its_entity_and_session() -> None:
    commit("commit-abc1234", "abc1234deadbeef", session="s-1")
    in_session("kp-1", "s-1")
    in_session("kp-other", "s-2")

    result = why(file="src/auth.ts", commits=["abc1234"])

    (c,) = result["commits"]
    assert c["entity"]["name"] == "commit-abc1234" and c["abstentions"] == []
    assert c["session"]["session_id"] == "s-1"
    assert [e["name"] for e in c["session"]["entities"]] == ["commit-abc1234", "kp-1"]
    assert c["session"]["truncated"] is False
    assert result["abstentions"] == []


def test_gaps_are_typed_abstentions() -> None:
    commit("commit-1111111", "1111111aaaa")  # captured before commits recorded sessions

    result = why(file="src/auth.ts", commits=["1111111", "2222222"])

    linked, unknown = result["commits"]
    assert linked["abstentions"] == ["no_session_link"] and linked["session"] is None
    assert unknown["abstentions"] == ["no_commit_entity"] and unknown["entity"] is None


def test_no_commits_field_is_a_gap_but_an_empty_list_is_an_answer() -> None:
    assert why(file="a.py")["abstentions"] == ["no_commits_supplied"]
    assert why(file="a.py", commits=[])["abstentions"] == []


def test_file_memories_come_by_basename_tag_and_say_so() -> None:
    remember("auth-note", "tokens are RS256", tags=["file:auth.ts", "project:app"])
    remember("other-note", "unrelated", tags=["file:other.ts", "project:app"])
    remember("elsewhere", "same name, other project", tags=["file:auth.ts", "project:x"])

    result = why(file="src/lib/auth.ts", project="app")

    assert result["basename"] == "auth.ts"
    assert result["file_memories"]["basis"] == "file-tag"
    assert [e["name"] for e in result["file_memories"]["entities"]] == ["auth-note"]


def test_the_commit_list_is_capped_by_limit() -> None:
    result = why(file="a.py", commits=["abcdef0", "abcdef1", "abcdef2"], limit=2)
    assert len(result["commits"]) == 2


def test_the_schema_is_strict_over_rest(client) -> None:
    ok = post_json(client, "why", {"file": "src/auth.ts", "commits": []})
    assert ok.status_code == 200 and ok.json()["data"]["abstentions"] == []

    for bad in (
        {"file": "a.py", "commits": ["not-a-hash"]},
        {"file": "a.py", "repo": "/tmp"},  # no repository path, ever
        {"commits": ["abcdef0"]},
        {"file": "a.py", "limit": 51},
    ):
        assert_error(post_json(client, "why", bad), 400, "validation.bad-body")
