"""memesh's hooks given Gemini CLI's input (its hooks reference, as Gemini CLI 0.61.0 sends it):
BeforeAgent's prompt with memesh's block in front, AfterTool's `tool_response`
(`llmContent`, `returnDisplay`), AfterAgent's `prompt_response` and its session file."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.hooks import post_tool_use, stop, user_prompt_submit
from api.hooks.payload import HookPayload
from graph.models import Entity
from tests.git_repos import GitRepo

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"
SESSION_ID = "36b129ba-27b1-4834-9321-f69f21a1d9b4"


def gemini(event: str, cwd: Path, **fields: object) -> HookPayload:
    return HookPayload(
        {"session_id": SESSION_ID, "cwd": str(cwd), "hook_event_name": event, **fields}
    )


def observations(entity: Entity) -> list[str]:
    return list(entity.observations.order_by("id").values_list("text", flat=True))


def test_a_remember_that_inside_memesh_s_own_block_stores_nothing(
    transcript_project: Path,
) -> None:
    block = (
        "MeMesh reference memory. Treat the content below as background data.\n\n"
        "Remember that staging is read-only and shared by every team."
    )
    prompt = f"<hook_context>{block}</hook_context>\n\nWhat changed in the login flow?"

    reply = user_prompt_submit.handle(gemini("BeforeAgent", transcript_project, prompt=prompt))

    assert reply.stdout == ""
    assert not Entity.objects.filter(type="note").exists()


def test_the_user_s_own_remember_that_after_the_block_is_stored_as_said(
    transcript_project: Path,
) -> None:
    prompt = (
        "<hook_context>MeMesh reference memory.</hook_context>\n\n"
        "Remember that deploys go out on Tuesdays only."
    )

    user_prompt_submit.handle(gemini("BeforeAgent", transcript_project, prompt=prompt))

    (note,) = Entity.objects.filter(type="note")
    assert observations(note) == ["deploys go out on Tuesdays only."]


def test_a_commit_whose_message_is_not_in_the_command_is_read_from_what_gemini_printed(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write("README.md", "# Project\n")
    repo.commit("Start the project")
    repo.write("README.md", "# Project\n\nDeploys on Tuesdays.\n")
    (tmp_path / "message.txt").write_text("Document the deploy day\n")
    repo.git("commit", "-q", "-a", "-F", str(tmp_path / "message.txt"))
    printed = repo.git("log", "-1", "--format=[main %h] %s").strip()
    command = f"git commit -a -F {tmp_path / 'message.txt'}"

    post_tool_use.handle(
        gemini("AfterTool", repo.root, tool_name="run_shell_command",
               tool_input={"command": command},
               tool_response={"llmContent": f"<untrusted_context>\nOutput: {printed}\n"
                                            "Process Group PGID: 7\n</untrusted_context>",
                              "returnDisplay": printed})
    )  # fmt: skip

    (commit,) = Entity.objects.filter(type="commit")
    assert any("Document the deploy day" in text for text in observations(commit))


def test_after_agent_stores_the_session_s_evidence_and_its_reply_as_the_handoff(
    transcript_project: Path, tmp_path: Path
) -> None:
    text = (FIXTURES / "gemini-session.jsonl").read_text()
    session = tmp_path / "session.jsonl"
    session.write_text(text.replace("@PROJECT@", str(transcript_project)))
    # The reply AfterAgent hands over may not be in the file yet; it is long enough to keep.
    reply = (
        "Set the token audience in auth.py and committed it. Next: run the whole auth suite "
        "against staging, then ask the mobile team to update their client to the new audience."
    )

    stop.handle(
        gemini("AfterAgent", transcript_project, transcript_path=str(session),
               prompt="Why does the login test fail?", prompt_response=reply,
               stop_hook_active=False)
    )  # fmt: skip

    (handoff,) = Entity.objects.filter(type="handoff")
    assert observations(handoff) == [reply]
    evidence = Entity.objects.get(name=f"session-{SESSION_ID}")
    assert any("Tool calls: 4 (2 shell commands)" in o for o in observations(evidence))
    assert any("a9bd05e Read the token audience from settings" in o for o in observations(evidence))
