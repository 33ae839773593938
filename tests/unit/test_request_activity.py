"""The request stamp a server writes and its worker waits on (core/request_activity.py),
on a real memory-mapped file, with a clock the test moves: "time passes" only when the code
sleeps, so every wait is exact and nothing depends on this machine's speed."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from core import request_activity
from core.request_activity import MIN_SLEEP_SECONDS, QUIET_SECONDS, Stamp


class Clock:
    """time.monotonic and time.sleep for the module under test; `on_sleep` runs at each sleep
    (a server stamping while the worker waits)."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.slept: list[float] = []
        self.on_sleep: Callable[[float], None] | None = None

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.slept.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(self.now)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(request_activity, "time", fake)
    return fake


def test_a_stamp_written_by_one_mapping_is_read_by_another(tmp_path: Path) -> None:
    path = tmp_path / "home" / request_activity.FILENAME
    server = Stamp(path, create=True)
    worker = Stamp(path, create=False)
    server.mark(123.5)
    assert worker.last() == 123.5
    server.mark(124.25)
    assert worker.last() == 124.25
    # Private to the user, like every file of the home.
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_the_reader_never_creates_the_file_and_does_not_wait_without_it(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / request_activity.FILENAME
    worker = Stamp(path, create=False)
    assert worker.last() is None
    assert worker.wait_for_quiet(0.5) == 0.0
    assert clock.slept == []
    assert not path.exists()
    # A server that starts later is seen without restarting the worker.
    Stamp(path, create=True).mark(clock.now)
    assert worker.last() == clock.now


def test_an_empty_file_is_no_stamp_for_the_reader(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / request_activity.FILENAME
    path.write_bytes(b"")
    worker = Stamp(path, create=False)
    assert worker.last() is None
    assert worker.wait_for_quiet(0.5) == 0.0


def test_no_wait_once_the_last_request_is_older_than_the_quiet_time(
    tmp_path: Path, clock: Clock
) -> None:
    stamp = Stamp(tmp_path / request_activity.FILENAME, create=True)
    stamp.mark(clock.now - QUIET_SECONDS - 0.001)
    assert stamp.wait_for_quiet(0.5) == 0.0
    assert clock.slept == []


def test_a_recent_request_is_waited_out_until_the_quiet_time(tmp_path: Path, clock: Clock) -> None:
    stamp = Stamp(tmp_path / request_activity.FILENAME, create=True)
    stamp.mark(clock.now - 0.01)
    waited = stamp.wait_for_quiet(0.5)
    assert waited == pytest.approx(QUIET_SECONDS - 0.01, abs=0.002)
    assert clock.now - stamp.last() == pytest.approx(QUIET_SECONDS, abs=0.002)  # type: ignore[operator]


def test_requests_during_the_wait_extend_it(tmp_path: Path, clock: Clock) -> None:
    stamp = Stamp(tmp_path / request_activity.FILENAME, create=True)
    stamp.mark(clock.now)
    first_sleep_ends = clock.now + request_activity.POLL_SECONDS
    arrivals = [first_sleep_ends]  # one more request, seen at the end of the first sleep

    def server(now: float) -> None:
        if arrivals and now >= arrivals[0]:
            stamp.mark(arrivals.pop(0))

    clock.on_sleep = server
    waited = stamp.wait_for_quiet(0.5)
    assert waited == pytest.approx(request_activity.POLL_SECONDS + QUIET_SECONDS, abs=0.002)


def test_a_steady_stream_of_requests_holds_the_worker_for_at_most_the_longest_wait(
    tmp_path: Path, clock: Clock
) -> None:
    stamp = Stamp(tmp_path / request_activity.FILENAME, create=True)
    stamp.mark(clock.now)
    clock.on_sleep = stamp.mark  # a request at every moment the worker looks
    assert stamp.wait_for_quiet(0.5) == pytest.approx(0.5, abs=0.002)
    assert stamp.wait_for_quiet(0.0) == 0.0


def test_a_stamp_from_before_a_restart_of_the_clock_is_ignored(
    tmp_path: Path, clock: Clock
) -> None:
    stamp = Stamp(tmp_path / request_activity.FILENAME, create=True)
    stamp.mark(clock.now + request_activity.STALE_AHEAD_SECONDS + 1)
    assert stamp.wait_for_quiet(0.5) == 0.0
    # Slightly ahead (another process read the clock a moment later) is a request.
    stamp.mark(clock.now + 0.02)
    assert stamp.wait_for_quiet(0.5) == pytest.approx(0.02 + QUIET_SECONDS, abs=0.002)


def test_note_request_stamps_the_homes_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: object, clock: Clock
) -> None:
    monkeypatch.setattr(request_activity, "_server_stamp", None)
    settings.MEMESH_HOME = str(tmp_path)  # type: ignore[attr-defined]
    request_activity.note_request()
    assert Stamp(tmp_path / request_activity.FILENAME, create=False).last() == clock.now


def test_a_server_whose_home_refuses_the_file_stops_trying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the home should be")
    stamp = Stamp(blocked / request_activity.FILENAME, create=True)
    opened: list[int] = []
    real_open = Stamp._open

    def counting(self: Stamp) -> object:
        opened.append(1)
        return real_open(self)

    monkeypatch.setattr(Stamp, "_open", counting)
    stamp.mark(1.0)
    stamp.mark(2.0)
    assert stamp.last() is None
    assert opened == [1]


def test_pace_waits_for_quiet_then_says_how_long_the_server_has_been_quiet(
    tmp_path: Path, clock: Clock
) -> None:
    """The worker's embedder batches more once the server is idle: pace() tells it how idle."""
    path = tmp_path / request_activity.FILENAME
    server = Stamp(path, create=True)
    worker = Stamp(path, create=False)
    server.mark(clock.now)
    # Just stamped: the worker waits for the quiet moment, then it has been quiet that long
    # (to the millisecond the last sleep may round up to).
    quiet = worker.pace(0.5)
    assert QUIET_SECONDS <= quiet <= QUIET_SECONDS + MIN_SLEEP_SECONDS
    assert quiet == pytest.approx(sum(clock.slept))
    clock.now += 3.0
    slept = len(clock.slept)
    assert worker.pace(0.5) == pytest.approx(3.0 + quiet)  # already quiet: no wait
    assert len(clock.slept) == slept
    assert worker.quiet_for() == pytest.approx(3.0 + quiet)


def test_without_a_stamp_or_with_a_stale_one_the_server_counts_as_idle(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / request_activity.FILENAME
    worker = Stamp(path, create=False)
    assert worker.quiet_for() == float("inf")
    Stamp(path, create=True).mark(clock.now + 3600)  # written before the machine restarted
    assert worker.pace(0.5) == float("inf")
    assert clock.slept == []
