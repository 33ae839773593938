"""The state of a proposal's sources as one hash. Pure Python, no Django (the migration that
filled it in for older proposals calls it too).

A person's rejection is remembered against this hash (proposals/selectors.py): the same
memories, unchanged, are not proposed (and paid for) again; a memory edited, added to or
removed from the cluster changes the hash, and the cluster is proposed afresh. What counts is
what a reviewer sees of a source: its name, type, title and observations. Access counts,
tags and timestamps do not, so reading a memory never undoes a rejection.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceView:
    id: int
    name: str
    type: str
    title: str | None
    observations: Sequence[str]  # in the order they were written


def state_hash(source_ids: Iterable[int], found: Iterable[SourceView]) -> str:
    """sha256 over the sources, by id; an id not found (deleted) counts as missing."""
    by_id = {s.id: s for s in found}
    rows = [
        [i, s.name, s.type, s.title, list(s.observations)] if (s := by_id.get(i)) else [i, None]
        for i in sorted({int(i) for i in source_ids})
    ]
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()
