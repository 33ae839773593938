"""`memesh dream …`: the same services as REST, with --json output and exit codes."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from graph.models import Entity
from proposals.models import ProposalKind, ProposalReview
from proposals.staging import proposal_stage
from tests.fakes.llm_servers import LLMReply
from tests.helpers import remember
from tests.transcripts import PASTED_KEY, SESSION_IDS, install

pytestmark = pytest.mark.django_db


def dream(*args: str) -> str:
    out = StringIO()
    call_command("dream", *args, stdout=out)
    return out.getvalue()


def staged() -> int:
    ids = [
        remember(f"c{i}", f"commit {i}", type="commit", tags=["project:alpha"])["entityId"]
        for i in range(5)
    ]
    proposal, _ = proposal_stage(
        kind=ProposalKind.DIGEST,
        project="alpha",
        cluster_key="2026-W48",
        source_ids=ids,
        proposed={
            "name": "digest-week",
            "type": "digest",
            "observations": ["first fact", "a second fact hiding past the preview"] * 2,
            "tags": ["project:alpha"],
        },
    )
    return proposal.pk


def test_list_show_accept_with_json():
    pk = staged()

    [item] = json.loads(dream("list", "--json"))
    assert item["id"] == pk
    shown = json.loads(dream("show", str(pk), "--json"))
    assert shown["proposed_digest"]["observations"][3] == "a second fact hiding past the preview"
    assert [s["name"] for s in shown["sources"]] == [f"c{i}" for i in range(5)]
    accepted = json.loads(dream("accept", str(pk), "--json"))
    assert accepted["sourcesArchived"] == 5
    review = ProposalReview.objects.get()
    assert review.channel == "cli"
    assert review.origin  # the host name


def test_show_prints_every_observation_in_full():
    pk = staged()

    text = dream("show", str(pk))

    assert text.count("a second fact hiding past the preview") == 2
    assert "[" in text and "c0 (commit, active)" in text


def test_reject_with_reason_leaves_sources_active():
    pk = staged()

    assert "Rejected proposal" in dream("reject", str(pk), "--reason", "too vague")

    assert Entity.objects.filter(status="active").count() == 5
    assert ProposalReview.objects.get().reason == "too vague"


def test_errors_exit_1_with_the_envelope_in_json_mode():
    pk = staged()
    dream("accept", str(pk))

    out, err = StringIO(), StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("dream", "accept", str(pk), "--json", stdout=out, stderr=err)
    assert exit_info.value.code == 1
    assert json.loads(err.getvalue())["errorCode"] == "operation.failed"
    assert out.getvalue() == ""
    with pytest.raises(CommandError, match=re.escape("resource.not-found")):
        dream("show", "999")
    with pytest.raises(CommandError, match=re.escape("validation.bad-param")):
        dream("list", "--status", "bogus")
    with pytest.raises(CommandError, match="max-llm-calls"):
        dream("run", "--max-llm-calls", "50")


def test_run_dry_run_and_conflicts_dry_run_need_no_provider():
    staged()

    run = json.loads(dream("run", "--dry-run", "--json"))
    assert run["llmCalls"] == 0
    assert run["clusteringMode"] == "calendar"
    conflicts = json.loads(dream("conflicts", "--dry-run", "--json"))
    assert conflicts["candidates"] == 0
    patterns = json.loads(dream("patterns", "--dry-run", "--json"))
    assert patterns["llmCalls"] == 0


def test_run_without_a_provider_says_llm_not_configured():
    staged()

    with pytest.raises(CommandError, match=re.escape("llm.not-configured")):
        dream("run")


# --- dream run --from-transcripts ------------------------------------------------------------


@pytest.fixture
def in_project(transcript_project, monkeypatch):
    """The test's project folder as the working directory, its sessions installed."""

    install(settings.CLAUDE_CONFIG_DIR, transcript_project)
    monkeypatch.chdir(transcript_project)
    return transcript_project


def test_from_transcripts_dry_run_lists_the_sessions_and_their_turns(in_project):

    data = json.loads(dream("run", "--from-transcripts", "--dry-run", "--json"))
    text = dream("run", "--from-transcripts", "--dry-run")

    assert [(s["sessionId"], s["turns"]) for s in data["sessions"]] == [
        (SESSION_IDS["decisions"], 5),
        (SESSION_IDS["secret"], 3),
        (SESSION_IDS["duplicate"], 4),
    ]
    assert text.startswith("Dry run: 3 sessions of project-")
    assert f"{SESSION_IDS['secret']}  2026-11-21 10:00  3 turns (3 new)" in text
    assert "No LLM was called" in text


def test_from_transcripts_stages_proposals_and_reports_the_secret_it_dropped(in_project, llm):

    llm.replies.append(LLMReply(text=json.dumps({"memories": []})))
    llm.replies.append(
        LLMReply(
            text=json.dumps(
                {
                    "memories": [
                        {"type": "fact", "name": "k", "observations": [f"key {PASTED_KEY}"]},
                        {
                            "type": "decision",
                            "name": "keys-apart",
                            "observations": ["Keep keys apart."],
                        },
                    ]
                }
            )
        )
    )
    llm.replies.append(LLMReply(text=json.dumps({"memories": []})))

    text = dream("run", "--from-transcripts", "--max-llm-calls", "25")

    assert "LLM calls: 3" in text
    assert "Staged 1 proposal for review (memesh dream list):" in text
    assert (
        '"k" of 0b9d8a2e-5c1f-4a3e-9f6d-1a2b3c4d5e02: a secret in its observations (openai-key)'
        in text
    )
    assert PASTED_KEY not in text
    assert "Duplicate check did not run: no embedder is configured" in text
    [listed] = json.loads(dream("list", "--json"))
    assert (listed["kind"], listed["digest_name"]) == ("memory", "keys-apart")
    shown = dream("show", str(listed["id"]))
    assert "from session 0b9d8a2e-5c1f-4a3e-9f6d-1a2b3c4d5e02 (turns 0–3" in shown


def test_if_due_while_off_prints_why_and_exits_0(in_project, llm):
    text = dream("run", "--from-transcripts", "--if-due", "--min-interval-hours", "1")
    data = json.loads(dream("run", "--from-transcripts", "--if-due", "--json"))

    assert text.startswith("Not due: scheduled transcript mining is not enabled")
    assert data["ran"] is False
    assert llm.chat_requests() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--if-due"], "--if-due goes with --from-transcripts"),
        (["--min-interval-hours", "2"], "--min-interval-hours goes with --from-transcripts"),
        (
            ["--from-transcripts", "--project", "x"],
            "--project does not apply to --from-transcripts",
        ),
        (["--from-transcripts", "--validate"], "--validate does not apply"),
        (
            ["--from-transcripts", "--min-interval-hours", "2"],
            "--min-interval-hours goes with --if-due",
        ),
    ],
)
def test_flags_that_do_not_go_together_are_refused(in_project, args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        dream("run", *args)


def test_the_transcript_call_budget_is_bounded(in_project, llm):
    with pytest.raises(CommandError, match="max-llm-calls must be between 1 and 100"):
        dream("run", "--from-transcripts", "--max-llm-calls", "101")
