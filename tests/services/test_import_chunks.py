"""import, chunk by chunk: every entry validated in full before its chunk is written
(graph/ops/bundle_entry.py)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from graph.models import Entity
from graph.ops.bundle_entry import MAX_HISTORY_DEPTH
from graph.ops.bundle_import import IMPORT_CHUNK
from tests.bundles import entry, export, import_

pytestmark = pytest.mark.django_db


def small_entries(start: int, stop: int) -> list[dict[str, Any]]:
    return [entry(f"e{i}", f"fact {i}") for i in range(start, stop)]


def stored_names() -> set[str]:
    return set(Entity.objects.values_list("name", flat=True))


def deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"k": value}
    return value


@pytest.mark.parametrize(
    ("history", "why"),
    [
        ([{"at": "2026-01-01", "observations": ["bad \ud800 text"]}], "valid Unicode"),
        ([{"at": "2026-01-01", "score": math.nan}], "finite numbers"),
        ([deep(5_000)], f"at most {MAX_HISTORY_DEPTH} levels"),
    ],
    ids=["lone-surrogate", "nan", "too-deep"],
)
def test_a_version_history_that_cannot_be_stored_and_exported_again_is_refused_before_writing(
    history: list[dict[str, Any]], why: str
) -> None:
    # Unchecked, the surrogate was stored and broke every export after it, NaN failed the
    # metadata's JSON check at write time and the deep one crashed the encoder mid-import.
    bundle = small_entries(0, IMPORT_CHUNK + 2)
    bundle[IMPORT_CHUNK + 1]["replaced_history"] = history

    result = import_(bundle)

    [error] = result["errors"]
    assert error.startswith(f'entities[{IMPORT_CHUNK + 1}] "e{IMPORT_CHUNK + 1}": ')
    assert "replaced_history" in error and why in error
    assert stored_names() == {f"e{i}" for i in range(IMPORT_CHUNK + 1)}
    assert export()["entity_count"] == IMPORT_CHUNK + 1  # the export still works
