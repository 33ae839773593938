"""The per-flow LLM scorecard: GET /v1/telemetry and `memesh telemetry`, pruning included."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from dream.telemetry import attempt_record, telemetry_prune, telemetry_summary
from proposals.models import LLMAttempt
from tests.rest import assert_error, assert_json

pytestmark = pytest.mark.django_db


def attempt(flow: str, *, call: uuid.UUID, n: int = 0, ok: bool = True, **fields) -> LLMAttempt:
    days_ago = fields.pop("days_ago", 0)
    row = attempt_record(
        call_id=call,
        attempt=n,
        flow=flow,
        provider=fields.pop("provider", "anthropic"),
        model=fields.pop("model", "claude-haiku-4-5"),
        project=fields.pop("project", "myapp"),
        ok=ok,
        latency_ms=fields.pop("latency_ms", 100),
        **fields,
    )
    if days_ago:
        LLMAttempt.objects.filter(pk=row.pk).update(
            created_at=timezone.now() - timedelta(days=days_ago)
        )
    return row


@pytest.fixture
def history() -> None:
    first, second, third = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    # dreamer: one clean call, one that fell back after a 429, one that failed outright
    attempt("dreamer", call=first, latency_ms=100)
    attempt("dreamer", call=second, ok=False, error_class="rate_limit", message="HTTP 429",
            latency_ms=50)  # fmt: skip
    attempt("dreamer", call=second, n=1, provider="openai", model="gpt-4o-mini",
            fallback_used=True, latency_ms=300, project="other")  # fmt: skip
    attempt("dreamer", call=third, ok=False, error_class="bad_request",
            message="key sk-leaky-abcdefgh rejected", latency_ms=20)  # fmt: skip
    attempt("conflict_judge", call=uuid.uuid4(), latency_ms=70)
    attempt("dreamer", call=uuid.uuid4(), days_ago=40)  # outside a 30-day window


def test_the_summary_counts_calls_attempts_and_breakdowns(history) -> None:
    summary = telemetry_summary(window_days=30)

    assert summary["window_days"] == 30
    assert [s["flow"] for s in summary["summaries"]] == ["conflict_judge", "dreamer"]
    dreamer = summary["summaries"][1]
    assert {k: dreamer[k] for k in (
        "total_calls", "total_attempts", "successes", "failures", "fallback_used",
        "median_latency_ms", "window_days",
    )} == {
        "total_calls": 3, "total_attempts": 4, "successes": 2, "failures": 1,
        "fallback_used": 1, "median_latency_ms": 75, "window_days": 30,
    }  # fmt: skip
    assert dreamer["by_provider"] == {
        "anthropic": {"ok": 1, "fail": 2},
        "openai": {"ok": 1, "fail": 0},
    }
    assert dreamer["by_model"]["gpt-4o-mini"] == {"ok": 1, "fail": 0}
    assert dreamer["by_project"] == {"myapp": {"ok": 1, "fail": 2}, "other": {"ok": 1, "fail": 0}}
    assert dreamer["by_error_class"] == {"rate_limit": 1, "bad_request": 1}
    assert dreamer["sample_errors"][0] == {
        "error_class": "bad_request",
        "message": "key *** rejected",
    }
    assert telemetry_summary(window_days=60)["summaries"][1]["total_calls"] == 4


def test_sample_errors_are_at_most_five_and_newest_first() -> None:
    for i in range(8):
        attempt("dreamer", call=uuid.uuid4(), ok=False, error_class="server", message=f"boom {i}")
    samples = telemetry_summary()["summaries"][0]["sample_errors"]
    assert [s["message"] for s in samples] == [f"boom {i}" for i in (7, 6, 5, 4, 3)]


def test_prune_deletes_by_age() -> None:
    attempt("dreamer", call=uuid.uuid4(), days_ago=10)
    attempt("dreamer", call=uuid.uuid4(), days_ago=3)
    attempt("dreamer", call=uuid.uuid4())
    assert telemetry_prune(older_than_days=5) == 1
    assert LLMAttempt.objects.count() == 2


# --- REST --------------------------------------------------------------------------------------


def test_rest_answers_the_scorecard(client, history) -> None:
    response = client.get("/v1/telemetry", {"window": "7"})

    assert response.status_code == 200
    body = assert_json(response)
    assert body["success"] is True
    assert body["data"] == json.loads(json.dumps(telemetry_summary(window_days=7)))
    assert "sk-leaky" not in response.content.decode()


def test_rest_defaults_to_30_days(client) -> None:
    assert assert_json(client.get("/v1/telemetry"))["data"] == {"window_days": 30, "summaries": []}


@pytest.mark.parametrize("window", ["0", "366", "-1", "abc", "1.5"])
def test_rest_refuses_a_bad_window(client, window: str) -> None:
    assert_error(client.get("/v1/telemetry", {"window": window}), 400, "validation.bad-param")


# --- CLI ---------------------------------------------------------------------------------------


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("telemetry", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_cli_renders_the_scorecard(history) -> None:
    out, _ = run()

    assert "LLM telemetry, last 30 days" in out
    assert "dreamer: 3 calls (4 attempts), 67% success, fallback used 1×" in out
    assert "[rate_limit ×1]" in out
    assert "sk-leaky" not in out


def test_cli_json_is_the_rest_payload(history) -> None:
    out, _ = run("--window", "90", "--json")
    assert json.loads(out) == json.loads(json.dumps(telemetry_summary(window_days=90)))


def test_cli_prunes_first_and_says_so(history) -> None:
    out, _ = run("--prune", "30", "--window", "365")

    assert out.splitlines()[0] == "Pruned 1 rows older than 30 days."
    assert LLMAttempt.objects.count() == 5
    out, err = run("--prune", "30", "--json")
    assert err.strip() == "Pruned 0 rows older than 30 days."
    assert json.loads(out)["window_days"] == 30


def test_cli_with_no_calls_says_so() -> None:
    assert run()[0].strip() == "No LLM calls in the last 30 days."


@pytest.mark.parametrize("args", [("--window", "0"), ("--window", "x"), ("--prune", "-3")])
def test_cli_refuses_bad_numbers(args) -> None:
    with pytest.raises(CommandError):
        run(*args)
