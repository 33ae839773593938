"""task_state: one goal / next / blocked / done per project (API reference, "task_state")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.errors import InvalidInput
from graph.models import MetaEntry
from graph.ops.kit.operation import CallContext
from graph.ops.task_state import (
    TASK_STATE,
    clean_value,
    read_task_state,
    state_key,
    task_state_freshness,
)

pytestmark = pytest.mark.django_db

CTX = CallContext(source_host="test", project="acme/shop")


def task(ctx: CallContext = CTX, **fields: Any) -> dict[str, Any]:
    return TASK_STATE.run(fields, ctx)


def test_a_project_with_no_state_reads_as_null() -> None:
    assert task() == {"project": "acme/shop", "state": None}
    assert read_task_state("acme/shop") is None


def test_it_records_fields_and_reports_what_changed() -> None:
    result = task(goal="Ship the work-topology injection", next="Open the PR")

    assert result["project"] == "acme/shop"
    assert result["changed"] == ["goal", "next"]
    state = result["state"]
    assert state["goal"] == "Ship the work-topology injection"
    assert state["next"] == "Open the PR"
    assert "blocked" not in state and "done" not in state
    datetime.strptime(state["updated_at"], "%Y-%m-%dT%H:%M:%S.%fZ")  # the reference's form


def test_it_is_stored_in_one_meta_entry_per_project() -> None:
    task(goal="G")
    task(ctx=CallContext(source_host="test", project="other/repo"), goal="H")

    entry = MetaEntry.objects.get(key="task_state:acme/shop")
    assert entry.value["goal"] == "G"
    assert set(entry.value) == {"goal", "updated_at"}
    assert read_task_state("other/repo")["goal"] == "H"  # type: ignore[index]


def test_a_read_returns_project_and_state_only() -> None:
    task(goal="G", blocked="CI is red")

    result = task()

    assert set(result) == {"project", "state"}
    assert result["state"]["goal"] == "G"
    assert result["state"]["blocked"] == "CI is red"


def test_omitting_a_field_leaves_it_and_changed_lists_only_the_written_one() -> None:
    task(goal="G", next="N")

    result = task(next="N2")

    assert result["changed"] == ["next"]
    assert result["state"]["goal"] == "G"
    assert result["state"]["next"] == "N2"


def test_restating_a_recorded_value_writes_nothing_and_keeps_updated_at() -> None:
    first = task(goal="G", next="N")
    stamp = MetaEntry.objects.get(key=state_key("acme/shop")).updated_at

    again = task(goal="  G ", next="N")  # whitespace differences are not a change

    assert again["changed"] == []
    assert again["state"]["updated_at"] == first["state"]["updated_at"]
    assert MetaEntry.objects.get(key=state_key("acme/shop")).updated_at == stamp


def test_a_real_change_moves_updated_at() -> None:
    first = task(goal="G")
    entry = MetaEntry.objects.get(key=state_key("acme/shop"))
    entry.value = {**entry.value, "updated_at": "2020-01-01T00:00:00.000Z"}
    entry.save()

    result = task(goal="G2")

    assert result["state"]["updated_at"] != "2020-01-01T00:00:00.000Z"
    assert result["state"]["updated_at"] >= first["state"]["updated_at"]


def test_an_empty_string_clears_a_field() -> None:
    task(goal="G", blocked="Waiting for review")

    result = task(blocked="")

    assert result["changed"] == ["blocked"]
    assert "blocked" not in result["state"]
    assert result["state"]["goal"] == "G"


def test_clearing_an_absent_field_changes_nothing() -> None:
    task(goal="G")

    assert task(blocked="")["changed"] == []


def test_clearing_the_last_field_removes_the_state() -> None:
    task(goal="G")

    result = task(goal="")

    assert result == {"project": "acme/shop", "state": None, "changed": ["goal"]}
    assert not MetaEntry.objects.filter(key=state_key("acme/shop")).exists()


def test_values_are_whitespace_collapsed_and_capped_at_300_characters() -> None:
    result = task(goal="a  b\n\tc", next="x" * 500)

    assert result["state"]["goal"] == "a b c"
    assert len(result["state"]["next"]) == 300
    assert result["state"]["next"].endswith("…")
    assert clean_value("y" * 300) == "y" * 300  # exactly at the cap: kept whole


def test_changed_follows_the_reference_field_order() -> None:
    assert task(done="D", goal="G")["changed"] == ["goal", "done"]


def test_an_explicit_project_wins_over_the_callers() -> None:
    task(project="other/repo", goal="G")

    assert read_task_state("other/repo") is not None
    assert read_task_state("acme/shop") is None


def test_a_project_tag_names_the_same_project() -> None:
    task(project="project:other/repo", goal="G")

    assert read_task_state("other/repo") is not None


def test_it_refuses_when_no_project_is_known() -> None:
    with pytest.raises(InvalidInput, match="No project"):
        task(ctx=CallContext(source_host="http"), goal="G")


@pytest.mark.parametrize(
    "payload", [{"goal": 5}, {"goal": None, "nope": "x"}, {"project": ""}, {"next": "x" * 10_001}]
)
def test_it_rejects_bad_input(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        TASK_STATE.run(payload, CTX)


def test_a_long_project_id_gets_a_key_that_fits_and_stays_distinct() -> None:
    a, b = "p" * 150 + "a", "p" * 150 + "b"

    task(project=a, goal="A")
    task(project=b, goal="B")

    assert len(state_key(a)) <= 100
    assert read_task_state(a)["goal"] == "A"  # type: ignore[index]
    assert read_task_state(b)["goal"] == "B"  # type: ignore[index]


def test_freshness_is_stale_after_72_hours_and_unknown_without_a_plausible_time() -> None:
    now = datetime(2026, 8, 16, 12, 0, tzinfo=UTC)

    def at(when: datetime) -> dict[str, str]:
        return {"goal": "G", "updated_at": when.strftime("%Y-%m-%dT%H:%M:%S.000Z")}

    assert task_state_freshness(None, now) is None
    assert task_state_freshness(at(now - timedelta(hours=71)), now) == "fresh"
    assert task_state_freshness(at(now - timedelta(hours=73)), now) == "stale"
    assert task_state_freshness(at(now + timedelta(days=1)), now) == "unknown"
    assert task_state_freshness({"goal": "G"}, now) == "unknown"
    assert task_state_freshness({"goal": "G", "updated_at": "yesterday"}, now) == "unknown"
