"""`memesh remember`, `memesh recall`, `memesh forget`, and the --input/--json conventions every
operation command shares (api/cli/base.py)."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from core.json_limits import MAX_JSON_DEPTH
from graph.models import Entity
from tests.helpers import remember

pytestmark = pytest.mark.django_db


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def run_json(*args: str) -> dict[str, Any]:
    out, _ = run(*args, "--json")
    data: dict[str, Any] = json.loads(out)
    return data


def test_remember_stores_with_the_cli_stamp_and_relation_flags() -> None:
    remember("auth-v1", "JWT everywhere", type="decision")

    data = run_json(
        "remember", "--name", "auth-v2", "--type", "decision", "--obs", "Sessions, not JWT",
        "--obs", "Cookies are HttpOnly", "--tag", "topic:auth", "--supersedes", "auth-v1",
    )  # fmt: skip

    assert data["created"] is True and data["superseded"] == ["auth-v1"]
    entity = Entity.objects.get(name="auth-v2")
    assert list(entity.observations.values_list("text", flat=True)) == [
        "Sessions, not JWT",
        "Cookies are HttpOnly",
    ]
    assert entity.metadata["provenance"]["source_host"] == "cli"
    assert Entity.objects.get(name="auth-v1").status == "archived"


def test_a_relation_to_a_missing_target_is_reported_and_exits_1() -> None:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command(
            "remember", "--name", "n", "--type", "note", "--obs", "x", "--contradicts", "ghost",
            stdout=out, stderr=err,
        )  # fmt: skip
    assert exc.value.code == 1
    assert "ghost" in err.getvalue()
    assert Entity.objects.filter(name="n").exists()  # the memory itself is stored


def test_recall_prints_conflicts_and_results() -> None:
    remember("use-jwt", "JWT for sessions", type="decision")
    remember("no-jwt", "JWT is out", type="decision", relations=[
        {"to": "use-jwt", "type": "contradicts"}
    ])  # fmt: skip

    out, _ = run("recall", "jwt")

    assert 'Warning: Conflicts detected: "no-jwt" contradicts "use-jwt"' in out
    assert "[decision] no-jwt" in out and "  - JWT is out" in out


def test_recall_notes_a_truncated_window_and_caps_long_observations_on_display() -> None:
    remember("long", "word " * 200)
    remember("other", "word again")

    out, _ = run("recall", "word", "--limit", "1")
    data = run_json("recall", "word", "--limit", "1")

    assert "(limit reached — more may exist)" in out
    assert "more chars)" in out
    assert data["retrieval"]["truncated"] is True
    assert len(data["entities"][0]["observations"][0]) == len(("word " * 200).strip())


def test_forget_archives() -> None:
    remember("gone", "bye")

    assert run_json("forget", "--name", "gone")["archived"] is True
    assert Entity.objects.get(name="gone").status == "archived"


def test_input_takes_the_whole_payload_as_rest_and_mcp_do() -> None:
    payload = {"name": "via-input", "type": "note", "observations": ["same shape as REST"]}

    data = run_json("remember", "--input", json.dumps(payload))

    assert data["name"] == "via-input" and data["created"] is True


def test_a_failure_with_json_prints_the_error_envelope_on_stderr_and_exits_1() -> None:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("recall", "--input", '{"limit": 500}', "--json", stdout=out, stderr=err)

    assert exc.value.code == 1
    assert out.getvalue() == ""  # stdout carries only what succeeded
    error = json.loads(err.getvalue())
    assert error["success"] is False and error["errorCode"] == "validation.bad-body"
    assert "limit" in error["error"]


def test_a_json_error_carries_the_field_at_fault_as_rest_and_mcp_do() -> None:
    err = StringIO()
    with pytest.raises(SystemExit):
        call_command("recall", "--limit", "500", "--json", stdout=StringIO(), stderr=err)

    assert json.loads(err.getvalue()) == {
        "success": False,
        "errorCode": "validation.bad-body",
        "error": "limit: Input should be less than or equal to 100 (got 500)",
        "field": "limit",
    }


def test_input_that_is_not_json_is_a_bad_body_with_json() -> None:
    err = StringIO()
    with pytest.raises(SystemExit):
        call_command("remember", "--input", "{not json", "--json", stdout=StringIO(), stderr=err)

    error = json.loads(err.getvalue())
    assert error["errorCode"] == "validation.bad-body" and "--input" in error["error"]
    with pytest.raises(CommandError, match="--input is not JSON"):
        run("remember", "--input", "{not json")


def test_input_nested_past_the_limit_is_a_bad_body_naming_the_limit() -> None:
    err = StringIO()
    deep = '{"name": "n", "type": "note", "observations": ' + "[" * 5_000 + "]" * 5_000 + "}"
    with pytest.raises(SystemExit):
        call_command("remember", "--input", deep, "--json", stdout=StringIO(), stderr=err)

    error = json.loads(err.getvalue())
    assert error["errorCode"] == "validation.bad-body"
    assert error["error"].startswith(
        f"--input nests arrays and objects deeper than {MAX_JSON_DEPTH}"
    )
    assert not Entity.objects.exists()


def test_a_failure_without_json_is_a_command_error_naming_the_field() -> None:
    with pytest.raises(CommandError, match="fix"):
        run("learn", "--error", "it broke")
