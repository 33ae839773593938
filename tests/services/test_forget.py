"""forget: archive an entity (never delete it) or remove one observation (API reference)."""

from __future__ import annotations

import pytest

from core.errors import InvalidInput
from graph.models import Entity, Observation
from tests.helpers import forget, names, observations_of, recall, remember, stored

pytestmark = pytest.mark.django_db


# --- archiving ------------------------------------------------------------------------------


def test_it_archives_an_entity_and_keeps_its_row_and_observations() -> None:
    remember("auth-decision", "Chose JWT", "Using RS256", tags=["topic:auth"])

    result = forget("auth-decision")

    assert result == {"name": "auth-decision", "archived": True}
    entity = stored("auth-decision")
    assert entity.status == "archived"
    assert observations_of("auth-decision") == ["Chose JWT", "Using RS256"]
    assert list(entity.tags.values_list("name", flat=True)) == ["topic:auth"]


def test_recall_hides_an_archived_entity() -> None:
    remember("auth-decision", "Chose JWT")
    remember("api-design", "JWT in the Authorization header")

    forget("auth-decision")

    assert names(recall("jwt")) == ["api-design"]
    assert names(recall()) == ["api-design"]


def test_recall_with_include_archived_shows_an_archived_entity() -> None:
    remember("auth-decision", "Chose JWT")
    forget("auth-decision")

    found = recall("jwt", include_archived=True)["entities"]
    listed = recall(include_archived=True)["entities"]

    assert [(e["name"], e["status"]) for e in found] == [("auth-decision", "archived")]
    assert [(e["name"], e["status"]) for e in listed] == [("auth-decision", "archived")]
    assert found[0]["observations"] == ["Chose JWT"]


def test_it_answers_archived_false_with_a_message_for_an_unknown_name() -> None:
    result = forget("never-stored")

    assert result["archived"] is False
    assert "never-stored" in result["message"]
    assert not Entity.objects.exists()


def test_forgetting_an_already_archived_entity_is_a_no_op_with_a_message() -> None:
    remember("auth-decision", "Chose JWT")
    forget("auth-decision")
    before = stored("auth-decision")

    result = forget("auth-decision")

    after = stored("auth-decision")
    assert result["archived"] is True
    assert "already archived" in result["message"]
    assert (after.status, after.updated_at) == ("archived", before.updated_at)


# --- removing one observation ---------------------------------------------------------------


def test_it_removes_one_observation_and_keeps_the_entity_active() -> None:
    remember("auth-decision", "Chose JWT", "Using RS256", "Tokens expire hourly")

    result = forget("auth-decision", observation="Using RS256")

    assert result == {
        "name": "auth-decision",
        "archived": False,
        "removed": True,
        "removedCount": 1,
    }
    assert stored("auth-decision").status == "active"
    assert observations_of("auth-decision") == ["Chose JWT", "Tokens expire hourly"]


def test_it_removes_every_copy_of_the_observation() -> None:
    remember("auth-decision", "Chose JWT", "Using RS256")
    # remember never stores a duplicate, but rows written before deduplication (an import of
    # an older database) can hold one; forget must clear them all.
    Observation.objects.create(entity=stored("auth-decision"), text="Chose JWT")

    result = forget("auth-decision", observation="Chose JWT")

    assert (result["removed"], result["removedCount"]) == (True, 2)
    assert observations_of("auth-decision") == ["Using RS256"]


def test_it_reports_a_non_matching_observation_and_changes_nothing() -> None:
    remember("auth-decision", "Chose JWT", "Using RS256")
    before = stored("auth-decision")

    result = forget("auth-decision", observation="Chose jwt")

    after = stored("auth-decision")
    assert (result["removed"], result["removedCount"]) == (False, 0)
    assert result["archived"] is False
    assert "not found" in result["message"]
    assert observations_of("auth-decision") == ["Chose JWT", "Using RS256"]
    assert (after.status, after.updated_at) == ("active", before.updated_at)


def test_after_removing_an_observation_recall_no_longer_finds_it_by_a_word_only_it_had() -> None:
    remember("auth-decision", "Chose JWT", "Signed with RS256")
    assert names(recall("rs256")) == ["auth-decision"]

    forget("auth-decision", observation="Signed with RS256")

    assert names(recall("rs256")) == []
    assert names(recall("jwt")) == ["auth-decision"]


def test_it_answers_with_a_message_when_removing_an_observation_from_an_unknown_name() -> None:
    result = forget("never-stored", observation="anything")

    assert result["archived"] is False
    assert "never-stored" in result["message"]


# --- validation -----------------------------------------------------------------------------


def test_it_rejects_the_plural_observations_key_and_points_to_observation() -> None:
    remember("auth-decision", "Chose JWT")

    with pytest.raises(InvalidInput) as excinfo:
        forget("auth-decision", observations=["Chose JWT"])

    assert "`observation`" in excinfo.value.message
    assert stored("auth-decision").status == "active"
    assert observations_of("auth-decision") == ["Chose JWT"]


def test_it_rejects_a_blank_observation_instead_of_archiving_the_entity() -> None:
    remember("auth-decision", "Chose JWT")

    with pytest.raises(InvalidInput) as excinfo:
        forget("auth-decision", observation="   ")

    assert excinfo.value.field == "observation"
    assert stored("auth-decision").status == "active"


def test_it_rejects_an_unknown_key() -> None:
    remember("auth-decision", "Chose JWT")

    with pytest.raises(InvalidInput) as excinfo:
        forget("auth-decision", permanent=True)

    assert excinfo.value.message == "permanent: unknown field"
    assert stored("auth-decision").status == "active"


def test_removing_an_observation_ignores_surrounding_whitespace_as_remember_does() -> None:
    remember("padded", "  keep the cache warm  ", "another fact")
    result = forget("padded", observation="keep the cache warm \n")
    assert result["removed"] is True
    assert Observation.objects.filter(entity__name="padded").count() == 1
