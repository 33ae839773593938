"""graph/ops/revise.py: the edits remember cannot express keep the invariants of every write,
whoever calls them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.errors import OperationFailed
from graph.indexing import consistency
from graph.models import Entity, Status
from graph.ops.kit.fields import MAX_OBSERVATION_CHARS
from graph.ops.revise import entity_rename, observations_overwrite, observations_splice
from tests.helpers import forget, names, observations_of, recall, remember, stored

pytestmark = pytest.mark.django_db


def test_an_overwrite_stores_a_repeated_line_once_and_brings_an_archived_memory_back() -> None:
    remember("m", "old")
    forget("m")
    count = observations_overwrite(
        entity_id=stored("m").pk, observations=[" wallabyline ", "wallabyline", "other"]
    )
    assert count == 2
    assert observations_of("m") == ["wallabyline", "other"]
    assert stored("m").status == Status.ACTIVE
    assert names(recall("wallabyline")) == ["m"]
    assert consistency.check().ok


def test_an_overwrite_with_the_same_lines_keeps_no_version() -> None:
    remember("m", "same", "lines")
    observations_overwrite(entity_id=stored("m").pk, observations=["same", "lines "])
    assert "replaced_history" not in stored("m").metadata


def test_a_splice_refuses_an_observation_over_the_limit_and_changes_nothing() -> None:
    remember("m", "keep")
    with pytest.raises(ValidationError):
        observations_splice(
            entity_id=stored("m").pk, start=0, stop=1, text="x" * (MAX_OBSERVATION_CHARS + 1)
        )
    assert observations_of("m") == ["keep"]


def test_a_splice_inserting_a_line_the_memory_holds_changes_nothing() -> None:
    remember("m", "one", "two")
    before = stored("m").updated_at
    assert not observations_splice(entity_id=stored("m").pk, start=0, stop=0, text="two ")
    assert observations_of("m") == ["one", "two"]
    assert stored("m").updated_at == before


def test_a_rename_refuses_a_name_an_archived_memory_holds() -> None:
    remember("m", "fact")
    remember("taken", "other", namespace="global")
    forget("taken")
    with pytest.raises(OperationFailed, match=r"already taken in namespace 'global' \(archived\)"):
        entity_rename(entity_id=stored("m").pk, name="taken")
    assert Entity.objects.filter(name="m").exists()


def test_a_rename_is_found_under_the_new_name_only() -> None:
    remember("m", "numbatfact")
    entity_rename(entity_id=stored("m").pk, name="fresh", namespace="team")
    assert names(recall("numbatfact")) == ["fresh"]
    assert stored("fresh").metadata["previous_namespace"] == "personal"
    assert consistency.check().ok
