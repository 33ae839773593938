"""The project scope over /v1 and the CLI: REST binds no project (one server serves many
repositories) unless the request names one, the CLI binds its working directory's, and a bad
`project` or `cross_project` is a 400 with a stable code, never a 500."""

from __future__ import annotations

import json
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.helpers import remember
from tests.rest import assert_error, assert_ok, post_json

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_projects() -> None:
    remember("a", "deploy alpha", tags=["project:acme/alpha"])
    remember("b", "deploy beta", tags=["project:acme/beta"])
    remember("loose", "deploy anywhere")


def names(data: dict) -> list[str]:
    return sorted(e["name"] for e in data["entities"])


@pytest.mark.usefixtures("two_projects")
def test_rest_recall_is_unbound_until_the_request_names_a_project(client) -> None:
    unbound = assert_ok(post_json(client, "recall", {"query": "deploy"}))
    assert names(unbound) == ["a", "b", "loose"]
    assert unbound["scope"] == {
        "project": None,
        "all_projects": True,
        "no_project": True,
        "global": True,
    }
    bound = assert_ok(post_json(client, "recall", {"query": "deploy", "project": "acme/beta"}))
    assert names(bound) == ["b", "loose"]


@pytest.mark.parametrize(
    "body",
    [
        {"project": ""},
        {"project": "  "},
        {"project": True},
        {"project": False},  # recall reads a project; `false` files writes only
        {"project": "x" * 300},
        {"cross_project": "yes"},
    ],
)
def test_a_bad_project_is_a_bad_body(client, body) -> None:
    response = post_json(client, "recall", {"query": "deploy", **body})
    assert_error(response, 400, "validation.bad-body")
    assert json.loads(response.content)["field"] == next(iter(body))


@pytest.mark.usefixtures("two_projects")
def test_patterns_read_project_and_cross_project_from_the_query_string(client) -> None:
    scoped = assert_ok(client.get("/v1/patterns", {"project": "acme/alpha"}))
    assert scoped["focusAreas"] == [{"type": "note", "count": 2}]
    assert scoped["scope"]["project"] == "acme/alpha"
    for value in ("true", "1", "True"):
        lifted = assert_ok(
            client.get("/v1/patterns", {"project": "acme/alpha", "cross_project": value})
        )
        assert lifted["focusAreas"] == [{"type": "note", "count": 3}]
    assert_ok(client.get("/v1/patterns", {"cross_project": "false"}))
    assert_error(
        client.get("/v1/patterns", {"cross_project": "maybe"}), 400, "validation.bad-param"
    )


@pytest.mark.usefixtures("two_projects")
def test_the_cli_binds_the_working_directorys_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "beta"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, timeout=60)
    subprocess.run(
        ["git", "remote", "add", "origin", "https://github.com/acme/beta.git"],
        cwd=repo,
        check=True,
        timeout=60,
    )
    monkeypatch.chdir(repo)

    def recall(*args: str) -> dict:
        out = StringIO()
        call_command("recall", "deploy", "--json", *args, stdout=out)
        return json.loads(out.getvalue())

    assert names(recall()) == ["b", "loose"]
    assert recall()["scope"]["project"] == "acme/beta"
    assert names(recall("--cross-project")) == ["a", "b", "loose"]
    assert names(recall("--project", "acme/alpha")) == ["a", "loose"]

    text = StringIO()
    call_command("recall", "deploy", stdout=text)
    assert "(searched project acme/beta, memories with no project and global ones" in (
        text.getvalue()
    )
    out = StringIO()
    call_command("export", stdout=out)
    assert sorted(e["name"] for e in json.loads(out.getvalue())["entities"]) == ["b", "loose"]
