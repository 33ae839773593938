"""The consistency checker, `memesh doctor` and `memesh doctor --fix` (issue 8).

A clean graph passes; every kind of deliberate corruption (tests/procs/corrupt_indexes.py) is
found by the checker and by `memesh doctor` run as a real process, and `--fix` repairs it:
the checker is clean afterwards, no memory, observation or tag changed, and recall finds the
memory by its word again.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from graph.indexing import consistency, vectors
from graph.models import Entity, EntityVector, Status
from tests.helpers import names, recall, remember
from tests.processes import PROCS, ROOT, memesh_env, run_python
from tests.procs import corrupt_indexes as corrupting
from tests.scenarios import run_scenario
from tests.vector_support import use_embedder

pytestmark = pytest.mark.clean_indexes  # conftest's _clean_indexes

WIDTH = 16


@pytest.fixture
def deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic", dimensions=str(WIDTH))


def build_live() -> vectors.Generation:
    report = vectors.embed_pending()
    assert report.error is None and report.skipped is None, report
    live = vectors.live_generation()
    assert live is not None
    return live


def stored() -> dict[str, Any]:
    """Everything a memory is: entity rows with their observations and tags, in order."""
    rows = {}
    for entity in Entity.objects.order_by("id"):
        rows[entity.name] = (
            entity.pk,
            entity.type,
            entity.title,
            entity.status,
            entity.namespace,
            entity.confidence,
            entity.metadata,
            entity.updated_at,
            list(entity.observations.order_by("id").values_list("text", flat=True)),
            list(entity.tags.order_by("id").values_list("name", flat=True)),
        )
    return rows


def current_vectors_are_exactly_the_active_entities() -> bool:
    live = vectors.live_generation()
    assert live is not None
    active = dict(Entity.objects.filter(status=Status.ACTIVE).values_list("id", "embedding_hash"))
    return EntityVector.objects.hashes(live.generation) == active


def prepare(corruption: str) -> tuple[list[int], dict[str, Any]]:
    """Seed, embed, archive where needed, snapshot what is stored, then corrupt."""
    corrupting.seed([corruption])
    build_live()
    floats = corrupting.live_float_rows()
    corrupting.archive_where_needed([corruption])
    before = stored()
    return corrupting.corrupt(corruption, floats), before


def doctor(*args: str) -> tuple[int, dict[str, Any]]:
    out = StringIO()
    status = 0
    try:
        call_command("doctor", "--json", "--no-probe", *args, stdout=out)
    except SystemExit as exc:
        status = int(exc.code or 0)
    return status, json.loads(out.getvalue())


def consistency_check_of(report: dict[str, Any]) -> dict[str, Any]:
    [found] = [c for c in report["checks"] if c["name"] == "index consistency"]
    return found


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
    status, doctor_report = doctor()

    assert report.ok
    assert (report.waiting_missing, report.waiting_stale) == (1, 1)
    assert status == 0
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
    vectors.embed_pending()
    final = consistency.check()
    assert final.ok and (final.waiting_missing, final.waiting_stale) == (0, 0)
    assert current_vectors_are_exactly_the_active_entities()


@pytest.mark.django_db
def test_fix_keeps_a_vector_whose_only_fault_was_its_sign_bits(deterministic: None) -> None:
    prepare("bits-disagree")
    live = vectors.live_generation()
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


@pytest.mark.django_db
def test_doctor_fails_with_counts_and_doctor_fix_repairs(deterministic: None) -> None:
    prepare("change-fts-text")

    status, report = doctor()

    assert status == 1 and report["ok"] is False
    found = consistency_check_of(report)
    assert found["status"] == "fail"
    assert [(i["kind"], i["count"]) for i in found["data"]["issues"]] == [("fts.stale_text", 1)]
    assert "1 keyword-index rows whose text" in found["detail"]

    status, report = doctor("--fix")

    assert status == 0 and report["ok"] is True
    assert report["fix"]["repaired"]["ftsResynced"] == 1
    assert report["fix"]["before"]["ok"] is False and report["fix"]["after"]["ok"] is True
    assert consistency_check_of(report)["status"] == "ok"


@pytest.mark.django_db
def test_doctor_fix_on_a_healthy_graph_changes_nothing(deterministic: None) -> None:
    run_scenario()
    build_live()
    before = stored()

    status, report = doctor("--fix")

    assert status == 0
    assert report["fix"]["repaired"] == {
        "ftsResynced": 0,
        "vectorsRemoved": 0,
        "bitsRewritten": 0,
        "tablesCreated": 0,
        "generationsDropped": [],
        "embeddingRequested": False,
    }
    assert stored() == before


# --- the real command, as a user runs it ------------------------------------------------------


@pytest.mark.slow
def test_memesh_doctor_process_finds_every_corruption_and_fix_repairs_them(
    tmp_path: Path,
) -> None:
    env = memesh_env(
        tmp_path,
        MEMESH_DB_PATH=str(tmp_path / "kg.db"),
        MEMESH_EMBEDDER="deterministic",
        MEMESH_EMBEDDER_DIMENSIONS=str(WIDTH),
        MEMESH_CELERY_EAGER="true",
        MEMESH_EMBED_DEBOUNCE_SECONDS="0",
        PYTHONPATH=str(ROOT),
    )
    cli = ["-m", "memesh_site.cli"]
    migrated = run_python([*cli, "migrate", "--verbosity", "0"], env)
    assert migrated.returncode == 0, migrated.stderr
    corrupted = run_python([str(PROCS / "corrupt_indexes.py")], env)
    assert corrupted.returncode == 0, corrupted.stderr
    setup = json.loads(corrupted.stdout)
    exported_before = run_python([*cli, "export", "--json"], env)
    assert exported_before.returncode == 0, exported_before.stderr

    found = run_python([*cli, "doctor", "--json", "--no-probe"], env)
    as_text = run_python([*cli, "doctor", "--no-probe"], env)
    fixed = run_python([*cli, "doctor", "--fix", "--json", "--no-probe"], env)
    again = run_python([*cli, "doctor", "--json", "--no-probe"], env)
    exported_after = run_python([*cli, "export", "--json"], env)

    assert found.returncode == 1, found.stderr
    check = consistency_check_of(json.loads(found.stdout))
    assert check["status"] == "fail"
    reported = {i["kind"]: i["entityIds"] for i in check["data"]["issues"]}
    assert reported == {kind: sorted(ids) for kind, ids in setup["expected"].items()}
    assert as_text.returncode == 1
    assert "✗ index consistency: inconsistent:" in as_text.stdout

    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    fix = json.loads(fixed.stdout)["fix"]
    assert fix["after"]["ok"] is True
    assert fix["repaired"]["ftsResynced"] >= 3
    assert again.returncode == 0 and consistency_check_of(json.loads(again.stdout))["data"]["ok"]
    # Nothing stored was lost: the export of every memory is the same.
    assert _entities(exported_after.stdout) == _entities(exported_before.stdout)
    # Every corrupted memory is found by its word again (recall ORs the words).
    words = list(setup["words"].values())
    hit = run_python(
        [*cli, "recall", *words, "--include-archived", "--limit", "100", "--json"], env
    )
    assert hit.returncode == 0, hit.stderr
    assert set(setup["words"]) <= {e["name"] for e in json.loads(hit.stdout)["entities"]}


def _entities(export_stdout: str) -> list[dict[str, Any]]:
    data = json.loads(export_stdout)
    bundle = data.get("data", data)
    return sorted(bundle["entities"], key=lambda e: e["name"])
