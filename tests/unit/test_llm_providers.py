"""The three LLM wire formats (dream/llm/providers.py) against real loopback servers that
speak them (tests/fakes/llm_servers.py), and the failure classes the fallback chain acts on."""

from __future__ import annotations

import socket

import pytest

from core.redact import redact, redact_message
from dream.llm.providers import ProviderError, ProviderSpec, complete, list_models
from dream.llm.types import LLMRequest
from tests.fakes.llm_servers import FakeLLMServer, LLMReply

REQUEST = LLMRequest(flow="dreamer", system="You summarise.", prompt="Summarise this week.")
KEY = "sk-test-0123456789abcdef"


def spec(server: FakeLLMServer, **fields: str) -> ProviderSpec:
    return ProviderSpec(
        provider=server.kind,
        model=fields.get("model", "m-1"),
        api_key=fields.get("api_key", KEY),
        base_url=fields.get("base_url", server.url),
    )


def test_anthropic_speaks_the_messages_api() -> None:
    with FakeLLMServer("anthropic", api_key=KEY) as server:
        server.replies.append(LLMReply(text="digest text"))
        assert complete(spec(server), REQUEST, seconds=5) == "digest text"

    (sent,) = server.chat_requests()
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"]
    assert sent.body["system"] == "You summarise."
    assert sent.body["messages"] == [{"role": "user", "content": "Summarise this week."}]
    assert sent.body["model"] == "m-1" and sent.body["max_tokens"] == 1024


def test_openai_speaks_chat_completions_at_a_base_url_with_or_without_v1() -> None:
    with FakeLLMServer("openai", api_key=KEY) as server:
        assert complete(spec(server), REQUEST, seconds=5) == "fake reply"
        assert complete(spec(server, base_url=server.url + "/v1/"), REQUEST, seconds=5)

    first, second = server.chat_requests()
    assert first.path == second.path == "/v1/chat/completions"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body["messages"][0] == {"role": "system", "content": "You summarise."}


def test_ollama_speaks_api_chat_without_streaming() -> None:
    with FakeLLMServer("ollama") as server:
        server.replies.append(LLMReply(text="local answer"))
        assert complete(spec(server, api_key=""), REQUEST, seconds=5) == "local answer"

    (sent,) = server.chat_requests()
    assert sent.path == "/api/chat"
    assert sent.body["stream"] is False
    assert "authorization" not in sent.headers


@pytest.mark.parametrize(
    ("reply", "error_class"),
    [
        (LLMReply(status=400), "bad_request"),
        (LLMReply(status=401), "auth"),
        (LLMReply(status=403), "auth"),
        (LLMReply(status=429, headers={"Retry-After": "7"}), "rate_limit"),
        (LLMReply(status=500), "server"),
        (LLMReply(status=503), "server"),
        (LLMReply(body="{not json"), "parse"),
        (LLMReply(body="[" * 50_000 + "]" * 50_000), "parse"),  # deep: no RecursionError
        (LLMReply(json={"unexpected": True}), "parse"),
        (LLMReply(delay=3.0), "timeout"),
        (LLMReply(drop=True), "network"),
    ],
)
@pytest.mark.parametrize("kind", ["anthropic", "openai", "ollama"])
def test_each_failure_has_its_class(kind: str, reply: LLMReply, error_class: str) -> None:
    with FakeLLMServer(kind) as server:  # type: ignore[arg-type]
        server.replies.append(reply)
        with pytest.raises(ProviderError) as caught:
            complete(spec(server), REQUEST, seconds=0.5)

    assert caught.value.error_class == error_class
    if reply.status == 429:
        assert caught.value.retry_after == "7"
        assert "Retry-After: 7" in caught.value.message


def test_a_wrong_key_is_an_auth_failure_even_when_the_server_echoes_it() -> None:
    with FakeLLMServer("openai", api_key=KEY) as server, pytest.raises(ProviderError) as caught:
        complete(spec(server, api_key="sk-wrong-key-999999"), REQUEST, seconds=5)

    assert caught.value.error_class == "auth"
    assert "sk-wrong-key-999999" in caught.value.message  # raw; redaction is the caller's job
    assert "sk-wrong-key-999999" not in redact_message(caught.value.message)


def test_a_refused_connection_is_a_network_failure() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound but not listening: connections are refused
        dead = ProviderSpec("openai", "m", KEY, f"http://127.0.0.1:{port}")
        with pytest.raises(ProviderError) as caught:
            complete(dead, REQUEST, seconds=2)
    assert caught.value.error_class == "network"


@pytest.mark.parametrize("kind", ["anthropic", "openai", "ollama"])
def test_model_listings_come_back_as_id_and_created(kind: str) -> None:
    with FakeLLMServer(kind, api_key=KEY, models=["big-1", "tiny-mini"]) as server:  # type: ignore[arg-type]
        models = list_models(kind, api_key=KEY, base_url=server.url, seconds=5)

    assert [m["id"] for m in models] == ["big-1", "tiny-mini"]
    assert all(isinstance(m["created"], str) for m in models)


def test_redaction_masks_configured_keys_and_key_shaped_text() -> None:
    text = (
        "key opaque-secret-value failed; Authorization: Bearer abc.def-123456 "
        "url https://user:pa55word@proxy.example/v1 api_key=zzzzzzzz sk-ant-api03-abcdefgh"
    )
    out = redact(text, ["opaque-secret-value"])

    for secret in ("opaque-secret-value", "abc.def-123456", "pa55word", "zzzzzzzz", "api03"):
        assert secret not in out
    assert "proxy.example" in out
