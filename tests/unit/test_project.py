"""graph/project.py: which project a directory belongs to, read from git's files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from graph.project import plain_name, project_id, slug_from_url
from graph.project_tags import project_tag


def make_repo(root: Path, origin: str | None = None) -> Path:
    git = root / ".git"
    git.mkdir(parents=True)
    config = "[core]\n\tbare = false\n"
    if origin is not None:
        config += (
            f'[remote "origin"]\n\turl = {origin}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
        )
    (git / "config").write_text(config)
    return root


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Acme/Shop.git",
        "https://github.com/acme/shop",
        "https://github.com/acme/shop/",
        "git@github.com:Acme/shop.git",
        "ssh://git@github.com/acme/shop.git",
        "ssh://git@github.com:2222/acme/shop",
        "https://user@gitlab.example.com/group/acme/shop.git",
        "/srv/git/acme/shop.git",
        "file:///srv/git/acme/shop",
    ],
)
def test_every_origin_url_form_gives_the_owner_repo_slug(url: str) -> None:
    assert slug_from_url(url) == "acme/shop"


def test_a_url_without_an_owner_repo_shape_has_no_slug() -> None:
    assert slug_from_url("shop") is None


def test_a_repository_with_an_origin_is_named_by_its_slug(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "checkout", "git@github.com:Acme/Shop.git")

    assert project_id(repo) == "acme/shop"


def test_a_subdirectory_belongs_to_its_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "checkout", "https://github.com/acme/shop.git")
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)

    assert project_id(deep) == "acme/shop"


def test_other_remotes_are_ignored(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        '[remote "upstream"]\n\turl = https://github.com/someone/else.git\n'
    )

    assert project_id(repo) == "checkout"


def test_a_repository_without_a_remote_is_named_by_its_folder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "My Project")

    assert project_id(repo) == "my-project"
    assert project_id(repo / ".") == "my-project"


def test_a_worktree_reads_the_origin_of_its_main_repository(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "https://github.com/acme/shop.git")
    gitdir = main / ".git" / "worktrees" / "feature"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    worktree = tmp_path / "feature-checkout"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n")

    assert project_id(worktree) == "acme/shop"


def test_a_worktree_with_a_relative_gitdir_is_followed(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main", "https://github.com/acme/shop.git")
    gitdir = main / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")

    assert project_id(worktree) == "acme/shop"


def test_a_worktree_of_a_repository_without_origin_uses_its_own_folder(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "main")
    gitdir = main / ".git" / "worktrees" / "wt"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n")

    assert project_id(worktree) == "wt"


def test_an_unreadable_config_falls_back_to_the_folder(tmp_path: Path) -> None:
    repo = tmp_path / "broken"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_bytes(b"\xff\xfe not [ a config")

    assert project_id(repo) == "broken"


def test_a_folder_outside_any_repository_is_its_name_plus_a_path_hash(tmp_path: Path) -> None:
    folder = tmp_path / "App"
    folder.mkdir()
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:8]

    assert project_id(folder) == f"app-{digest}"


def test_two_unrelated_folders_with_the_same_name_are_different_projects(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "one" / "app", tmp_path / "two" / "app"
    a.mkdir(parents=True)
    b.mkdir(parents=True)

    assert project_id(a) != project_id(b)
    assert project_id(a).startswith("app-") and project_id(b).startswith("app-")


def test_the_default_is_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "checkout", "https://github.com/acme/shop.git")
    monkeypatch.chdir(repo)

    assert project_id() == "acme/shop"


def test_the_project_tag() -> None:
    assert project_tag("acme/shop") == "project:acme/shop"


@pytest.mark.parametrize(
    ("project", "plain"),
    [
        ("acme/widgets", "widgets"),
        ("group/acme/widgets", "widgets"),
        ("widgets", "widgets"),
        ("notes-1a2b3c4d", "notes"),  # a folder outside any repository: name plus hash
        ("acme/tool-1a2b3c4d", "tool-1a2b3c4d"),  # a slug is never a hashed folder id
        ("notes-1a2b3c4", "notes-1a2b3c4"),  # not a whole short hash
    ],
)
def test_a_projects_plain_name_is_what_a_person_shortens_it_to(project: str, plain: str) -> None:
    assert plain_name(project) == plain


def test_the_plain_name_of_a_folder_id_is_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "Scratch"
    folder.mkdir()
    assert plain_name(project_id(folder)) == "scratch"


def test_the_briefing_line_gives_the_exact_id_its_readable_name_and_a_short_hash() -> None:
    import hashlib

    from graph.project import project_line

    digest = hashlib.sha256(b"acme/widget").hexdigest()[:8]
    assert project_line("acme/widget") == f"Project: acme/widget (widget #{digest})"
    # A folder outside git already carries its hash: the same one is shown.
    assert project_line("app-1a2b3c4d") == "Project: app-1a2b3c4d (app #1a2b3c4d)"
