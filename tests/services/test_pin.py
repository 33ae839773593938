"""pin / unpin: metadata.pin for the dreamer (API reference, "memesh pin / memesh unpin")."""

from __future__ import annotations

import pytest

from core.errors import InvalidInput
from graph.models import Entity
from graph.ops.pin import PIN, UNPIN, is_pinned
from tests.helpers import CTX, remember, stored

pytestmark = pytest.mark.django_db


def test_pin_sets_metadata_pin_true_and_keeps_the_rest_of_metadata() -> None:
    remember("auth-decision", "Chose JWT")

    result = PIN.run({"name": "auth-decision"}, CTX)

    assert result == {"name": "auth-decision", "pinned": True, "found": True}
    entity = stored("auth-decision")
    assert entity.metadata["pin"] is True
    assert entity.metadata["provenance"] == {"source_host": "test"}
    assert is_pinned(entity)


def test_unpin_removes_the_key() -> None:
    remember("auth-decision", "Chose JWT")
    PIN.run({"name": "auth-decision"}, CTX)

    result = UNPIN.run({"name": "auth-decision"}, CTX)

    assert result == {"name": "auth-decision", "pinned": False, "found": True}
    assert "pin" not in stored("auth-decision").metadata
    assert not is_pinned(stored("auth-decision"))


def test_pinning_twice_and_unpinning_an_unpinned_entity_are_harmless() -> None:
    remember("auth-decision", "Chose JWT")

    assert UNPIN.run({"name": "auth-decision"}, CTX)["pinned"] is False
    PIN.run({"name": "auth-decision"}, CTX)
    assert PIN.run({"name": "auth-decision"}, CTX)["pinned"] is True
    assert stored("auth-decision").metadata["pin"] is True


def test_pinning_does_not_count_as_a_content_write() -> None:
    remember("auth-decision", "Chose JWT")
    before = stored("auth-decision").updated_at

    PIN.run({"name": "auth-decision"}, CTX)

    assert stored("auth-decision").updated_at == before


def test_a_non_boolean_pin_value_is_not_a_pin_and_pin_repairs_it() -> None:
    remember("auth-decision", "Chose JWT")
    Entity.objects.filter(name="auth-decision").update(metadata={"pin": "false"})
    assert not is_pinned(stored("auth-decision"))

    PIN.run({"name": "auth-decision"}, CTX)

    assert stored("auth-decision").metadata == {"pin": True}


def test_an_unknown_name_answers_found_false_and_creates_nothing() -> None:
    assert PIN.run({"name": "nope"}, CTX) == {"name": "nope", "pinned": False, "found": False}
    assert UNPIN.run({"name": "nope"}, CTX) == {"name": "nope", "pinned": False, "found": False}
    assert not Entity.objects.exists()


def test_a_name_is_required() -> None:
    with pytest.raises(InvalidInput):
        PIN.run({}, CTX)
