"""`memesh pin` and `memesh unpin`: the pin service (graph/ops/pin.py) from the command line,
its JSON and text output, and an unknown name that is reported, not failed."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from graph.ops.pin import is_pinned
from tests.helpers import remember, stored

pytestmark = pytest.mark.django_db


def test_the_cli_pins_and_unpins_with_json_output() -> None:
    remember("auth-decision", "Chose JWT")
    out = StringIO()

    call_command("pin", "--name", "auth-decision", "--json", stdout=out)
    assert json.loads(out.getvalue()) == {"name": "auth-decision", "pinned": True, "found": True}
    assert is_pinned(stored("auth-decision"))

    out = StringIO()
    call_command("unpin", "--name", "auth-decision", stdout=out)
    assert "Unpinned: auth-decision" in out.getvalue()
    assert not is_pinned(stored("auth-decision"))


def test_the_cli_reports_an_unknown_name_without_failing() -> None:
    out = StringIO()

    call_command("pin", "--name", "nope", stdout=out)  # raises on a non-zero exit

    assert "not found" in out.getvalue()
