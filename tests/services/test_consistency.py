"""The consistency checker and its repair (graph/indexing/consistency.py), and the check
`memesh doctor` reports from it.

A clean graph passes; every kind of deliberate corruption (tests/consistency.py) is found by
the checker, and the repair mends it: the checker is clean afterwards, no memory, observation
or tag changed, and recall finds the memory by its word again. The command, its exit status,
`--fix` and real processes: tests/transports/test_doctor_fix.py.
"""

from __future__ import annotations

import pytest

from dream import doctor as dream_doctor
from graph import doctor as graph_doctor
from graph.indexing import consistency, embedding_pass, generations
from graph.models import Entity, EntityVector, Status
from tests.consistency import WIDTH, build_live, consistency_check_of, prepare, stored
from tests.helpers import names, recall, remember
from tests.procs import corrupt_indexes as corrupting
from tests.scenarios import run_scenario
from tests.vector_support import use_embedder

pytestmark = pytest.mark.clean_indexes  # conftest's _clean_indexes


@pytest.fixture
def deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic", dimensions=str(WIDTH))


def current_vectors_are_exactly_the_active_entities() -> bool:
    live = generations.live_generation()
    assert live is not None
    active = dict(Entity.objects.filter(status=Status.ACTIVE).values_list("id", "embedding_hash"))
    return EntityVector.objects.hashes(live.generation) == active


# --- a healthy graph -------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_clean_graph_passes_with_every_entity_checked(deterministic: None) -> None:
    run_scenario()  # appends, edits, archives, reactivations, namespace moves
    live = build_live()

    report = consistency.check()

    assert report.ok, report.as_json()
    assert report.issues == []
    assert report.vectors_checked and report.live_generation == live.generation
    assert report.entities == report.fts_checked == Entity.objects.count()
    assert (report.waiting_missing, report.waiting_stale) == (0, 0)


@pytest.mark.django_db
def test_vectors_waiting_to_be_embedded_are_reported_but_are_not_corruption(
    deterministic: None,
) -> None:
    remember("old", "first text")
    build_live()
    remember("old", "an appended observation")  # its vector is now of older text
    remember("new", "never embedded yet")

    report = consistency.check()
    # The doctor's report, from the services `memesh doctor` and GET /v1/doctor call.
    doctor_report = graph_doctor.as_json(dream_doctor.run_checks(probe=False))

    assert report.ok
    assert (report.waiting_missing, report.waiting_stale) == (1, 1)
    assert doctor_report["ok"] is True  # so the command exits 0
    found = consistency_check_of(doctor_report)
    assert found["status"] == "ok"
    assert found["data"]["waitingToBeEmbedded"] == {"missing": 1, "stale": 1}
    assert "2 waiting to be embedded" in found["detail"]


@pytest.mark.django_db
def test_a_graph_without_an_embedder_passes_on_its_keyword_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_embedder(monkeypatch, "none")
    run_scenario()

    report = consistency.check()

    assert report.ok and report.live_generation is None


# --- each corruption: found, then repaired ----------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("corruption", corrupting.ALL)
def test_each_corruption_is_found_and_fix_repairs_it_losing_nothing(
    deterministic: None, corruption: str
) -> None:
    ids, before = prepare(corruption)
    name = corrupting.entity_name(corruption)
    word = corrupting.unique_word(corruption)

    report = consistency.check()

    assert not report.ok
    assert report.counts() == {corrupting.EXPECTED_KIND[corruption]: max(len(ids), 1)}
    [issue] = report.issues
    assert issue.entity_ids == ids
    if ids and ids[0] != corrupting.MISSING_ID and ids[0] != corrupting.MISSING_ID + 1:
        assert issue.names == [name]

    repaired = consistency.repair(report)

    assert repaired.before is report
    assert repaired.after.ok, repaired.after.as_json()
    assert stored() == before
    if corruption in corrupting.ARCHIVED:
        assert name not in names(recall(word))
        assert name in names(recall(word, include_archived=True))
    else:
        assert name in names(recall(word))
    # The embedding worker's next pass completes the vector index.
    embedding_pass.embed_pending()
    final = consistency.check()
    assert final.ok and (final.waiting_missing, final.waiting_stale) == (0, 0)
    assert current_vectors_are_exactly_the_active_entities()


@pytest.mark.django_db
def test_fix_keeps_a_vector_whose_only_fault_was_its_sign_bits(deterministic: None) -> None:
    prepare("bits-disagree")
    live = generations.live_generation()
    assert live is not None
    floats_before = EntityVector.objects.floats(live.generation, list(stored_ids()))

    result = consistency.repair()

    assert result.bits_rewritten == 1 and result.vectors_removed == 0
    floats_after = EntityVector.objects.floats(live.generation, list(stored_ids()))
    assert floats_after.keys() == floats_before.keys()
    assert all((floats_after[i] == floats_before[i]).all() for i in floats_before)
    assert result.after.ok and result.after.waiting_missing == 0


def stored_ids() -> list[int]:
    return list(Entity.objects.values_list("id", flat=True))
