"""`memesh export` and `memesh import`: a bundle round trip through a file, and the refusals and
exit status of an import whose file is cut short, nested too deep or partly invalid — before
anything is written."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from core.json_limits import MAX_JSON_DEPTH
from graph.models import Entity
from tests.bundles import entry, seed, wipe

pytestmark = pytest.mark.django_db


def test_the_cli_round_trips_a_bundle_through_a_file(tmp_path: Path) -> None:
    seed()
    out = StringIO()
    call_command("export", "--cross-project", stdout=out)
    bundle = json.loads(out.getvalue())
    assert bundle["entity_count"] == 3
    path = tmp_path / "bundle.json"
    path.write_text(out.getvalue())
    wipe()

    result_out = StringIO()
    call_command("import", str(path), "--merge", "skip", "--json", stdout=result_out)

    result = json.loads(result_out.getvalue())
    assert result["imported"] == 3 and result["relations"] == 1
    again = StringIO()
    call_command(
        "export", "--cross-project", "--output", str(tmp_path / "again.json"), stdout=again
    )
    assert json.loads((tmp_path / "again.json").read_text())["entities"] == bundle["entities"]
    created = Entity.objects.get(name="auth-decision").metadata
    assert created["provenance"]["source_host"] == "cli"


def test_the_cli_refuses_a_truncated_file_before_writing_anything(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    good = json.dumps({"version": "3.0.0", "entities": [entry("a", "x"), entry("b", "y")]})
    path.write_text(good[: len(good) - 30])
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit):
        call_command("import", str(path), "--json", stdout=out, stderr=err)
    assert json.loads(err.getvalue())["errorCode"] == "validation.bad-body"
    assert out.getvalue() == ""
    assert not Entity.objects.exists()


def test_the_cli_refuses_a_file_nested_past_the_limit_before_writing_anything(
    tmp_path: Path,
) -> None:
    path = tmp_path / "deep.json"
    deep = '{"v": ' * 100_000 + "{}" + "}" * 100_000  # json.dumps of it would recurse out
    good = json.dumps({"entities": [entry("a", "x"), entry("b", "y", replaced_history=["@"])]})
    path.write_text(good.replace('"@"', deep))
    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit):
        call_command("import", str(path), "--json", stdout=out, stderr=err)
    error = json.loads(err.getvalue())
    assert error["errorCode"] == "validation.bad-body"
    assert f"deeper than {MAX_JSON_DEPTH} levels" in error["error"]
    assert out.getvalue() == ""
    assert not Entity.objects.exists()


def test_the_cli_exits_1_and_lists_the_errors_of_a_partial_import(tmp_path: Path) -> None:
    path = tmp_path / "partial.json"
    path.write_text(json.dumps({"entities": [entry("ok", "x"), {"name": "bad"}]}))
    out = StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("import", str(path), stdout=out)
    assert exit_info.value.code == 1
    assert "Imported 1" in out.getvalue() and 'entities[1] "bad"' in out.getvalue()
    assert Entity.objects.filter(name="ok").exists()
