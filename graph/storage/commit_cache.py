"""Answers a thread keeps until anything is committed to the database: for whole-graph reads
that cost tens of milliseconds at 10k memories and are asked again and again between writes
(the dashboard's graph and project pages, GET /v1/graph). The change token
(graph.storage.cursor.change_token) moves with every commit by any connection of any process,
so what is kept is never older than the database; inside an atomic block, whose writes may
still roll back, nothing is kept.

Each server thread keeps its own connection (CONN_MAX_AGE None), and a token is only
comparable on the connection that read it, so each thread keeps its own answers: at most
MAX_KEPT, the last of each key.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from graph.storage.cursor import ChangeToken, change_token

T = TypeVar("T")
MAX_KEPT = 8


@dataclass
class _Kept:
    token: ChangeToken | None = None
    values: dict[Hashable, Any] = field(default_factory=dict)


_local = threading.local()


def _kept() -> _Kept:
    kept = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = _Kept()
    return cast(_Kept, kept)


def kept_until_commit(key: Hashable, compute: Callable[[], T]) -> T:
    """compute()'s answer, or the one this thread kept for `key` since the last commit. The
    caller must not change what it is given: the next caller gets the same object."""
    # Read before the read it guards: a commit landing in between only costs a needless
    # re-read, never a stale answer.
    token = change_token()
    if token is None:
        return compute()
    kept = _kept()
    if kept.token != token:
        kept.token, kept.values = token, {}
    if key in kept.values:
        return cast(T, kept.values[key])
    value = compute()
    if len(kept.values) < MAX_KEPT:
        kept.values[key] = value
    return value


def kept_clear() -> None:
    """Forget what this thread kept (the bench's cold timings)."""
    _local.kept = _Kept()
