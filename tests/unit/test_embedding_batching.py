"""The idle worker's choice of batch size (graph/embedding/batching.py), with measured speeds
the test supplies: which budget is faster is the machine's business, the choice is ours."""

from __future__ import annotations

from graph.embedding.batching import (
    IDLE_SECONDS,
    LARGE_BUDGET,
    PROBES,
    REPROBE_EVERY,
    SMALL_BUDGET,
    BatchBudget,
)

IDLE = IDLE_SECONDS + 5.0


def measure(budget: BatchBudget, speeds: dict[int, float], calls: int) -> list[int]:
    """`calls` idle calls, each reported at the given pieces per second of its budget."""
    chosen = []
    for _ in range(calls):
        b = budget.choose(IDLE)
        chosen.append(b)
        budget.record(b, pieces=int(speeds[b]), seconds=1.0)
    return chosen


def test_while_requests_arrive_calls_stay_small_and_nothing_is_measured() -> None:
    budget = BatchBudget()
    assert [budget.choose(q) for q in (0.0, 0.05, IDLE_SECONDS - 0.01)] == [SMALL_BUDGET] * 3
    assert budget.idle_calls == 0
    assert budget.best() is None


def test_an_idle_worker_tries_both_budgets_then_keeps_the_faster() -> None:
    budget = BatchBudget()
    first = measure(budget, {SMALL_BUDGET: 40.0, LARGE_BUDGET: 55.0}, 2 * PROBES)
    assert sorted(first) == sorted([SMALL_BUDGET, LARGE_BUDGET] * PROBES)
    assert budget.best() == LARGE_BUDGET
    assert measure(budget, {SMALL_BUDGET: 40.0, LARGE_BUDGET: 55.0}, 5) == [LARGE_BUDGET] * 5


def test_where_large_batches_are_slower_the_small_budget_is_kept() -> None:
    budget = BatchBudget()
    measure(budget, {SMALL_BUDGET: 26.0, LARGE_BUDGET: 12.0}, 2 * PROBES)
    assert budget.best() == SMALL_BUDGET
    assert budget.choose(IDLE) == SMALL_BUDGET


def test_the_other_budget_is_tried_again_and_a_change_of_speed_is_followed() -> None:
    budget = BatchBudget()
    measure(budget, {SMALL_BUDGET: 40.0, LARGE_BUDGET: 55.0}, 2 * PROBES)
    later = measure(budget, {SMALL_BUDGET: 40.0, LARGE_BUDGET: 55.0}, REPROBE_EVERY)
    assert later.count(SMALL_BUDGET) == 1  # one re-probe in REPROBE_EVERY idle calls
    # The machine got busy elsewhere and large calls slowed down: the choice follows.
    measure(budget, {SMALL_BUDGET: 40.0, LARGE_BUDGET: 10.0}, 4 * REPROBE_EVERY)
    assert budget.best() == SMALL_BUDGET


def test_a_call_that_took_no_time_is_not_a_measurement() -> None:
    budget = BatchBudget()
    budget.record(LARGE_BUDGET, pieces=500, seconds=0.0)
    budget.record(999, pieces=500, seconds=1.0)
    assert budget.samples == {SMALL_BUDGET: 0, LARGE_BUDGET: 0}
