"""`memesh patterns`: the user_patterns operation from the command line, as JSON (scoped to the
working directory's project) or as Markdown."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from graph.project import project_id
from tests.helpers import remember

pytestmark = pytest.mark.django_db


def test_the_cli_prints_json_or_markdown() -> None:
    remember("d", "x", type="decision")
    out = StringIO()
    call_command("patterns", "--json", "--category", "focusAreas", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed.pop("scope")["project"] == project_id()  # the working directory's project
    assert printed == {"focusAreas": [{"type": "decision", "count": 1}]}

    out = StringIO()
    call_command("patterns", stdout=out)
    assert out.getvalue().startswith("# User work patterns")
