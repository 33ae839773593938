"""graph/ops/kit/entity_view.py's `built`: the fast constructor of the read operations' entities is
model_construct's equal, field for field and byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

from graph.ops.kit.entity_view import EntityOutput, Match, RelationOutput, built
from graph.ops.kit.trust.view import TrustOutput


def values(**overrides: Any) -> dict[str, Any]:
    relation = RelationOutput.model_construct(from_="a", to="b", type="uses")
    out: dict[str, Any] = {
        "id": 7,
        "name": "a",
        "title": None,
        "type": "decision",
        "namespace": "personal",
        "status": "active",
        "created_at": "2026-01-02T03:04:05.123456Z",
        "updated_at": "2026-01-02T03:04:05Z",
        "confidence": 0.85,
        "observations": ["one", "two ✓"],
        "tags": ["project:x"],
        "relations": [relation],
        "metadata": {"provenance": {"source_host": "cli"}, "why": "because"},
        "replaced_history_count": None,
        "match": None,
        "trust": TrustOutput.model_construct(
            status="fact",
            confidence=0.85,
            source="git:abc123",
            source_origin="local",
            kind="semantic",
            hop_count=0,
            parent_id=None,
            unattributable=False,
            last_observed_at="2026-01-02T03:04:05Z",
            observed_age_days=1.5,
            stale=False,
            unconfirmed_since=None,
            invalidation_tag=None,
            invalidation_condition=None,
            expires_at=None,
            expired=False,
        ),
    }
    out.update(overrides)
    return out


@pytest.mark.parametrize(
    "overrides",
    [{}, {"replaced_history_count": 2}, {"match": Match(source="keyword", relevance=0.5)}],
)
def test_built_entities_equal_constructed_ones(overrides: dict[str, Any]) -> None:
    fast = built(EntityOutput, values(**overrides))
    slow = EntityOutput.model_construct(**values(**overrides))

    assert fast == slow
    assert fast.model_dump_json(by_alias=True) == slow.model_dump_json(by_alias=True)
    assert fast.model_dump(mode="json", by_alias=True) == slow.model_dump(
        mode="json", by_alias=True
    )
    assert fast.model_fields_set == slow.model_fields_set


def test_built_relations_serialise_from_by_its_alias() -> None:
    fast = built(RelationOutput, {"from_": "a", "to": "b", "type": "uses"})

    assert fast.model_dump_json(by_alias=True) == '{"from":"a","to":"b","type":"uses"}'
    assert fast == RelationOutput.model_construct(from_="a", to="b", type="uses")


def test_built_takes_every_field_in_declaration_order() -> None:
    assert list(values()) == list(EntityOutput.model_fields)
