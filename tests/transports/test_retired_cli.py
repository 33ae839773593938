"""`memesh consolidate` and `memesh verify`: retired, like their REST routes (410), so each
prints where to go instead and exits 1 — whatever arguments an old script passes."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.processes import memesh_env, run_python


@pytest.mark.parametrize(
    ("command", "pointer"),
    [("consolidate", "`memesh dream run`"), ("verify", "`memesh recall`")],
)
def test_the_command_names_what_to_use_instead(command: str, pointer: str) -> None:
    with pytest.raises(CommandError) as exc:
        call_command(command, stdout=StringIO(), stderr=StringIO())
    message = str(exc.value)
    assert pointer in message
    assert f"memesh {command} was removed" in message or f"memesh {command} was retired" in message


@pytest.mark.parametrize(
    ("command", "replacement"), [("consolidate", "memesh dream run"), ("verify", None)]
)
def test_json_is_the_retired_envelope_on_stderr(command: str, replacement: str | None) -> None:
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exc:
        call_command(command, "--json", stdout=out, stderr=err)

    assert exc.value.code == 1 and out.getvalue() == ""
    failure = json.loads(err.getvalue())
    assert failure["success"] is False and failure["errorCode"] == "route.retired"
    assert failure["replacement"] == replacement


def test_in_their_own_processes_they_exit_1_even_with_old_arguments(tmp_path: Path) -> None:
    env = memesh_env(tmp_path / "home")

    consolidate = run_python(
        ["-m", "memesh_site.cli", "consolidate", "--name", "auth", "--json"], env
    )
    verify = run_python(["-m", "memesh_site.cli", "verify", "some-claim"], env)

    assert consolidate.returncode == 1 and consolidate.stdout == ""
    assert json.loads(consolidate.stderr)["replacement"] == "memesh dream run"
    assert verify.returncode == 1 and verify.stdout == ""
    assert "retired" in verify.stderr and "`memesh recall`" in verify.stderr
    # Nothing was opened: no database was created for a command that needs none.
    assert not (tmp_path / "home" / "knowledge-graph.db").exists()
