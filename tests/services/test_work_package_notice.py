"""The SessionStart work-package notice (api/hooks/work_package_notice.py): at briefing level
`full`, when a digest or a transcript package is available, the hook's context ends with an
instruction to offer dispatching `work_package`; at other levels, or with nothing available,
there is none — and `briefing` itself never carries it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from api.hooks.payload import HookPayload
from api.hooks.session_start import handle
from api.hooks.work_package_notice import HEADING
from core.config_sections import config_update
from core.config_store import config_path
from graph.ops.briefing import build_briefing
from graph.project import project_id
from tests.dreams import commits
from tests.transcripts import install, install_gemini

pytestmark = pytest.mark.django_db


@pytest.fixture
def level() -> Iterator[object]:
    """Sets the `briefing` level in config.json; the file as it was afterwards."""
    path = config_path()
    saved = path.read_text() if path.exists() else None

    def set_level(value: str) -> None:
        config_update({"briefing": value})

    try:
        yield set_level
    finally:
        if saved is None:
            path.unlink(missing_ok=True)
        else:
            path.write_text(saved)


def session_context(cwd: Path) -> str:
    reply = handle(HookPayload({"session_id": "s1", "cwd": str(cwd)}))
    if not reply.stdout:
        return ""
    return str(json.loads(reply.stdout)["hookSpecificOutput"]["additionalContext"])


def test_at_full_the_notice_names_the_available_packages(transcript_project: Path, level) -> None:
    level("full")
    commits(5, project=project_id(transcript_project))
    commits(7, project="elsewhere")  # another project's week is not this session's to offer
    install(Path(settings.CLAUDE_CONFIG_DIR), transcript_project, "decisions")

    context = session_context(transcript_project)

    notice = context[context.index(f"[{HEADING}]") :]
    assert '"kind": "digest"' in notice and '"kind": "transcript"' in notice
    assert "a digest of 5 episodic memories" in notice
    assert "Dispatch agent task" in notice and "Later" in notice
    assert "Don't suggest again this session" in notice
    assert "cannot apply" in notice
    assert HEADING not in build_briefing(None, "full").text


def test_nothing_available_or_another_level_shows_no_notice(
    transcript_project: Path, level
) -> None:
    level("full")
    assert HEADING not in session_context(transcript_project)  # no memory, no transcript

    install(Path(settings.CLAUDE_CONFIG_DIR), transcript_project, "decisions")
    for other in ("minimal", "standard"):
        level(other)
        assert HEADING not in session_context(transcript_project)
    level("full")
    assert HEADING in session_context(transcript_project)


def test_a_gemini_cli_session_of_the_workspace_is_offered_too(
    transcript_project: Path, level
) -> None:
    level("full")
    install_gemini(Path(settings.GEMINI_DIR), transcript_project / "docs")

    context = session_context(transcript_project)

    notice = context[context.index(f"[{HEADING}]") :]
    assert "the newest agent session of this workspace" in notice
    assert '"kind": "transcript"' in notice and '"kind": "digest"' not in notice
