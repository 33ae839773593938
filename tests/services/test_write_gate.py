"""The write gate (core/db/write_gate.py): writers on one database file queue on an
`flock` beside it, taken before BEGIN IMMEDIATE and released at commit, rollback and close."""

from __future__ import annotations

import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from core.db.base import DatabaseWrapper
from core.db.write_gate import WriteGate


def held_elsewhere(db: Path) -> bool:
    """True when another holder has the gate: a fresh gate cannot take it within 0.1 s."""
    probe = WriteGate(str(db))
    probe.acquire(timeout=0.1)
    taken = probe.fd is not None
    probe.release()
    return not taken


def test_a_second_gate_waits_for_the_first_and_gets_it_on_release(tmp_path):
    db = tmp_path / "kg.db"
    first, second = WriteGate(str(db)), WriteGate(str(db))
    first.acquire(timeout=1)
    got_it = threading.Event()

    def waiter() -> None:
        second.acquire(timeout=30)
        if second.fd is not None:
            got_it.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    assert not got_it.wait(0.3)  # still queued behind the first
    first.release()
    thread.join(30)
    assert got_it.is_set()
    second.release()
    assert stat.S_IMODE(Path(str(db) + ".write-lock").stat().st_mode) == 0o600


def test_a_gate_whose_file_cannot_be_made_lets_the_writer_go_on_without_it(tmp_path):
    # As in a read-only directory: SQLite, not this open, must say what is wrong.
    gate = WriteGate(str(tmp_path / "no-such-directory" / "kg.db"))
    gate.acquire(timeout=1)
    assert gate.fd is None
    gate.release()


def test_a_wait_is_bounded_and_an_abandoned_wait_does_not_keep_the_gate(tmp_path):
    db = tmp_path / "kg.db"
    holder, impatient = WriteGate(str(db)), WriteGate(str(db))
    holder.acquire(timeout=1)
    impatient.acquire(timeout=0.2)
    assert impatient.fd is None  # gave up: goes on under SQLite's own lock
    holder.release()
    # The abandoned waiter takes the lock when it frees, then lets it go at once.
    late = WriteGate(str(db))
    late.acquire(timeout=30)
    assert late.fd is not None
    late.release()


@pytest.fixture
def file_connection(tmp_path, django_db_blocker) -> Iterator[DatabaseWrapper]:
    """A connection of memesh's backend to a database file of its own (the test database
    lives in memory, where there is no file to put a gate beside)."""
    settings = {**connection.settings_dict, "NAME": str(tmp_path / "kg.db")}
    with django_db_blocker.unblock():
        wrapper = DatabaseWrapper(settings, alias="write-gate-test")
        wrapper.ensure_connection()
        yield wrapper
        wrapper.close()


@pytest.mark.parametrize("end", ["commit", "rollback", "close"])
def test_a_transaction_holds_the_gate_until_it_ends(file_connection, tmp_path, end):
    db = tmp_path / "kg.db"
    assert not held_elsewhere(db)
    file_connection._start_transaction_under_autocommit()
    assert held_elsewhere(db)
    getattr(file_connection, end)()
    assert not held_elsewhere(db)
