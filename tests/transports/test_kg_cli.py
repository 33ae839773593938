"""`memesh kg backfill-relations` and `memesh kg rename-project`: flags into the services, a
dry run by default, the text and --json output, and the exit codes."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from graph.models import Relation, Tag
from tests.helpers import remember


def run(*args: str) -> str:
    out = StringIO()
    call_command("kg", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def run_json(*args: str) -> Any:
    return json.loads(run(*args, "--json"))


def failure(*args: str) -> dict[str, Any]:
    """The --json failure envelope of a run that must exit 1."""
    err = StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("kg", *args, "--json", stdout=StringIO(), stderr=err)
    assert exc.value.code == 1
    envelope: dict[str, Any] = json.loads(err.getvalue())
    assert envelope["success"] is False
    return envelope


@pytest.fixture
def orphans() -> None:
    remember("app-plan", "the plan", type="plan", project="app")
    remember("app-lesson", "learned", type="lesson_learned", project="app")
    remember("auth-token-refresh-flow", "one", type="decision")
    remember("auth-token-refresh-design", "two", type="decision")


@pytest.mark.django_db
def test_backfill_is_a_dry_run_unless_applied(orphans: None) -> None:
    text = run("backfill-relations")
    dry = run_json("backfill-relations", "--dry-run")

    assert "dry run: nothing written; --apply creates them" in text
    assert "app-lesson  --[belongs-to-project]-->  app-plan" in text
    assert dry["dryRun"] is True and dry["candidatesProposed"] == 1
    assert not Relation.objects.exists()

    applied = run_json("backfill-relations", "--apply")

    assert applied["edgesWritten"] == 1 and Relation.objects.count() == 1
    assert "created 0" in run("backfill-relations", "--apply")


@pytest.mark.django_db
def test_backfill_rule_flags_reach_the_service(orphans: None) -> None:
    every = run_json("backfill-relations", "--all-rules", "--no-evidence-links")
    names = run_json("backfill-relations", "--name-tokens", "--min-jaccard", "0.9")

    assert every["rules"] == [
        "tagCooccurrence", "projectClustering", "sessionCooccurrence", "nameTokenSimilarity",
    ]  # fmt: skip
    assert every["byRule"]["nameTokenSimilarity"] == 1  # 3 shared tokens pass any Jaccard
    assert names["byRule"]["nameTokenSimilarity"] == 1
    assert run_json("backfill-relations", "--project", "other")["candidatesProposed"] == 0


@pytest.mark.django_db
def test_backfill_bad_values_exit_1() -> None:
    assert failure("backfill-relations", "--max-per-source", "0")["field"] == "max_per_source"
    assert failure("backfill-relations", "--min-jaccard", "2")["field"] == "min_jaccard"
    with pytest.raises(CommandError):  # argparse: the two modes exclude each other
        call_command("kg", "backfill-relations", "--dry-run", "--apply", stdout=StringIO())


@pytest.mark.django_db
def test_rename_project_without_names_lists_the_project_tags() -> None:
    assert "No project:* tags found." in run("rename-project")
    remember("a", "x", project="tim")
    remember("b", "y", project="TIM")

    listing = run_json("rename-project")
    text = run("rename-project")

    assert listing["projects"] == [{"project": "TIM", "count": 1}, {"project": "tim", "count": 1}]
    assert listing["similar"] == [["TIM", "tim"]]
    assert "Possibly one project under several spellings:" in text and "TIM  tim" in text


@pytest.mark.django_db
def test_rename_project_takes_from_to_or_old_new_and_is_a_dry_run() -> None:
    remember("a", "x", project="tim")

    by_flags = run_json("rename-project", "--from", "tim", "--to", "TIM")
    positional = run_json("rename-project", "tim", "TIM")
    text = run("rename-project", "tim", "TIM")

    assert by_flags == positional
    assert by_flags["dryRun"] is True and by_flags["renamed"] == 1
    assert "Nothing written. Add --apply to write" in text
    assert Tag.objects.filter(name="project:tim").exists()


@pytest.mark.django_db
def test_rename_project_bad_invocations_exit_1() -> None:
    assert failure("rename-project", "--from", "tim")["errorCode"] == "validation.bad-param"
    assert failure("rename-project", "tim")["errorCode"] == "validation.bad-param"
    assert failure("rename-project", "a", "b", "--from", "a")["errorCode"] == "validation.bad-param"
    assert failure("rename-project", "--apply")["errorCode"] == "validation.bad-param"
    same = failure("rename-project", "--from", "tim", "--to", "project:tim")
    assert same["field"] == "--to" and "--from" in same["error"]


@pytest.mark.django_db(transaction=True)
def test_rename_project_apply_prints_the_backup_and_how_to_restore_it() -> None:
    remember("a", "x", project="tim")

    text = run("rename-project", "--from", "tim", "--to", "TIM", "--apply")

    assert "Renamed project:tim → project:TIM: 1 renamed, 0 merged" in text
    assert "Backup: " in text and "kg-before-rename-project-" in text
    assert Tag.objects.filter(name="project:TIM").exists()
    assert "nothing to do" in run("rename-project", "--from", "tim", "--to", "TIM", "--apply")
