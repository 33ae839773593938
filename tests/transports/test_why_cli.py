"""`memesh why FILE [--line N] [--limit N] [--json]`: the git half (real repositories made by
the test, git run by the command from the current directory) joined to the graph half, every
gap a typed abstention, and the exit codes."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from graph.project import project_id
from tests.git_repos import GitRepo
from tests.helpers import remember, remember_commit, remember_in_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A repository with an origin (so its project is `acme/app`), the current directory."""
    repo = GitRepo(tmp_path / "app")
    repo.git("remote", "add", "origin", "git@github.com:acme/app.git")
    monkeypatch.chdir(repo.root)
    return repo


def why(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("why", *args, "--json", stdout=out, stderr=StringIO())
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def why_text(*args: str) -> str:
    out = StringIO()
    call_command("why", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_file_history_is_joined_to_commit_entities_and_their_sessions(repo: GitRepo) -> None:
    repo.write("src/auth.ts", "one\n")
    first = repo.commit("Add auth")
    repo.write("src/auth.ts", "one\ntwo\n")
    second = repo.commit("Refresh tokens")
    repo.write("README.md", "unrelated\n")
    repo.commit("Docs")
    remember_commit(f"commit-{second[:7]}", second, session="s-1")
    remember_in_session("s-1-decision", "s-1", "refresh tokens rotate", type="decision")

    result = why("src/auth.ts")

    assert result["project"] == "acme/app" and result["line"] is None
    assert [c["commit"]["hash"] for c in result["commits"]] == [second, first]
    newest, oldest = result["commits"]
    assert newest["commit"]["subject"] == "Refresh tokens" and newest["commit"]["date"]
    assert newest["entity"]["name"] == f"commit-{second[:7]}" and newest["abstentions"] == []
    assert newest["session"]["session_id"] == "s-1"
    assert "s-1-decision" in [e["name"] for e in newest["session"]["entities"]]
    assert oldest["entity"] is None and oldest["abstentions"] == ["no_commit_entity"]
    assert result["abstentions"] == []


def test_a_commit_entity_without_a_session_says_so(repo: GitRepo) -> None:
    repo.write("a.py", "x = 1\n")
    sha = repo.commit("a")
    remember_commit(f"commit-{sha[:7]}", sha)

    (entry,) = why("a.py")["commits"]

    assert entry["entity"] is not None and entry["session"] is None
    assert entry["abstentions"] == ["no_session_link"]
    assert "no session link" in why_text("a.py")


def test_history_follows_renames(repo: GitRepo) -> None:
    repo.write("old_name.py", "a\nb\nc\nd\n")
    before = repo.commit("Create")
    repo.git("mv", "old_name.py", "new_name.py")
    after = repo.commit("Rename")

    hashes = [c["commit"]["hash"] for c in why("new_name.py")["commits"]]

    assert hashes == [after, before]


def test_limit_caps_the_commits_inspected(repo: GitRepo) -> None:
    for n in range(4):
        repo.write("f.txt", f"{n}\n")
        repo.commit(f"c{n}")

    assert len(why("f.txt", "--limit", "2")["commits"]) == 2


def test_line_attributes_one_line_through_blame(repo: GitRepo) -> None:
    repo.write("f.py", "first\n")
    first = repo.commit("first line")
    repo.write("f.py", "first\nsecond\n")
    second = repo.commit("second line")

    line_one = why("f.py", "--line", "1")
    line_two = why("f.py", "--line", "2")

    assert line_one["line"] == 1
    assert [(c["commit"]["hash"], c["commit"]["subject"]) for c in line_one["commits"]] == [
        (first, "first line")
    ]
    assert [c["commit"]["hash"] for c in line_two["commits"]] == [second]
    assert line_two["commits"][0]["commit"]["date"] is not None


def test_a_line_not_committed_yet_is_an_abstention(repo: GitRepo) -> None:
    repo.write("f.py", "committed\n")
    repo.commit("c")
    repo.write("f.py", "committed\nwork in progress\n")

    result = why("f.py", "--line", "2")

    assert result["commits"] == [] and result["abstentions"] == ["line_uncommitted"]
    assert "not committed yet" in why_text("f.py", "--line", "2")


def test_a_line_past_the_end_is_out_of_range(repo: GitRepo) -> None:
    repo.write("f.py", "only\n")
    repo.commit("c")

    assert why("f.py", "--line", "9")["abstentions"] == ["line_out_of_range"]


def test_an_untracked_file_is_an_abstention(repo: GitRepo) -> None:
    repo.write("tracked.py", "x\n")
    repo.commit("c")
    repo.write("scratch.py", "not added\n")

    result = why("scratch.py")

    assert result["commits"] == [] and result["abstentions"] == ["file_not_tracked"]
    assert "does not track scratch.py" in why_text("scratch.py")


def test_a_repository_without_commits_has_an_unreadable_history(repo: GitRepo) -> None:
    repo.write("f.py", "staged\n")
    repo.git("add", "f.py")

    result = why("f.py")

    assert result["commits"] == [] and result["abstentions"] == ["history_unreadable"]
    assert "unknown, not none" in why_text("f.py")


def test_outside_any_repository_is_an_abstention_and_the_file_tag_half_still_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.md").write_text("x\n")
    monkeypatch.chdir(folder)
    here = project_id(folder)
    remember("notes-memory", "notes.md holds the plan", tags=["file:notes.md"], project=here)
    remember("unfiled", "another notes.md", tags=["file:notes.md"], project=False)

    result = why("notes.md")

    assert result["abstentions"] == ["not_a_git_repo"] and result["commits"] == []
    assert result["project"] == here and here.startswith("plain-")  # the directory's project
    assert [e["name"] for e in result["file_memories"]["entities"]] == ["notes-memory"]
    assert "not inside a git repository" in why_text("notes.md")


def test_without_a_git_binary_git_is_unavailable(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo.write("f.py", "x\n")
    repo.commit("c")
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    assert why("f.py")["abstentions"] == ["git_unavailable"]


def test_file_memories_are_scoped_to_the_repository_project_and_labelled(repo: GitRepo) -> None:
    repo.write("src/auth.ts", "x\n")
    repo.commit("c")
    remember("auth-note", "tokens are RS256", tags=["file:auth.ts"], project="acme/app")
    remember("elsewhere", "another repo's auth.ts", tags=["file:auth.ts"], project="other/x")

    result = why("src/auth.ts")
    text = why_text("src/auth.ts")

    assert result["file_memories"]["basis"] == "file-tag"
    assert [e["name"] for e in result["file_memories"]["entities"]] == ["auth-note"]
    assert "associated, not commit-derived" in text and "auth-note" in text
    assert "elsewhere" not in text


def test_a_file_in_a_subfolder_is_answered_from_the_subfolder(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("pkg/mod.py", "x\n")
    sha = repo.commit("c")
    monkeypatch.chdir(repo.root / "pkg")

    assert [c["commit"]["hash"] for c in why("mod.py")["commits"]] == [sha]
    assert why("mod.py")["project"] == "acme/app"


def test_the_text_names_each_commit_and_what_memesh_has_of_it(repo: GitRepo) -> None:
    repo.write("f.py", "x\n")
    sha = repo.commit("Make f")
    remember_commit(f"commit-{sha[:7]}", sha, session="s-9")
    remember_in_session("kp", "s-9", "wrote f.py")

    text = why_text("f.py")

    assert f"{sha[:7]}" in text and "Make f" in text
    assert f"memory: [commit] commit-{sha[:7]}" in text
    assert "session s-9: 1 other memories" in text and "[session_keypoint] kp" in text


def test_bad_flags_exit_1_with_the_envelope_under_json(repo: GitRepo) -> None:
    for flags, field in ((["--limit", "0"], "limit"), (["--line", "0"], "line")):
        err = StringIO()
        with pytest.raises(SystemExit) as exc:
            call_command("why", "f.py", *flags, "--json", stdout=StringIO(), stderr=err)
        assert exc.value.code == 1
        envelope = json.loads(err.getvalue())
        assert envelope["success"] is False and envelope["field"] == field

    with pytest.raises(CommandError, match="limit"):
        call_command("why", "f.py", "--limit", "51", stdout=StringIO(), stderr=StringIO())
