"""`dream.llm.complete`: the primary provider, then the fallbacks in order; one telemetry
row per attempt, secret-redacted; a 400 stops the chain; no provider is llm.not-configured."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection

from core.config_sections import config_update
from dream.llm.chain import complete
from dream.llm.errors import LLMNotConfigured
from dream.llm.types import LLMRequest, LLMUnavailable
from proposals.models import LLMAttempt
from tests.fakes.llm_servers import FakeLLMServer, LLMReply

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("home")]

PRIMARY_KEY = "sk-primary-aaaaaaaaaaaa"
FALLBACK_KEY = "opaque-fallback-credential-42"
REQUEST = LLMRequest(flow="dreamer", system="sys", prompt="hello", project="myapp")


@pytest.fixture(autouse=True)
def _llm_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "MEMESH_LLM_TIMEOUT_SECONDS", 0.5)


@pytest.fixture
def servers() -> Iterator[tuple[FakeLLMServer, FakeLLMServer]]:
    with (
        FakeLLMServer("anthropic", api_key=PRIMARY_KEY) as primary,
        FakeLLMServer("openai", api_key=FALLBACK_KEY, default_text="from fallback") as fallback,
    ):
        config_update(
            {
                "llm": primary.llm_config(model="claude-haiku-4-5"),
                "llmFallbacks": [fallback.llm_config(model="gpt-4o-mini")],
            }
        )
        yield primary, fallback


def all_database_text() -> str:
    """Every value of every table, as text (the place a leaked key would hide)."""
    chunks: list[str] = []
    with connection.cursor() as cur:
        # Every table the database lists (on SQLite the FTS5 and vec0 tables too).
        for table in connection.introspection.table_names(cur):
            cur.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            chunks.extend(repr(row) for row in cur.fetchall())
    return "\n".join(chunks)


def test_the_primary_answers_with_one_attempt_recorded(servers) -> None:
    result = complete(REQUEST)

    assert (result.text, result.provider, result.model) == (
        "fake reply",
        "anthropic",
        "claude-haiku-4-5",
    )
    assert result.attempts == 1 and result.fallback_used is False
    (row,) = LLMAttempt.objects.all()
    assert (row.flow, row.provider, row.project, row.ok, row.fallback_used) == (
        "dreamer", "anthropic", "myapp", True, False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "error_class"),
    [
        (LLMReply(status=401), "auth"),
        (LLMReply(status=429, headers={"Retry-After": "30"}), "rate_limit"),
        (LLMReply(status=500), "server"),
        (LLMReply(delay=3.0), "timeout"),
        (LLMReply(body="<html>gateway</html>"), "parse"),
    ],
)
def test_a_failing_primary_falls_back(servers, reply: LLMReply, error_class: str) -> None:
    primary, _ = servers
    primary.replies.append(reply)

    result = complete(REQUEST)

    assert result.text == "from fallback" and result.provider == "openai"
    assert result.attempts == 2 and result.fallback_used is True
    first, second = LLMAttempt.objects.order_by("attempt")
    assert first.call_id == second.call_id
    assert (first.ok, first.error_class, first.provider) == (False, error_class, "anthropic")
    assert (second.ok, second.fallback_used, second.provider) == (True, True, "openai")
    assert first.message


def test_a_400_stops_the_chain(servers) -> None:
    primary, fallback = servers
    primary.replies.append(LLMReply(status=400))

    with pytest.raises(LLMUnavailable) as caught:
        complete(REQUEST)

    assert caught.value.error_class == "bad_request"
    assert fallback.chat_requests() == []
    assert list(LLMAttempt.objects.values_list("error_class", flat=True)) == ["bad_request"]


def test_an_exhausted_chain_is_unavailable_with_every_attempt_recorded(servers) -> None:
    primary, fallback = servers
    primary.replies.append(LLMReply(status=503))
    fallback.replies.append(LLMReply(status=429, headers={"Retry-After": "5"}))

    with pytest.raises(LLMUnavailable) as caught:
        complete(REQUEST)

    assert caught.value.error_class == "rate_limit"
    assert list(LLMAttempt.objects.values_list("provider", "ok", "error_class")) == [
        ("anthropic", False, "server"),
        ("openai", False, "rate_limit"),
    ]


def test_no_provider_is_llm_not_configured() -> None:
    with pytest.raises(LLMNotConfigured) as caught:
        complete(REQUEST)
    assert caught.value.error_code == "llm.not-configured"
    config_update({"language": "en"})  # a config without an llm is still not configured
    with pytest.raises(LLMNotConfigured):
        complete(REQUEST)


def test_no_api_key_text_reaches_the_database(servers) -> None:
    primary, fallback = servers
    # Wrong keys make both servers echo the presented key back in their 401 bodies.
    primary.api_key = "sk-something-else-entirely"
    fallback.api_key = "another-expected-key"
    primary.replies.append(LLMReply(status=200))
    fallback.replies.append(LLMReply(status=200))
    with pytest.raises(LLMUnavailable) as caught:
        complete(REQUEST)
    # An upstream error that quotes a key-shaped token and URL credentials.
    primary.api_key, fallback.api_key = PRIMARY_KEY, FALLBACK_KEY
    primary.replies.append(
        LLMReply(
            status=500, json={"error": f"upstream https://bob:{FALLBACK_KEY}@proxy sk-zzzzzzzz99"}
        )
    )
    complete(REQUEST)

    stored = all_database_text()
    assert LLMAttempt.objects.filter(ok=False).count() == 3
    assert "auth" in stored
    for secret in (PRIMARY_KEY, FALLBACK_KEY, "sk-zzzzzzzz99"):
        assert secret not in stored
        assert secret not in str(caught.value)
