"""The Stop hook finds Claude Code's files where Claude Code keeps them: under the configured
CLAUDE_CONFIG_DIR (settings), never a hard-coded `~/.claude`."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from api.hooks.payload import HookPayload
from api.hooks.stop import handle
from core.transcripts import slug
from graph.capture.note_files import NOTE_FILE_TAG
from graph.models import Entity

pytestmark = pytest.mark.django_db


def test_stop_ingests_the_note_files_of_the_configured_claude_folder(
    transcript_project: Path,
) -> None:
    notes = Path(settings.CLAUDE_CONFIG_DIR) / "projects" / slug(transcript_project) / "memory"
    notes.mkdir(parents=True)
    (notes / "deploy.md").write_text("---\nname: Deploy target\n---\n\nThe app is acme-web.\n")

    # No transcript path: the note folder is found from the working directory's slug alone.
    handle(HookPayload({"session_id": "s1", "cwd": str(transcript_project)}))

    (entity,) = Entity.objects.filter(tags__name=NOTE_FILE_TAG)
    assert entity.title == "Deploy target"
