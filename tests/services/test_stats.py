"""stats (graph/ops/stats.py): totals and distributions over every status, capped and ordered."""

from __future__ import annotations

import pytest

from graph.ops.stats import TAG_CAP, TYPE_CAP, stats_get
from tests.helpers import forget, remember

pytestmark = pytest.mark.django_db


def test_an_empty_graph_has_zero_totals_and_empty_distributions() -> None:
    assert stats_get().model_dump() == {
        "totalEntities": 0,
        "totalObservations": 0,
        "totalRelations": 0,
        "totalTags": 0,
        "typeDistribution": [],
        "tagDistribution": [],
        "statusDistribution": [],
    }


def test_it_counts_every_status_and_distinct_tags() -> None:
    remember("a", "one", "two", type="decision", tags=["project:x", "topic:db"])
    remember("b", "three", type="decision", tags=["project:x"])
    remember("c", "four", type="note", relations=[{"to": "a", "type": "related-to"}])
    forget("b")

    stats = stats_get().model_dump()

    assert stats["totalEntities"] == 3
    assert stats["totalObservations"] == 4
    assert stats["totalRelations"] == 1
    assert stats["totalTags"] == 2  # project:x twice is one tag
    assert stats["typeDistribution"] == [
        {"type": "decision", "count": 2},
        {"type": "note", "count": 1},
    ]
    assert stats["tagDistribution"] == [
        {"tag": "project:x", "count": 2},
        {"tag": "topic:db", "count": 1},
    ]
    assert stats["statusDistribution"] == [
        {"status": "active", "count": 2},
        {"status": "archived", "count": 1},
    ]


def test_the_distributions_keep_the_most_common_and_break_ties_by_name() -> None:
    for i in range(TYPE_CAP + 5):
        remember(f"e{i}", "x", type=f"type-{i:02d}", tags=[f"tag-{i:02d}"])
    remember("extra", "x", type="type-54", tags=["tag-54"])

    stats = stats_get()

    types = [row.type for row in stats.typeDistribution]
    assert len(types) == TYPE_CAP
    assert types[0] == "type-54"  # two entities
    assert types[1:] == [f"type-{i:02d}" for i in range(TYPE_CAP - 1)]  # then by name
    tags = [row.tag for row in stats.tagDistribution]
    assert len(tags) == TAG_CAP
    assert tags[0] == "tag-54"
    assert stats.totalTags == TYPE_CAP + 5
