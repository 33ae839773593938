"""`memesh config list | set | unset`: the same service as /v1/config, keys always masked."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.config_sections import config_load
from tests.processes import memesh_env, run_python

# `list` reports capabilities, which open the database.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("home")]

KEY = "sk-cli-secret-0123456789"


def run(*args: str) -> str:
    out = StringIO()
    call_command("config", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_set_parses_json_values_and_keeps_strings(home: Path) -> None:
    run("set", "llm", json.dumps({"provider": "openai", "apiKey": KEY}))
    run("set", "autoCapture", "false")
    run("set", "sessionLimit", "20")
    run("set", "language", "zh-TW")
    run("set", "llm.model", "gpt-4o-mini")

    assert config_load() == {
        "llm": {"provider": "openai", "apiKey": KEY, "model": "gpt-4o-mini"},
        "autoCapture": False,
        "sessionLimit": 20,
        "language": "zh-TW",
    }


def test_list_masks_keys_in_text_and_json() -> None:
    run("set", "llm", json.dumps({"provider": "anthropic", "apiKey": KEY}))
    run("set", "llmFallbacks", json.dumps([{"provider": "openai", "apiKey": "sk-fb-999999999"}]))

    text = run("list")
    as_json = json.loads(run("list", "--json"))

    assert KEY not in text and "sk-fb" not in text
    assert 'llm = {"provider": "anthropic", "apiKey": "***"}' in text
    assert as_json["config"]["llmFallbacks"][0]["apiKey"] == "***"
    assert as_json["capabilities"]["llm"]["provider"] == "anthropic"
    assert KEY not in run("set", "language", "en", "--json")


def test_unset_removes_a_key_or_a_field() -> None:
    run(
        "set",
        "llm",
        json.dumps({"provider": "openai", "apiKey": KEY, "baseUrl": "http://127.0.0.1:1"}),
    )
    run("set", "language", "fr")

    run("unset", "llm.baseUrl")
    run("unset", "language")

    assert config_load() == {"llm": {"provider": "openai", "apiKey": KEY}}


@pytest.mark.parametrize(
    "args",
    [
        ("set", "language", "x" * 61),
        ("set", "nope", "1"),
        ("unset", "nope"),
        ("set", "llm", "openai"),
        ("set", "llm", '{"provider": ' + "[" * 5_000 + "]" * 5_000 + "}"),  # past MAX_JSON_DEPTH
    ],
)
def test_bad_values_are_refused_and_change_nothing(args) -> None:
    run("set", "language", "en")
    with pytest.raises(CommandError):
        run(*args)
    assert config_load() == {"language": "en"}


def test_json_errors_carry_the_error_code() -> None:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("config", "set", "language", "x" * 61, "--json", stdout=out, stderr=err)
    assert exc.value.code == 1
    assert json.loads(err.getvalue())["errorCode"] == "validation.bad-body"
    assert out.getvalue() == ""


def test_the_briefing_level_is_stored_and_a_bad_one_is_refused_with_its_field() -> None:
    run("set", "briefing", "standard")
    assert config_load() == {"briefing": "standard"}

    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("config", "set", "briefing", "huge", "--json", stdout=out, stderr=err)
    assert exc.value.code == 1
    failure = json.loads(err.getvalue())
    assert failure["errorCode"] == "validation.bad-body" and failure["field"] == "briefing"
    assert "'minimal', 'standard' or 'full'" in failure["error"]
    assert config_load() == {"briefing": "standard"}

    run("unset", "briefing")
    assert config_load() == {}


def test_the_memesh_command_in_its_own_process(tmp_path: Path) -> None:
    env = memesh_env(tmp_path)
    cli = ["-m", "memesh_site.cli", "config"]
    done = run_python([*cli, "set", "llm", json.dumps({"provider": "openai", "apiKey": KEY})], env)
    assert done.returncode == 0, done.stderr
    listed = run_python([*cli, "list", "--json"], env)

    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["config"]["llm"] == {"provider": "openai", "apiKey": "***"}
    assert KEY not in listed.stdout + listed.stderr + done.stdout + done.stderr
    assert json.loads((tmp_path / "config.json").read_text())["llm"]["apiKey"] == KEY
