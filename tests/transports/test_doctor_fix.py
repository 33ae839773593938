"""`memesh doctor` and `memesh doctor --fix` over a graph whose indexes were corrupted on purpose
(tests/consistency.py): the consistency check in the report, the exit status, the repair's
report, and — run as real processes, as a user runs them — every kind of corruption found and
repaired with nothing stored lost. The checker and the repair themselves:
tests/services/test_consistency.py."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from tests.consistency import WIDTH, build_live, consistency_check_of, prepare, stored
from tests.processes import PROCS, ROOT, memesh_env, run_python
from tests.scenarios import run_scenario
from tests.vector_support import use_embedder

pytestmark = pytest.mark.clean_indexes  # conftest's _clean_indexes


def doctor(*args: str) -> tuple[int, dict[str, Any]]:
    """`memesh doctor --json --no-probe ARGS` in process: (exit status, report)."""
    out = StringIO()
    status = 0
    try:
        call_command("doctor", "--json", "--no-probe", *args, stdout=out)
    except SystemExit as exc:
        status = int(exc.code or 0)
    return status, json.loads(out.getvalue())


@pytest.mark.django_db
def test_doctor_fails_with_counts_and_doctor_fix_repairs(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic", dimensions=str(WIDTH))
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
def test_doctor_fix_on_a_healthy_graph_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic", dimensions=str(WIDTH))
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
