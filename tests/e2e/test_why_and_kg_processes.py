"""`memesh why` and `memesh kg` as a user runs them: real processes on a database file of their
own, `why` started inside a real git repository, the exit codes the docs promise
(docs/operations.md), and a rename-project backup put back with the restore command it
printed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.git_repos import GitRepo
from tests.processes import PROCESS_DEADLINE, ROOT, memesh, memesh_env

pytestmark = pytest.mark.slow  # each call starts a Python + Django process


def cli(home: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        memesh(*args),
        cwd=cwd,
        env=memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=PROCESS_DEADLINE,
        check=False,
    )


def test_why_answers_from_inside_the_repository_with_its_exit_codes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = GitRepo(tmp_path / "repo")
    repo.write("src/auth.ts", "a\n")
    sha = repo.commit("Add auth")
    stored = cli(
        home, "remember", "--name", "auth-note", "--type", "decision", "--obs", "RS256",
        "--tag", "file:auth.ts", "--project", "repo", cwd=repo.root,
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr

    done = cli(home, "why", "src/auth.ts", "--json", cwd=repo.root)
    blamed = cli(home, "why", "src/auth.ts", "--line", "1", cwd=repo.root)
    untracked = cli(home, "why", "nope.ts", "--json", cwd=repo.root)
    bad = cli(home, "why", "src/auth.ts", "--limit", "0", "--json", cwd=repo.root)
    usage = cli(home, "why", cwd=repo.root)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [c["commit"]["hash"] for c in result["commits"]] == [sha]
    assert result["commits"][0]["abstentions"] == ["no_commit_entity"]
    assert result["project"] == "repo"  # the repository's project scopes the file-tag half
    assert [e["name"] for e in result["file_memories"]["entities"]] == ["auth-note"]
    assert blamed.returncode == 0 and "Add auth" in blamed.stdout
    assert "associated, not commit-derived" in blamed.stdout
    assert untracked.returncode == 0
    assert json.loads(untracked.stdout)["abstentions"] == ["file_not_tracked"]
    assert bad.returncode == 1 and bad.stdout == ""
    assert json.loads(bad.stderr.strip().splitlines()[-1])["field"] == "limit"
    assert usage.returncode == 2 and "file" in usage.stderr


def test_kg_backfill_twice_and_rename_project_restored_from_its_backup(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name, type_, project in (
        ("tim-plan", "plan", "tim"),
        ("tim-lesson", "lesson_learned", "tim"),
        ("big-tim-note", "note", "TIM"),
    ):
        made = cli(home, "remember", "--name", name, "--type", type_, "--obs", name,
                   "--project", project)  # fmt: skip
        assert made.returncode == 0, made.stderr

    first = cli(home, "kg", "backfill-relations", "--apply", "--json")
    second = cli(home, "kg", "backfill-relations", "--apply", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["edgesWritten"] == 1
    assert json.loads(second.stdout)["edgesWritten"] == 0

    applied = cli(home, "kg", "rename-project", "--from", "tim", "--to", "TIM", "--apply")
    assert applied.returncode == 0, applied.stderr
    after = json.loads(cli(home, "kg", "rename-project", "--json").stdout)
    assert after["projects"] == [{"project": "TIM", "count": 3}]

    restore = applied.stdout.splitlines()[-1].strip()
    assert restore.startswith("rm -f ") and "kg-before-rename-project-" in restore
    subprocess.run(restore, shell=True, check=True, timeout=30)  # the command as printed

    restored = json.loads(cli(home, "kg", "rename-project", "--json").stdout)
    assert restored["projects"] == [
        {"project": "tim", "count": 2},
        {"project": "TIM", "count": 1},
    ]
    unknown = cli(home, "kg", "no-such-action")
    assert unknown.returncode == 2
