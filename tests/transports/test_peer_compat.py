"""The peer compatibility surface (docs/api.md, "Peer compatibility"): the trusted-memory
service's documented examples through its `memory_*` tools and /api/v1/memories routes, both
mapped onto memesh's operations, and the switch that keeps them off by default."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from api.mcp_server.server import _agent_tools, _operations, _tools
from api.operations import agent_tools, tool_operations
from api.tool_schemas import tool_definitions
from core.config_sections import config_update
from core.config_store import config_path
from core.errors import OperationFailed
from graph.errors import SourceRequired
from graph.models import Entity
from graph.ops.kit.operation import CallContext
from graph.ops.peer.tools import PEER_OPERATIONS, peer_operation
from tests.helpers import remember
from tests.rest import assert_error, assert_json

pytestmark = pytest.mark.django_db

AGENT = CallContext(source_host="claude-code", project="proj", guide_rules=True)
# The reference's examples, verbatim.
REMEMBER = {
    "content": "The deploy script restarts php8.4-fpm after composer install.",
    "source": "runbook",
    "invalidation_condition": "delete if deploys move to a zero-downtime reload",
}
RECALL = {"query": "what happens to php-fpm on deploy?"}


@pytest.fixture
def peer_on(settings: Any) -> Iterator[None]:
    settings.MEMESH_PEER_API = True
    yield


def tool(name: str, arguments: dict[str, Any], ctx: CallContext = AGENT) -> dict[str, Any]:
    return peer_operation(name).run(arguments, ctx)


def post(client: Client, path: str, body: object) -> Any:
    return client.post(path, data=json.dumps(body), content_type="application/json")


# --- the switch ---------------------------------------------------------------------------------


def test_off_by_default_the_tool_list_is_memeshs_and_the_routes_do_not_exist(
    client: Client,
) -> None:
    assert agent_tools() == tool_operations()
    assert not any(
        op.name.startswith("memory_") and op.name != "memory_list" for op in agent_tools()
    )
    assert_error(client.get("/api/v1/memories"), 404, "route.not-found")
    assert_error(post(client, "/api/v1/memories", REMEMBER), 404, "route.not-found")


def test_the_environment_switch_adds_the_peers_tools_after_memeshs(peer_on: None) -> None:
    names = [op.name for op in agent_tools()]

    assert names[-len(PEER_OPERATIONS) :] == [op.name for op in PEER_OPERATIONS]
    assert names.count("memory_list") == 1  # the peer's stands for memesh's on MCP
    assert {d["name"] for d in tool_definitions(agent_tools())} == set(names)
    # `memesh export-schema` stays memesh's list.
    assert "memory_remember" not in {op.name for op in tool_operations()}


def test_the_config_key_switches_it_on_too() -> None:
    path = config_path()
    saved = path.read_text() if path.exists() else None
    try:
        config_update({"peerApi": True})
        assert "memory_remember" in {op.name for op in agent_tools()}
    finally:
        if saved is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(saved)
    assert "memory_remember" not in {op.name for op in agent_tools()}


def test_the_mcp_server_lists_and_runs_what_the_switch_says(peer_on: None) -> None:
    for cached in (_tools, _operations, _agent_tools):
        cached.cache_clear()
    try:
        assert "memory_observe" in {t.name for t in _tools()}
        assert _operations()["memory_list"] is peer_operation("memory_list")
    finally:
        for cached in (_tools, _operations, _agent_tools):
            cached.cache_clear()


# --- the documented examples through the tools ---------------------------------------------------


def test_memory_remember_answers_the_documented_shape() -> None:
    result = tool("memory_remember", REMEMBER)

    assert set(result) >= {
        "id",
        "status",
        "source",
        "content",
        "namespace",
        "kind",
        "confidence",
        "learned_at",
        "last_observed_at",
        "hop_count",
        "parent_id",
        "invalidation_condition",
        "expires_at",
        "ephemeral",
        "expiry",
    }
    assert (result["status"], result["source"], result["content"]) == (
        "fact",
        "runbook",
        REMEMBER["content"],
    )
    assert (result["namespace"], result["kind"], result["confidence"]) == ("proj", "semantic", 1.0)
    assert (result["hop_count"], result["parent_id"], result["expires_at"]) == (0, None, None)
    assert (result["ephemeral"], result["expiry"]) == (False, "permanent")
    assert result["invalidation_condition"] == REMEMBER["invalidation_condition"]
    assert result["last_observed_at"] is not None
    assert Entity.objects.get(pk=result["id"]).trust == "fact"


def test_memory_recall_answers_facts_first_with_provenance_and_a_trust_hint() -> None:
    fact = tool("memory_remember", REMEMBER)
    tool("memory_remember", {"content": "php-fpm deploy is maybe slow on Mondays"})

    result = tool("memory_recall", RECALL)

    assert result["query"] == RECALL["query"]
    first = result["results"][0]
    assert (first["id"], first["status"], first["source"]) == (fact["id"], "fact", "runbook")
    assert 0 < first["similarity"] <= 1 and first["unattributable"] is False
    assert first["trust"].startswith("fact: sourced and observed — trustworthy")
    assert (first["ephemeral"], first["expiry"]) == (False, "permanent")
    assert [r["status"] for r in result["results"]] == ["fact", "hypothesis"]
    assert result["results"][1]["trust"].startswith("hypothesis: unsourced")


def test_memory_recall_is_scoped_as_recall_is_to_the_bound_project() -> None:
    tool("memory_remember", REMEMBER)
    tool("memory_remember", {"content": "php-fpm restarts on deploy", "namespace": "other"})

    bound = tool("memory_recall", RECALL)
    other = tool("memory_recall", {**RECALL, "namespace": "other"})

    assert {r["namespace"] for r in bound["results"]} == {"proj"}
    assert {r["namespace"] for r in other["results"]} == {"other"}


def test_memory_list_browses_one_namespace() -> None:
    tool("memory_remember", REMEMBER)
    tool("memory_remember", {"content": "elsewhere", "namespace": "other"})

    result = tool("memory_list", {"namespace": "proj", "limit": 20})

    assert result["count"] == 1 and result["memories"][0]["namespace"] == "proj"


def test_memory_supersede_retires_the_old_row_and_links_the_new() -> None:
    old = tool(
        "memory_remember", {"content": "The admin dashboard is at /admin.", "source": "routes"}
    )

    result = tool(
        "memory_supersede",
        {"id": old["id"], "content": "The admin dashboard moved to /manage.", "source": "routes"},
    )

    new = result["new"]
    assert result["superseded"] == {
        "id": old["id"],
        "status": "retired",
        "superseded_by": new["id"],
    }
    assert (new["status"], new["parent_id"], new["source"]) == ("fact", old["id"], "routes")
    assert new["content"] == "The admin dashboard moved to /manage."
    assert new["namespace"] == "proj"


def test_memory_forget_tombstones_with_a_reason_kept_for_history() -> None:
    row = tool("memory_remember", {"content": "staging runs on host-7"})

    result = tool("memory_forget", {"id": row["id"], "reason": "staging decommissioned"})

    assert result == {"id": row["id"], "status": "retired", "reason": "staging decommissioned"}
    retired = tool("memory_list", {"status": "retired"})["memories"]
    assert [m["id"] for m in retired] == [row["id"]]
    assert (
        tool("memory_recall", {"query": "staging host", "include_retired": True})["results"][0][
            "status"
        ]
        == "retired"
    )


def test_memory_observe_restamps_a_fact_and_promotes_a_hypothesis_only_with_a_source() -> None:
    fact = tool("memory_remember", {**REMEMBER, "confidence": 0.8})
    guess = tool("memory_remember", {"content": "the cache is warm at night"})

    assert tool("memory_observe", {"id": fact["id"]})["confidence"] == pytest.approx(0.9)
    with pytest.raises(SourceRequired):
        tool("memory_observe", {"id": guess["id"]})
    promoted = tool("memory_observe", {"id": guess["id"], "source": "grafana"})
    assert (promoted["status"], promoted["source"]) == ("fact", "grafana")


def test_memory_consolidate_says_where_memesh_consolidates() -> None:
    with pytest.raises(OperationFailed) as info:
        tool("memory_consolidate", {"namespace": "proj", "dry_run": False})

    assert "/v1/dream/run" in info.value.message


def test_ping_memory_reports_the_agent_the_embed_model_and_the_backend() -> None:
    result = tool("ping_memory", {"message": "hello"})

    assert result["message"] == "hello" and result["agent"] == "claude-code"
    assert result["backend"].startswith("sqlite ")
    assert "embed_model" in result and "embed_reachable" in result


def test_a_ttl_makes_a_row_ephemeral() -> None:
    result = tool("memory_remember", {"content": "scratch: resume at step 4", "ttl_hours": 2})

    assert result["ephemeral"] is True and result["expiry"].startswith("expires ")


# --- the same examples through the REST routes ---------------------------------------------


def test_the_rest_routes_answer_the_documented_examples(peer_on: None, client: Client) -> None:
    stored_ = assert_json(post(client, "/api/v1/memories", REMEMBER))
    assert stored_["status"] == "fact" and stored_["source"] == "runbook"

    found = assert_json(post(client, "/api/v1/memories/recall", RECALL))
    assert found["results"][0]["id"] == stored_["id"]

    listed = assert_json(
        client.get(
            "/api/v1/memories",
            {"namespace": "", "status": "", "include_expired": "", "limit": "20"},
        )
    )
    assert listed["count"] == 1

    observed = assert_json(post(client, f"/api/v1/memories/{stored_['id']}/observe", {}))
    assert observed["id"] == stored_["id"]

    superseded = assert_json(
        post(
            client,
            f"/api/v1/memories/{stored_['id']}/supersede",
            {"content": "The deploy script reloads php8.4-fpm.", "source": "runbook v2"},
        )
    )
    assert superseded["superseded"]["status"] == "retired"
    new_id = superseded["new"]["id"]

    forgotten = assert_json(
        post(client, f"/api/v1/memories/{new_id}/forget", {"reason": "staging decommissioned"})
    )
    assert forgotten == {"id": new_id, "status": "retired", "reason": "staging decommissioned"}

    assert_error(post(client, "/api/v1/memories/consolidate", {}), 400, "operation.failed")


def test_rest_refusals_carry_memeshs_stable_codes(peer_on: None, client: Client) -> None:
    guess = remember("guess", "maybe")

    assert_error(
        post(client, f"/api/v1/memories/{guess['entityId']}/observe", {}),
        400,
        "trust.source-required",
    )
    assert_error(post(client, "/api/v1/memories/999/forget", {}), 404, "resource.not-found")
    assert_error(post(client, "/api/v1/memories/1/observe", {"id": 2}), 400, "validation.bad-body")
    assert_error(client.get("/api/v1/memories", {"limit": "many"}), 400, "validation.bad-param")
    assert_error(client.get("/api/v1/memories", {"status": "gone"}), 400, "validation.bad-param")
    assert_error(post(client, "/api/v1/memories", {"content": ""}), 400, "validation.bad-body")
