"""`memesh feedback --hit ID --miss ID [--text] [--session] [--json]`, and `--session` on
`memesh recall` / `memesh remember`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from graph.models import Entity
from tests.helpers import remember

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def counts(name: str) -> tuple[int, int]:
    entity = Entity.objects.get(name=name)
    return entity.recall_hits, entity.recall_misses


def test_the_cli_counts_hits_and_misses_and_says_what_it_counted() -> None:
    a = remember("a", "walrus notes")["entityId"]
    b = remember("b", "walrus tusks")["entityId"]

    out = run("feedback", "--hit", str(a), "--miss", str(b), "--miss", "555")

    assert out.splitlines() == [f"Hits: {a}", f"Misses: {b}", "Not found (nothing counted): 555"]
    assert counts("a") == (1, 0) and counts("b") == (0, 1)


def test_json_output_and_a_session_across_recall_and_feedback() -> None:
    a = remember("a", "walrus notes")["entityId"]
    b = remember("b", "walrus tusks")["entityId"]
    run("recall", "walrus", "--session", "cli-1", "--json")

    data = json.loads(run("feedback", "--text", f"kept [mem:{a}]", "--session", "cli-1", "--json"))

    assert data == {"hits": [a], "misses": [b], "unchanged": [], "unknown": []}
    again = json.loads(run("feedback", "--hit", str(a), "--session", "cli-1", "--json"))
    assert again["unchanged"] == [a]
    assert counts("a") == (1, 0)


def test_remember_on_the_cli_counts_and_prints_its_citations() -> None:
    a = remember("a", "walrus notes")["entityId"]
    out = run("remember", "--note", f"Handoff\n\nas in [mem:{a}]", "--session", "cli-1")
    assert f"cited (counted as helpful): [mem:{a}]" in out
    assert counts("a") == (1, 0)


def test_nothing_to_count_is_said_so() -> None:
    assert run("feedback").strip() == "Nothing to count."


def test_an_id_in_both_lists_fails_with_the_envelope_on_stderr() -> None:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("feedback", "--hit", "3", "--miss", "3", "--json", stdout=out, stderr=err)
    assert exc.value.code == 1
    assert out.getvalue() == ""
    envelope = json.loads(err.getvalue().strip().splitlines()[-1])
    assert envelope["errorCode"] == "validation.bad-body" and envelope["field"] == "misses"
