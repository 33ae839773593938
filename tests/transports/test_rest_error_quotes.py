"""A field error names the field and quotes what it got — cut short, secrets masked or left
out, lone surrogates escaped — in `validation.*` answers and in import's `errors`."""

from __future__ import annotations

import pytest

from graph.ops.kit.validation_errors import QUOTE_MAX
from tests.rest import assert_error, assert_ok, post_json

pytestmark = pytest.mark.django_db


def test_a_rejected_choice_is_quoted_in_the_answer(client) -> None:
    answer = post_json(
        client,
        "remember",
        {"name": "n", "type": "note", "observations": ["o"], "namespace": "Team "},
    )

    body = assert_error(answer, 400, "validation.bad-body")
    assert body["field"] == "namespace"
    assert body["error"] == (
        "namespace: Input should be 'personal', 'team' or 'global' (got \"Team \")"
    )


def test_a_wrong_type_is_quoted_as_json_and_a_container_by_its_kind(client) -> None:
    answer = post_json(client, "recall", {"query": ["a", "b"], "limit": 10**30})

    error = assert_error(answer, 400, "validation.bad-body")["error"]
    assert "query: Input should be a valid string (got an array)" in error
    assert f"(got {10**30})" in error


def test_a_long_value_is_cut_and_a_lone_surrogate_is_escaped(client) -> None:
    long_type = "x" * 500
    answer = post_json(client, "remember", {"name": "n\ud800", "type": long_type})

    error = assert_error(answer, 400, "validation.bad-body")["error"]
    assert '(got "n\\ud800")' in error
    assert f'(got "{"x" * QUOTE_MAX}…")' in error
    assert long_type not in error


def test_key_shaped_text_is_masked_in_the_quote(client) -> None:
    key = "sk-live" + "Q" * 40
    answer = post_json(client, "remember", {"name": "n", "type": f"token={key}" + "y" * 100})

    error = assert_error(answer, 400, "validation.bad-body")["error"]
    assert key not in error and "QQQQQQ" not in error
    assert '(got "token=***' in error


def test_a_secret_named_field_is_never_quoted(client) -> None:
    secret = "sk-\x95" + "hunter2hunter2"
    answer = post_json(client, "config/test", {"provider": "openai", "apiKey": secret})

    error = assert_error(answer, 400, "validation.bad-body")["error"]
    assert "apiKey" in error
    assert "hunter2" not in error and "(got" not in error


def test_a_query_parameter_error_quotes_the_value(client) -> None:
    answer = client.get("/v1/entities", {"status": "asleep"})

    body = assert_error(answer, 400, "validation.bad-param")
    assert body["field"] == "status"
    assert '(got "asleep")' in body["error"]


def test_import_errors_quote_the_rejected_value(client) -> None:
    bundle = {
        "version": 1,
        "entities": [
            {"name": "fine", "type": "note", "observations": ["kept"]},
            {"name": "odd", "type": "note", "observations": ["x"], "namespace": "everyone"},
        ],
    }

    got = assert_ok(post_json(client, "import", {"data": bundle, "merge_strategy": "skip"}))

    assert got["imported"] == 1
    [error] = got["errors"]
    assert error.startswith('entities[1] "odd"')
    assert "namespace: Input should be 'personal', 'team' or 'global' (got \"everyone\")" in error
