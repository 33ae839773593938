"""`memesh learn`: a lesson from the command line, into the project it names (or none), printed
as JSON, with the CLI as its source host."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from graph.models import Entity

pytestmark = pytest.mark.django_db


def test_the_cli_learns_into_the_given_project_and_prints_json() -> None:
    out = StringIO()
    call_command(
        "learn",
        "--error",
        "disk full",
        "--fix",
        "Pruned logs",
        "--project",
        "a/b",
        "--json",
        stdout=out,
    )

    result = json.loads(out.getvalue())
    assert result["learned"] is True
    lesson = Entity.objects.get(name=result["name"])
    assert "project:a/b" in sorted(lesson.tags.values_list("name", flat=True))
    assert lesson.metadata["provenance"] == {"source_host": "cli"}


def test_the_cli_rejects_project_with_no_project() -> None:
    with pytest.raises(CommandError):
        call_command("learn", "--error", "e", "--fix", "f", "--project", "a", "--no-project")
