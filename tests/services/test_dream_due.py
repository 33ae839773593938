"""When a dream is due (dream/due.py) — an LLM, 24 h since the last dream, 10
episodic memories since it — and what the Stop hook and the worker's schedule get back: a
queued dream TaskRun with its trigger, never a dream run inline; and the schedule itself
(dream/beat.py), which sends nothing while no LLM is configured."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from celery.beat import ScheduleEntry, Scheduler
from django.utils import timezone

from core.task_queue import app
from dream import beat as dream_beat
from dream.due import dream_due, enqueue_dream_if_due
from graph.models import Entity
from proposals.models import Proposal, TaskRun, TaskStatus
from tests.dreams import commits
from tests.fakes.llm_servers import FakeLLMServer
from tests.helpers import remember

pytestmark = pytest.mark.django_db


def written(names: list[str], ago: timedelta) -> None:
    Entity.objects.filter(name__in=names).update(created_at=timezone.now() - ago)


def test_no_dream_is_queued_without_an_llm() -> None:
    commits(12)

    due = enqueue_dream_if_due(trigger="stop-hook")

    assert (due.enqueued, due.reason) == (False, "no LLM is configured")
    assert not TaskRun.objects.exists()


def test_fewer_than_ten_episodic_memories_are_not_worth_a_dream(llm: FakeLLMServer) -> None:
    commits(9)
    for i in range(5):  # knowledge, not episodes: not counted
        remember(f"decision-{i}", "a decision", type="decision")

    due = enqueue_dream_if_due(trigger="stop-hook")

    assert not due.enqueued
    assert due.reason == "9 episodic memories in the last 14 days (a dream needs 10)"
    assert due.episodic_since == 9
    assert not TaskRun.objects.exists()


def test_ten_episodic_memories_queue_one_dream_for_the_worker_and_run_nothing_here(
    llm: FakeLLMServer,
) -> None:
    commits(10)

    due = enqueue_dream_if_due(trigger="stop-hook")

    assert due.enqueued and due.task_id is not None
    assert due.reason == "10 episodic memories in the last 14 days"
    run = TaskRun.objects.get()
    assert (str(run.pk), run.kind, run.status) == (due.task_id, "dream_run", TaskStatus.QUEUED)
    assert run.params == {"trigger": "stop-hook"}
    assert llm.chat_requests() == []  # queued, not run inline
    assert due.as_json()["taskId"] == due.task_id


def test_a_dream_queued_or_run_in_the_last_24_hours_throttles_the_next(
    llm: FakeLLMServer,
) -> None:
    commits(10)
    enqueue_dream_if_due(trigger="stop-hook")
    commits(10, start=10)

    again = enqueue_dream_if_due(trigger="schedule")

    assert not again.enqueued
    assert again.reason.startswith("the last dream was 0.0 h ago (at most one every 24 h)")
    assert TaskRun.objects.count() == 1


def test_a_digest_staged_by_a_dream_run_by_hand_counts_as_the_last_dream(
    llm: FakeLLMServer,
) -> None:
    commits(10)
    Proposal.objects.create(kind="digest", fingerprint="x", created_at=timezone.now())

    assert dream_due(trigger="schedule").reason.startswith("the last dream was")


def test_only_episodic_memories_written_since_the_last_dream_count(llm: FakeLLMServer) -> None:
    before = commits(10)
    written(before, timedelta(hours=30))
    TaskRun.objects.create(
        kind="dream_run",
        status=TaskStatus.SUCCEEDED,
        created_at=timezone.now() - timedelta(hours=25),
    )
    assert dream_due().episodic_since == 0

    commits(10, start=10)
    due = enqueue_dream_if_due(trigger="schedule")

    assert due.enqueued
    assert due.reason == "10 episodic memories since the last dream"
    assert TaskRun.objects.filter(params__trigger="schedule").count() == 1


def test_episodic_memories_older_than_the_dreamers_window_do_not_count(
    llm: FakeLLMServer,
) -> None:
    written(commits(12), timedelta(days=15))

    assert dream_due().episodic_since == 0


# --- the schedule ------------------------------------------------------------------------------


def test_the_schedule_has_its_entry_unless_the_interval_is_zero() -> None:
    assert dream_beat.beat_schedule(0) == {}
    [(name, entry)] = dream_beat.beat_schedule(3600).items()
    assert name == dream_beat.ENTRY
    assert entry["task"] == "dream.beat.dream_if_due_task"
    assert entry["schedule"] == timedelta(hours=1)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The task names the scheduler sends (nothing reaches a broker)."""
    names: list[str] = []

    def apply_async(self: Scheduler, entry: ScheduleEntry, **kwargs: Any) -> None:
        names.append(entry.task)

    monkeypatch.setattr(Scheduler, "apply_async", apply_async)
    return names


def scheduler_entry(tmp_path: Any) -> tuple[dream_beat.DreamScheduler, ScheduleEntry]:
    scheduler = dream_beat.DreamScheduler(
        app=app, schedule_filename=str(tmp_path / "beat"), lazy=True
    )
    spec = dream_beat.beat_schedule(60)[dream_beat.ENTRY]
    entry = ScheduleEntry(
        name=dream_beat.ENTRY, task=spec["task"], schedule=spec["schedule"], app=app
    )
    return scheduler, entry


def test_the_schedule_sends_nothing_while_no_llm_is_configured(
    tmp_path: Any, sent: list[str]
) -> None:
    scheduler, entry = scheduler_entry(tmp_path)

    scheduler.apply_entry(entry)

    assert sent == []


def test_the_schedule_sends_its_check_once_an_llm_is_configured(
    tmp_path: Any, sent: list[str], llm: FakeLLMServer
) -> None:
    scheduler, entry = scheduler_entry(tmp_path)

    scheduler.apply_entry(entry)

    assert sent == ["dream.beat.dream_if_due_task"]


def test_the_scheduled_check_queues_a_dream_with_the_schedule_trigger(
    llm: FakeLLMServer,
) -> None:
    commits(10)

    answer = dream_beat.dream_if_due_task()

    assert answer["enqueued"] is True
    assert TaskRun.objects.get().params == {"trigger": "schedule"}


def test_an_unreadable_configuration_is_a_reason_not_an_error() -> None:
    from core.config_store import config_path

    path = config_path()
    saved = path.read_text() if path.exists() else None
    path.write_text("{not json")
    try:
        due = enqueue_dream_if_due(trigger="stop-hook")
    finally:
        if saved is None:
            path.unlink()
        else:
            path.write_text(saved)

    assert not due.enqueued
    assert due.reason.startswith("config.json is not readable JSON")
