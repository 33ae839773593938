"""Bundles as files of any size: written entry by entry, read with a streaming parser.

Memory stays flat in both directions: export holds one chunk of entities at a time, import
one parsed entry (plus one byte per entry, graph.ops.bundle says why). The file is parsed
three times on import — a scan (valid JSON of the right shape, and the entry count for the
progress bar) before anything is written, then the two passes of bundle_import — because
re-reading a file costs far less than holding 50,000 parsed entries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import ijson
from django.db import transaction
from django.utils import timezone

from core.errors import InvalidInput
from core.json_limits import JSONTooDeep, bounded_events
from graph.ops.bundle.exporter import (
    BUNDLE_VERSION,
    BundleSelection,
    bundle_count,
    bundle_entries_json,
    exported_at,
)
from graph.ops.kit.scope import UNBOUND, ReadScope

ENTRY_PREFIX = "entities.item"
_VALUE_EVENTS = {"start_map", "start_array", "string", "number", "boolean", "null"}


class Writer(Protocol):
    def write(self, text: str, /) -> object: ...


def bundle_write(
    out: Writer,
    *,
    namespace: str | None = None,
    tag: str | None = None,
    limit: int | None = None,
    scope: ReadScope = UNBOUND,
    progress: Callable[[int], None] | None = None,
    on_count: Callable[[int], None] | None = None,
    include_expired: bool = False,
) -> int:
    """Write a bundle to `out`, one entity per line; returns the number written.

    One read transaction: the header's entity_count and the entries are one snapshot.
    """
    with transaction.atomic():
        now = timezone.now()
        selection = BundleSelection(
            namespace=namespace,
            tag=tag,
            limit=limit,
            scope=scope,
            include_expired=include_expired,
            now=now,
        )
        count = bundle_count(selection)
        if on_count is not None:
            on_count(count)
        header = {
            "version": BUNDLE_VERSION,
            "exported_at": exported_at(now),
            "scope": scope.output().model_dump(mode="json", by_alias=True),
        }
        out.write(json.dumps(header)[:-1] + f', "entity_count": {count}, "entities": [')
        written = 0
        # Each entry as SQLite wrote it (graph/storage/bundle_reads.py).
        for entry in bundle_entries_json(selection):
            out.write(("\n" if written == 0 else ",\n") + entry)
            written += 1
            if progress is not None and written % 100 == 0:
                progress(100)
        if progress is not None and written % 100:
            progress(written % 100)
        out.write("\n]}\n")
    return written


def bundle_scan(path: Path) -> int:
    """Check that `path` holds one JSON object with an `entities` array; returns the number
    of entries. Raises InvalidInput, before the import writes anything, when it does not."""
    entries = 0
    has_entities = False
    try:
        with path.open("rb") as f:
            # Depth is checked here, before anything is written: the import's passes re-read
            # a file that passed, so nothing nested past MAX_JSON_DEPTH reaches json.dumps.
            events = bounded_events(ijson.parse(f))
            first = next(events, None)
            if first is None or first[1] != "start_map":
                raise InvalidInput("The bundle must be a JSON object")
            for prefix, event, _ in events:
                if prefix == "entities" and event == "start_array":
                    has_entities = True
                elif prefix == ENTRY_PREFIX and event in _VALUE_EVENTS:
                    entries += 1
    except ijson.JSONError as exc:
        raise InvalidInput(f"The bundle is not valid JSON: {exc}") from None
    except JSONTooDeep as exc:
        raise InvalidInput(f"The bundle {exc}") from None
    if not has_entities:
        raise InvalidInput("The bundle has no `entities` array", field="data.entities")
    return entries


def bundle_file_entries(path: Path) -> Callable[[], Iterator[object]]:
    """An entry source for bundle_import that re-reads `path` on every pass."""

    def entries() -> Iterator[object]:
        with path.open("rb") as f:
            yield from ijson.items(f, ENTRY_PREFIX, use_float=True)

    return entries
