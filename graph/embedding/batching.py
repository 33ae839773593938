"""How many word pieces the worker's local embedder hands onnxruntime in one call.

While requests arrive, calls stay small (SMALL_BUDGET): the worker waits for a quiet moment
before each one (core/request_activity.py), and a small call is over soon if a request
comes in the middle of it. Once the server has been idle for IDLE_SECONDS, only the backlog's
throughput matters, and which batch size gives the most depends on the processor: on one
2-core machine the workload's memories (~160 pieces) embedded 13–19 % faster six to a call
than one to a call, while on another kind of machine larger batches were slower. So the idle
worker measures both budgets on its own work and keeps the faster, trying the other again
every REPROBE_EVERY calls in case the machine or the memories changed.

Only calls made while idle are measured: under requests the model shares the CPU, and its
speed says more about the requests than about the batch size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SMALL_BUDGET = 128
LARGE_BUDGET = 1024
BUDGETS = (SMALL_BUDGET, LARGE_BUDGET)
# A server without a request for this long is idle: an agent's next call is seconds away.
IDLE_SECONDS = 1.0
# Idle calls of each budget measured before the faster is chosen.
PROBES = 3
# Then one idle call in this many tries the other budget again.
REPROBE_EVERY = 20
# Weight of the newest measurement in a budget's running speed.
SMOOTHING = 0.3


@dataclass
class BatchBudget:
    """The token budget of the next model call, learned from the idle calls' speed."""

    speed: dict[int, float] = field(default_factory=dict)  # word pieces per second
    samples: dict[int, int] = field(default_factory=lambda: dict.fromkeys(BUDGETS, 0))
    idle_calls: int = 0

    @staticmethod
    def idle(quiet_seconds: float) -> bool:
        """Whether a call made `quiet_seconds` after the server's last request is an idle one
        (chosen by measurement, and measured)."""
        return quiet_seconds >= IDLE_SECONDS

    def choose(self, quiet_seconds: float) -> int:
        """The budget for a call made `quiet_seconds` after the server's last request."""
        if not self.idle(quiet_seconds):
            return SMALL_BUDGET
        self.idle_calls += 1
        best = self.best()
        if best is None:
            return min(BUDGETS, key=lambda b: (self.samples[b], b))  # still probing
        if self.idle_calls % REPROBE_EVERY == 0:
            return next(b for b in BUDGETS if b != best)
        return best

    def record(self, budget: int, pieces: int, seconds: float) -> None:
        """One idle call of `budget` embedded `pieces` word pieces in `seconds`."""
        if seconds <= 0 or budget not in self.samples:
            return
        rate = pieces / seconds
        previous = self.speed.get(budget)
        self.speed[budget] = rate if previous is None else previous + SMOOTHING * (rate - previous)
        self.samples[budget] += 1

    def best(self) -> int | None:
        """The faster budget once both were measured PROBES times (for logs and tests)."""
        if any(self.samples[b] < PROBES for b in BUDGETS):
            return None
        return max(BUDGETS, key=lambda b: self.speed[b])
