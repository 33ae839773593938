"""How long something took, in the whole milliseconds memesh records (LLM attempts' latency, a
pass's `durationMs`).

On the monotonic clock: a wall-clock change (NTP, a laptop waking) must not make a duration
negative or huge.
"""

from __future__ import annotations

import time


class Stopwatch:
    """Started when made; `ms` reads the time since, as often as needed."""

    def __init__(self) -> None:
        self._started = time.monotonic()

    @property
    def ms(self) -> int:
        """Whole milliseconds since the start (truncated, as every recorded duration is)."""
        return int((time.monotonic() - self._started) * 1000)
