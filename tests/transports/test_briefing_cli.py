"""`memesh briefing` from the command line: the block or JSON for a project (by default the
working directory's), --index, the `briefing` level setting and the precedence of --level over
it, and the exit codes (docs/operations.md)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from core.fence import MEMORY_PREAMBLE
from graph.models import Entity
from graph.project import project_id
from tests.helpers import remember
from tests.processes import memesh_env, run_python

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("home")]

P = "acme/app"
TAG = f"project:{P}"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("briefing", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def failing(*args: str) -> tuple[int, dict[str, Any]]:
    """(exit status, the failure envelope on stderr) of a command that must fail."""
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command("briefing", *args, "--json", stdout=out, stderr=err)
    assert out.getvalue() == ""
    return int(exc.value.code or 0), json.loads(err.getvalue())


def test_cli_prints_the_block_or_json_for_the_named_project() -> None:
    remember("ours", "our fact", tags=[TAG], source="test fixture")  # a fact, not a hypothesis

    out = StringIO()
    call_command("briefing", "--project", P, "--json", "--level", "standard", stdout=out)
    data = json.loads(out.getvalue())
    assert data["project"] == P and data["level"] == "standard" and data["entityCount"] == 1

    plain = StringIO()
    call_command("briefing", "--project", P, stdout=plain)
    assert plain.getvalue().startswith(MEMORY_PREAMBLE) and "our fact" in plain.getvalue()


def test_cli_defaults_to_the_working_directorys_project() -> None:
    out = StringIO()
    call_command("briefing", "--json", stdout=out, stderr=StringIO())
    assert json.loads(out.getvalue())["project"] == project_id()


def test_index_prints_only_the_fenced_index_with_handles() -> None:
    remember("fact", "The cache lives in /var/cache/app", tags=[TAG], source="ops/README")
    remember("commit", "fix typo", type="commit", tags=[TAG])
    handle = f"[mem:{Entity.objects.get(name='fact').id}]"

    text, _ = run("--index", "--project", P)
    data = json.loads(run("--index", "--project", P, "--json")[0])

    assert text.startswith(MEMORY_PREAMBLE)
    assert f"- [note] The cache lives in /var/cache/app {handle}" in text
    assert "fix typo" not in text and "Decisions and direction" not in text
    assert data == {"project": P, "text": text.rstrip("\n"), "entityCount": 1, "truncated": False}


def test_index_of_a_project_with_nothing_durable_says_so_on_stderr_and_exits_0() -> None:
    out, err = run("--index", "--project", "nobody/knows")

    assert out == "" and "No durable memories to index for project nobody/knows" in err


def test_index_with_level_is_a_usage_error_and_with_input_a_bad_body() -> None:
    with pytest.raises(CommandError, match="not allowed with argument"):
        run("--index", "--level", "full")

    code, failure = failing("--index", "--input", "{}")
    assert code == 1 and failure["errorCode"] == "validation.bad-body"
    assert failure["field"] == "index"
    code, failure = failing("--index", "--project", " ")
    assert code == 1 and failure["errorCode"] == "validation.bad-body"


def test_the_setting_picks_the_level_and_level_overrides_it() -> None:
    remember("fact", "our fact", tags=[TAG])
    call_command("config", "set", "briefing", "full", stdout=StringIO())

    assert json.loads(run("--project", P, "--json")[0])["level"] == "full"
    assert json.loads(run("--project", P, "--level", "minimal", "--json")[0])["level"] == "minimal"


def test_a_stored_level_that_is_no_level_exits_1_naming_the_setting(home: Path) -> None:
    (home / "config.json").write_text(json.dumps({"briefing": "everything"}))

    code, failure = failing("--project", P)

    assert code == 1
    assert failure["errorCode"] == "operation.failed" and failure["field"] == "briefing"
    assert "memesh config set briefing" in failure["error"]


def test_the_commands_in_their_own_processes(tmp_path: Path) -> None:
    env = memesh_env(tmp_path / "home")
    cli = ["-m", "memesh_site.cli"]

    stored = run_python(
        [*cli, "remember", "--name", "fact", "--type", "note", "--obs", "our fact", "--tag", TAG],
        env,
    )
    assert stored.returncode == 0, stored.stderr
    assert run_python([*cli, "config", "set", "briefing", "standard"], env).returncode == 0

    briefed = run_python([*cli, "briefing", "--project", P, "--json"], env)
    assert briefed.returncode == 0, briefed.stderr
    assert json.loads(briefed.stdout)["level"] == "standard"

    index = run_python([*cli, "briefing", "--index", "--project", P, "--json"], env)
    assert index.returncode == 0, index.stderr
    assert json.loads(index.stdout)["entityCount"] == 1

    usage = run_python([*cli, "briefing", "--index", "--level", "full"], env)
    assert usage.returncode == 2 and "not allowed with argument" in usage.stderr

    bad = run_python([*cli, "config", "set", "briefing", "huge"], env)
    assert bad.returncode == 1 and "briefing" in bad.stderr
