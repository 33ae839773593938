"""The memory tool wired as the API reference wires it: an application's own Messages API loop.

A fake Anthropic Messages server on loopback plays the model and asks for `memory` tool calls
(view, create, str_replace, view); the application loop below — the one docs/memory-tool.md
shows — posts over HTTP with httpx, feeds each `tool_use` to `handle_memory_command` and sends
the `tool_result`s back. The graph then holds what the model wrote, and recall finds it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from api.memory_tool import TOOL_DEFINITION, handle_memory_command
from graph.models import Entity, Observation
from tests.fakes.llm_servers import FakeLLMServer, LLMReply, tool_use
from tests.helpers import names, recall

pytestmark = pytest.mark.django_db

API_KEY = "sk-ant-test-memory"
FILE = "/memories/team/deploy notes.md"


def converse(client: httpx.Client, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The application's loop (docs/memory-tool.md): call the model until it stops asking
    for tools, performing each `memory` call against memesh."""
    while True:
        response = client.post(
            "/v1/messages",
            json={
                "model": "claude-opus-5",
                "max_tokens": 2048,
                "messages": messages,
                "tools": [TOOL_DEFINITION],
            },
        )
        response.raise_for_status()
        message: dict[str, Any] = response.json()
        messages.append({"role": "assistant", "content": message["content"]})
        if message["stop_reason"] != "tool_use":
            return message
        results = [
            handle_memory_command(block["input"]).tool_result(block["id"])
            for block in message["content"]
            if block["type"] == "tool_use" and block["name"] == "memory"
        ]
        messages.append({"role": "user", "content": results})


def test_a_messages_loop_stores_what_the_model_writes_and_recall_finds_it() -> None:
    calls = [
        tool_use("memory", {"command": "view", "path": "/memories"}),
        tool_use(
            "memory",
            {
                "command": "create",
                "path": FILE,
                "file_text": "Deploys go out on Tuesdays\nRollback with the blue-green switch\n",
            },
        ),
        tool_use(
            "memory",
            {
                "command": "str_replace",
                "path": FILE,
                "old_str": "on Tuesdays",
                "new_str": "on Wednesdays after the standup",
            },
        ),
        tool_use("memory", {"command": "view", "path": FILE}),
    ]
    with FakeLLMServer(kind="anthropic", api_key=API_KEY) as server:
        for call in calls:
            server.replies.append(LLMReply(content=[call]))
        server.replies.append(LLMReply(text="Noted: deploys are on Wednesdays now."))
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": "Deploys moved to Wednesday; please remember."}
        ]
        headers = {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=10.0) as client:
            final = converse(client, messages)
        requests = server.chat_requests()

    assert final["content"] == [{"type": "text", "text": "Noted: deploys are on Wednesdays now."}]
    assert len(requests) == 5
    assert all(r.body["tools"] == [{"type": "memory_20250818", "name": "memory"}] for r in requests)

    # Each request after the first answers the previous tool_use with its tool_result.
    results = [r.body["messages"][-1]["content"][0] for r in requests[1:]]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in calls]
    assert [r["is_error"] for r in results] == [False] * 4
    assert results[0]["content"].splitlines()[0] == "/memories"
    assert results[1]["content"] == f"File created at {FILE} (2 lines)"
    assert results[2]["content"] == f"Edited {FILE} at line 1"
    assert results[3]["content"] == (
        "     1\tDeploys go out on Wednesdays after the standup\n"
        "     2\tRollback with the blue-green switch"
    )

    entity = Entity.objects.get(name="deploy notes")
    assert entity.namespace == "team"
    assert entity.metadata["provenance"]["source_host"] == "memory-tool"
    assert list(
        Observation.objects.filter(entity=entity).order_by("id").values_list("text", flat=True)
    ) == ["Deploys go out on Wednesdays after the standup", "Rollback with the blue-green switch"]
    assert names(recall("when do deploys go out? wednesdays")) == ["deploy notes"]
    assert names(recall("blue-green rollback")) == ["deploy notes"]
    assert names(recall("tuesdays")) == []
