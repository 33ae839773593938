"""GET/POST /v1/config and POST /v1/config/test (core/config_sections.py, dream/llm/probe.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from django.conf import settings

from core.config_sections import config_load, config_update
from graph.embedding.config import load_config
from tests.fakes.llm_servers import FakeLLMServer
from tests.helpers import remember
from tests.rest import assert_error, assert_ok, post_json

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("home")]

KEY = "sk-primary-0123456789"
OTHER = "sk-other-abcdefghijkl"


@pytest.fixture(autouse=True)
def _llm_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "MEMESH_LLM_TIMEOUT_SECONDS", 2.0)


# --- GET / POST /v1/config ---------------------------------------------------------------------


def test_get_masks_every_key_and_reports_capabilities(client) -> None:
    config_update(
        {
            "llm": {"provider": "anthropic", "apiKey": KEY},
            "llmFallbacks": [{"provider": "openai", "apiKey": OTHER, "model": "gpt-4o-mini"}],
            "embedder": {"provider": "openai", "apiKey": "emb-secret-key-1"},
        }
    )

    response = client.get("/v1/config")

    got = assert_ok(response)
    text = response.content.decode()
    for secret in (KEY, OTHER, "emb-secret-key-1"):
        assert secret not in text
    assert got["config"]["llm"]["apiKey"] == "***"
    assert got["config"]["llmFallbacks"][0]["apiKey"] == "***"
    assert got["config"]["embedder"]["apiKey"] == "***"
    assert got["capabilities"]["llm"] == {"provider": "anthropic", "model": "claude-haiku-4-5"}
    assert got["capabilities"]["fts5"] is True


def test_post_is_a_partial_update_that_answers_masked(client, home: Path) -> None:
    assert_ok(post_json(client, "config", {"llm": {"provider": "openai", "apiKey": KEY}}))

    updated = assert_ok(post_json(client, "config", {"language": "繁體中文", "autoCapture": False}))

    assert updated == {
        "llm": {"provider": "openai", "apiKey": "***"},
        "language": "繁體中文",
        "autoCapture": False,
    }
    stored = json.loads((home / "config.json").read_text())
    assert stored["llm"]["apiKey"] == KEY
    assert stat.S_IMODE(os.stat(home / "config.json").st_mode) == 0o600
    # null removes a key; the primary key survives an update that omits it (same provider).
    assert_ok(
        post_json(client, "config", {"language": None, "llm": {"provider": "openai", "model": "x"}})
    )
    assert config_load() == {
        "llm": {"provider": "openai", "model": "x", "apiKey": KEY},
        "autoCapture": False,
    }


def test_a_provider_change_does_not_carry_the_old_key(client) -> None:
    config_update({"llm": {"provider": "openai", "apiKey": KEY}})
    assert_ok(post_json(client, "config", {"llm": {"provider": "anthropic"}}))
    assert config_load()["llm"] == {"provider": "anthropic"}


@pytest.mark.parametrize(
    "body",
    [
        {"bogus": 1},
        {"language": "x" * 61},
        {"llm": {"provider": "gemini"}},
        {"llm": {"provider": "openai", "apiKey": "***"}},
        {"llm": {"provider": "openai", "apiKey": "sk-\u00e9t\u00e9"}},  # not sendable in a header
        {"llm": {"provider": "openai", "apiKey": "sk two words"}},
        {"llm": {"provider": "openai", "baseUrl": "ftp://host"}},
        {"llmFallbacks": [{"provider": "openai", "keepKeyFrom": -1}]},
        {"autoCapture": "sometimes"},
        {"embedder": "word2vec"},
        {"embedder": {"provider": "local", "model": "e5-large"}},  # not a local model memesh has
        [1, 2],
    ],
)
def test_bad_bodies_are_validation_errors_and_change_nothing(client, body) -> None:
    config_update({"language": "en"})
    assert_error(post_json(client, "config", body), 400, "validation.bad-body")
    assert config_load() == {"language": "en"}


def test_keep_key_from_keeps_stored_keys_by_original_index_with_a_provider_guard(client) -> None:
    config_update(
        {
            "llmFallbacks": [
                {"provider": "openai", "model": "a", "apiKey": "sk-openai-slot0-xxxx"},
                {"provider": "anthropic", "model": "b", "apiKey": "sk-ant-slot1-yyyy"},
            ]
        }
    )

    updated = assert_ok(
        post_json(
            client,
            "config",
            {
                "llmFallbacks": [
                    {"provider": "anthropic", "model": "b", "keepKeyFrom": 1},  # reordered
                    {"provider": "ollama", "model": "c", "keepKeyFrom": 0},  # guard: no key
                    {"provider": "openai", "model": "a", "keepKeyFrom": 0, "apiKey": "sk-new-1234"},
                    {"provider": "openai", "model": "d"},  # new, no key
                    {"provider": "openai", "model": "e", "keepKeyFrom": 7},  # stale index
                ]
            },
        )
    )

    assert config_load()["llmFallbacks"] == [
        {"provider": "anthropic", "model": "b", "apiKey": "sk-ant-slot1-yyyy"},
        {"provider": "ollama", "model": "c"},
        {"provider": "openai", "model": "a", "apiKey": "sk-new-1234"},
        {"provider": "openai", "model": "d"},
        {"provider": "openai", "model": "e"},
    ]
    assert [e.get("apiKey") for e in updated["llmFallbacks"]] == ["***", None, "***", None, None]
    assert "keepKeyFrom" not in json.dumps(updated)


def test_a_write_is_seen_by_the_embedder_configuration(client, monkeypatch) -> None:
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER", "")  # the test run's override
    for provider in ("ollama", "local", "openai", "none", "local"):
        assert_ok(post_json(client, "config", {"embedder": provider}))
        assert load_config().provider == provider


def test_an_embedder_change_queues_a_reindex_task(
    client, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """Vectors of another embedder are never searched: a change queues their rebuild (eager
    in tests, so it has run by the time the answer arrives)."""
    monkeypatch.setattr(settings, "MEMESH_EMBEDDER", "")
    remember("reindexed-note", "a memory to embed again")
    with django_capture_on_commit_callbacks(execute=True):
        first = assert_ok(post_json(client, "config", {"embedder": "local"}))
    unchanged = assert_ok(post_json(client, "config", {"embedder": "local", "language": "de"}))

    assert "reindexTaskId" not in unchanged
    task = client.get(f"/v1/tasks/{first['reindexTaskId']}").json()["data"]
    assert task["status"] == "succeeded", task
    assert task["result"]["complete"] is True
    assert task["result"]["embedded"] >= 1


# --- POST /v1/config/test ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_probe_lists_models_and_suggests_a_small_one(client, monkeypatch, kind) -> None:
    models = ["big-model", "x-haiku-old", "x-mini-new", "other"]
    with FakeLLMServer(kind, api_key=KEY, models=models) as server:
        monkeypatch.setattr(settings, f"MEMESH_{kind.upper()}_BASE_URL", server.url)
        got = assert_ok(post_json(client, "config/test", {"provider": kind, "apiKey": KEY}))

    assert got["valid"] is True
    assert [m["id"] for m in got["models"]] == models
    assert got["suggested"] == "x-mini-new"  # hinted, and the most recently created
    assert config_load() == {}  # nothing written


def test_probe_refuses_a_key_that_cannot_travel_in_a_header(client) -> None:
    """Found by schemathesis: a non-ASCII key reached httpx and failed as a 500."""
    answer = post_json(client, "config/test", {"provider": "openai", "apiKey": "sk-\x95"})
    assert_error(answer, 400, "validation.bad-body")


def test_probe_codes_auth_and_http_status(client, monkeypatch) -> None:
    with FakeLLMServer("openai", api_key=KEY) as server:
        monkeypatch.setattr(settings, "MEMESH_OPENAI_BASE_URL", server.url)
        wrong = assert_ok(post_json(client, "config/test", {"provider": "openai", "apiKey": OTHER}))
        empty = assert_ok(post_json(client, "config/test", {"provider": "openai"}))
    with FakeLLMServer("anthropic", api_key=KEY) as server:
        monkeypatch.setattr(settings, "MEMESH_ANTHROPIC_BASE_URL", server.url + "/nowhere")
        missing = assert_ok(
            post_json(client, "config/test", {"provider": "anthropic", "apiKey": KEY})
        )

    assert (wrong["valid"], wrong["errorCode"]) == (False, "auth")
    assert OTHER not in wrong["error"]
    assert (empty["valid"], empty["errorCode"]) == (False, "auth")
    assert (missing["valid"], missing["errorCode"]) == (False, "http_404")


def test_probe_resolves_stored_keys_by_fallback_index_with_a_provider_guard(client) -> None:
    with (
        FakeLLMServer("openai", api_key=KEY) as primary,
        FakeLLMServer("openai", api_key=OTHER) as fallback,
    ):
        config_update(
            {
                "llm": primary.llm_config(),
                "llmFallbacks": [
                    fallback.llm_config(),
                    {"provider": "anthropic", "apiKey": "sk-a-1234"},
                ],
            }
        )
        own = assert_ok(post_json(client, "config/test", {"provider": "openai"}))
        slot0 = assert_ok(
            post_json(client, "config/test", {"provider": "openai", "fallbackIndex": 0})
        )
        guarded = assert_ok(
            post_json(client, "config/test", {"provider": "openai", "fallbackIndex": 1})
        )

    assert own["valid"] is True and primary.requests[-1].headers["authorization"] == f"Bearer {KEY}"
    assert slot0["valid"] is True
    assert fallback.requests[-1].headers["authorization"] == f"Bearer {OTHER}"
    assert (guarded["valid"], guarded["errorCode"]) == (False, "auth")  # not the primary's key


def test_probe_ollama_host_must_be_loopback_and_empty_catalogues_are_no_models(client) -> None:
    with FakeLLMServer("ollama", models=[]) as empty, FakeLLMServer("ollama") as full:
        none = assert_ok(
            post_json(client, "config/test", {"provider": "ollama", "host": empty.url})
        )
        some = assert_ok(post_json(client, "config/test", {"provider": "ollama", "host": full.url}))
    remote = assert_ok(
        post_json(client, "config/test", {"provider": "ollama", "host": "http://10.1.2.3:11434"})
    )
    named = assert_ok(
        post_json(client, "config/test", {"provider": "ollama", "host": "http://example.com"})
    )

    assert (none["valid"], none["errorCode"]) == (False, "no_models")
    assert some["valid"] is True and some["suggested"] == "fake-ollama-mini"
    assert (remote["valid"], remote["errorCode"]) == (False, "bad_host")
    assert (named["valid"], named["errorCode"]) == (False, "bad_host")


def test_probe_of_a_closed_port_is_network(client) -> None:
    with FakeLLMServer("ollama") as server:
        url = server.url
    got = assert_ok(post_json(client, "config/test", {"provider": "ollama", "host": url}))
    assert (got["valid"], got["errorCode"]) == (False, "network")


def test_probe_bad_bodies_are_validation_errors(client) -> None:
    assert_error(post_json(client, "config/test", {}), 400, "validation.bad-body")
    assert_error(
        post_json(client, "config/test", {"provider": "openai", "x": 1}), 400, "validation.bad-body"
    )
    assert_error(
        post_json(client, "config/test", {"provider": "openai", "fallbackIndex": -2}),
        400,
        "validation.bad-body",
    )
