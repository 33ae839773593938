"""`memesh task`: the task_state operation from the command line — recording (JSON), clearing
with an empty value, showing the state and flagging a stale one, and bad input as a command
error."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from graph.models import MetaEntry
from graph.ops.task_state import read_task_state, state_key

pytestmark = pytest.mark.django_db


def cli(*args: str) -> str:
    out = StringIO()
    call_command("task", *args, stdout=out)
    return out.getvalue()


def test_the_cli_records_and_prints_json() -> None:
    result = json.loads(cli("--project", "a/b", "--goal", "G", "--next", "N", "--json"))

    assert result["changed"] == ["goal", "next"]
    assert read_task_state("a/b")["next"] == "N"  # type: ignore[index]


def test_the_cli_clears_with_an_empty_value_and_shows_the_state() -> None:
    cli("--project", "a/b", "--goal", "G", "--blocked", "CI")

    text = cli("--project", "a/b", "--blocked", "")

    assert "Updated: blocked" in text
    assert "goal: G" in text
    assert "blocked" not in read_task_state("a/b")  # type: ignore[operator]


def test_the_cli_flags_a_stale_state_but_still_shows_it() -> None:
    cli("--project", "a/b", "--goal", "G")
    entry = MetaEntry.objects.get(key=state_key("a/b"))
    entry.value = {**entry.value, "updated_at": "2020-01-01T00:00:00.000Z"}
    entry.save()

    text = cli("--project", "a/b")

    assert "stale" in text
    assert "goal: G" in text


def test_the_cli_rejects_bad_input_with_a_command_error() -> None:
    with pytest.raises(CommandError):
        cli("--project", "a/b", "--goal", "x" * 10_001)
