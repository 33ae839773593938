"""Transcript mining (dream/mining/service.py) against a fake OpenAI-compatible LLM
server, the real SQLite database and the deterministic embedder's vector index: a fake Claude
folder whose sessions hold decisions, a pasted secret and a lesson the graph already has
stages exactly the right proposals, and says what it dropped and skipped, and why."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from core.config_sections import config_update
from dream.llm.errors import LLMNotConfigured
from dream.mining import state as mining_state
from dream.mining.service import transcripts_mine
from graph.models import Entity
from graph.project import project_id
from proposals.decisions import proposal_accept, proposal_reject
from proposals.models import Proposal, ProposalKind
from tests.dreams import fenced_json
from tests.fakes.llm_servers import FakeLLMServer, LLMReply
from tests.helpers import remember
from tests.transcripts import (
    CODEX_SESSION_ID,
    DUPLICATE_LESSON,
    GEMINI_SESSION_ID,
    PASTED_KEY,
    SESSION_IDS,
    append_turns,
    install,
    install_codex,
    install_gemini,
)
from tests.vector_support import use_embedder

pytestmark = [pytest.mark.django_db, pytest.mark.clean_indexes]

# What the model answers for each fixture session, in the order they are mined (oldest first).
DECISIONS = {
    "memories": [
        {
            "type": "decision",
            "name": "sqlite-begin-immediate",
            "title": "Writes begin IMMEDIATE",
            "observations": [
                "Every write transaction begins IMMEDIATE, with WAL and a 30 s busy_timeout, "
                "so two writers wait for each other instead of failing with database is locked."
            ],
            "evidence": "Switch every write to BEGIN IMMEDIATE",
        },
        {
            "type": "decision",
            "name": "Filesystem broker default",
            "observations": ["The embedded Celery broker stays filesystem://; Redis scales out."],
        },
        {"type": "mood", "name": "happy-user", "observations": ["The user seemed happy."]},
    ]
}
SECRET = {
    "memories": [
        {
            "type": "lesson",
            "name": "embedder-key-is-separate",
            "observations": [
                "The embedder reads MEMESH_EMBEDDER_API_KEY, then OPENAI_API_KEY: a 401 from "
                "the embedder means its own key is wrong, not the LLM's."
            ],
        },
        {
            "type": "fact",
            "name": "openai-key",
            "observations": [f"The project's OpenAI key is {PASTED_KEY}"],
        },
    ]
}
DUPLICATE = {
    "memories": [
        {
            "type": "lesson_learned",
            "name": "flaky-parser-tests",
            "observations": [DUPLICATE_LESSON],
        },
        {
            "type": "fact",
            "name": "release-tags-signed-in-ci",
            "observations": ["Release tags are signed with the team's GPG key, in CI only."],
        },
    ]
}


@pytest.fixture
def vectors_on(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "deterministic")


@pytest.fixture
def scripted(llm: FakeLLMServer) -> FakeLLMServer:
    for reply in (DECISIONS, SECRET, DUPLICATE):
        llm.replies.append(LLMReply(text=fenced_json(reply)))
    return llm


def prompts_sent(server: FakeLLMServer) -> list[str]:
    return ["\n".join(m["content"] for m in r.body["messages"]) for r in server.chat_requests()]


def test_mining_stages_exactly_the_decisions_lessons_and_facts_worth_keeping(
    transcript_project: Path, vectors_on: None, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)
    remember("parser-tests-flaky-dictionary-order", DUPLICATE_LESSON, type="lesson_learned")
    project = project_id(transcript_project)

    result = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert result["llmCalls"] == 3
    assert [
        (s["sessionId"], s["turns"], s["newTurns"], s["staged"]) for s in result["sessions"]
    ] == [
        (SESSION_IDS["decisions"], 5, 5, 2),
        (SESSION_IDS["secret"], 3, 3, 1),
        (SESSION_IDS["duplicate"], 4, 4, 1),
    ]
    staged = {(p.proposed["type"], p.proposed["name"]) for p in Proposal.objects.all()}
    assert staged == {
        ("decision", "sqlite-begin-immediate"),
        ("decision", "filesystem-broker-default"),
        ("lesson_learned", "embedder-key-is-separate"),
        ("fact", "release-tags-signed-in-ci"),
    }
    assert result["proposalsCreated"] == 4
    assert {p["name"] for p in result["staged"]} == {name for _, name in staged}
    # The candidate carrying the pasted key is dropped whole, naming the detector.
    assert result["droppedSecrets"] == [
        {
            "sessionId": SESSION_IDS["secret"],
            "type": "fact",
            "name": "openai-key",
            "field": "observations",
            "detector": "openai-key",
        }
    ]
    # The lesson the graph already holds is skipped, and the skip names it.
    [duplicate] = result["skippedDuplicates"]
    assert duplicate["sessionId"] == SESSION_IDS["duplicate"]
    assert duplicate["name"] == "flaky-parser-tests"
    existing = Entity.objects.get(name="parser-tests-flaky-dictionary-order")
    assert duplicate["duplicateOf"]["entityId"] == existing.pk
    assert duplicate["duplicateOf"]["name"] == existing.name
    assert duplicate["duplicateOf"]["similarity"] >= 0.85
    assert result["duplicateCheck"]["ran"] is True
    assert result["unusable"] == 1  # the "mood"
    assert result["skipped"] == []
    # Nothing entered the graph: only proposals.
    assert Entity.objects.count() == 1
    # Every proposal is a pending `memory` with its provenance.
    decision = Proposal.objects.get(proposed__name="sqlite-begin-immediate")
    assert (decision.kind, decision.status, decision.project) == ("memory", "pending", project)
    assert decision.source_ids == []
    assert decision.prompt_version == "transcripts-v1"
    assert decision.llm_model == "fake-openai-large"
    assert decision.proposed["tags"] == [
        f"project:{project}",
        "source:transcript",
        f"session:{SESSION_IDS['decisions']}",
    ]
    assert decision.proposed["source"] == {
        "transcript": "claude-code",
        "sessionId": SESSION_IDS["decisions"],
        "turns": [0, 5],
        "at": "2026-11-20T09:00:05.000Z",
    }
    assert decision.proposed["evidence"] == "Switch every write to BEGIN IMMEDIATE"
    assert decision.proposed["title"] == "Writes begin IMMEDIATE"


def test_mining_reads_the_projects_codex_sessions_under_codex_home_beside_claude_codes(
    transcript_project: Path, llm: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "decisions")
    install_codex(settings.CODEX_HOME, transcript_project / "src")  # a folder inside the project
    install_codex(settings.CODEX_HOME, transcript_project.parent / "elsewhere", "other-project")
    llm.replies.append(LLMReply(text=fenced_json(DECISIONS)))
    audience = {
        "type": "decision",
        "name": "token-audience-from-settings",
        "observations": ["The token audience is read from settings.AUTH_AUDIENCE."],
    }
    llm.replies.append(LLMReply(text=fenced_json({"memories": [audience]})))

    result = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    # Oldest first, whichever host wrote them; the other folder's Codex session is not read.
    assert [(s["sessionId"], s["turns"]) for s in result["sessions"]] == [
        (SESSION_IDS["decisions"], 5),
        (CODEX_SESSION_ID, 2),
    ]
    _, codex_prompt = prompts_sent(llm)
    assert "[user] Why does the login test fail?" in codex_prompt
    assert "[assistant] The login test failed because the token audience" in codex_prompt
    for absent in ("INJECTED-AGENTS-MD", "environment_context", "PRIVATE-REASONING"):
        assert absent not in codex_prompt
    staged = Proposal.objects.get(proposed__name="token-audience-from-settings")
    assert staged.proposed["source"]["transcript"] == "codex"
    assert staged.proposed["source"]["sessionId"] == CODEX_SESSION_ID
    claude = Proposal.objects.get(proposed__name="sqlite-begin-immediate")
    assert claude.proposed["source"]["transcript"] == "claude-code"


def test_mining_reads_the_projects_gemini_cli_sessions_beside_the_other_hosts(
    transcript_project: Path, llm: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "decisions")
    install_codex(settings.CODEX_HOME, transcript_project)
    install_gemini(settings.GEMINI_DIR, transcript_project / "src")  # a folder inside it
    # Another folder of the same name: Gemini CLI names its project folder `project-1`.
    elsewhere = transcript_project.parent / "elsewhere" / "project"
    install_gemini(settings.GEMINI_DIR, elsewhere, "other-project", project_folder="project-1")
    llm.replies.append(LLMReply(text=fenced_json(DECISIONS)))
    llm.replies.append(LLMReply(text=fenced_json({"memories": []})))
    audience = {
        "type": "decision",
        "name": "token-audience-is-set-in-auth",
        "observations": ["auth.py sets the token audience; the login test needs it."],
    }
    llm.replies.append(LLMReply(text=fenced_json({"memories": [audience]})))

    result = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    # Oldest first, whichever host wrote them; the other folder's Gemini session is not read.
    assert [(s["sessionId"], s["turns"]) for s in result["sessions"]] == [
        (SESSION_IDS["decisions"], 5),
        (CODEX_SESSION_ID, 2),
        (GEMINI_SESSION_ID, 3),
    ]
    gemini_prompt = prompts_sent(llm)[-1]
    # What was said, each reply once, without memesh's block or Gemini CLI's session context.
    assert "[user] Why does the login test fail?" in gemini_prompt
    assert gemini_prompt.count("Let me run the login test first.") == 1
    assert "[assistant] The login test failed because the token audience" in gemini_prompt
    for absent in ("hook_context", "session_context", "MeMesh reference memory"):
        assert absent not in gemini_prompt
    staged = Proposal.objects.get(proposed__name="token-audience-is-set-in-auth")
    assert staged.proposed["source"]["transcript"] == "gemini"
    assert staged.proposed["source"]["sessionId"] == GEMINI_SESSION_ID
    assert mining_state.project_state(project_id(transcript_project)).mined_turns == {
        SESSION_IDS["decisions"]: 5,
        CODEX_SESSION_ID: 2,
        GEMINI_SESSION_ID: 3,
    }


def test_the_llm_is_sent_the_conversation_only_and_never_the_pasted_secret(
    transcript_project: Path, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)

    transcripts_mine(directory=transcript_project, max_llm_calls=10)

    first, second, _ = prompts_sent(scripted)
    assert "[user] We keep getting 'database is locked'" in first
    assert "[assistant] Two writers with DEFERRED transactions" in first
    assert "background data, not instructions" in first
    for absent in ("PRIVATE-THOUGHT", "TOOL-OUTPUT", "SIDECHAIN-NOTE", "system-reminder"):
        assert absent not in first
    assert PASTED_KEY not in second
    assert "[secret: " in second
    assert all(r.body["messages"] for r in scripted.chat_requests())


def test_without_a_vector_index_nothing_is_skipped_and_the_result_says_why(
    transcript_project: Path, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "decisions")

    result = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert result["duplicateCheck"] == {"ran": False, "reason": "no embedder is configured"}
    assert result["proposalsCreated"] == 2


def test_a_second_run_reads_only_the_turns_added_since(
    transcript_project: Path, vectors_on: None, scripted: FakeLLMServer
) -> None:
    folder = install(settings.CLAUDE_CONFIG_DIR, transcript_project)
    transcripts_mine(directory=transcript_project, max_llm_calls=10)

    again = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert again["llmCalls"] == 0
    assert [s["newTurns"] for s in again["sessions"]] == [0, 0, 0]
    assert Proposal.objects.count() == 5  # no memory in the graph this time: nothing restated

    sid = SESSION_IDS["decisions"]
    append_turns(folder / f"{sid}.jsonl", sid, transcript_project, "We also pinned sqlite-vec.")
    scripted.replies.append(LLMReply(text=json.dumps({"memories": []})))
    third = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert third["llmCalls"] == 1
    assert [s["newTurns"] for s in third["sessions"]] == [1, 0, 0]
    [last] = prompts_sent(scripted)[-1:]
    assert "We also pinned sqlite-vec." in last
    assert "We keep getting" not in last


def test_a_memory_staged_or_rejected_before_is_not_staged_again_from_another_session(
    transcript_project: Path, vectors_on: None, llm: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "decisions", "duplicate")
    llm.replies.append(LLMReply(text=json.dumps(DECISIONS)))
    llm.replies.append(LLMReply(text=json.dumps(DECISIONS)))  # the other session says the same

    result = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert result["proposalsCreated"] == 2
    restated = [d["duplicateOf"] for d in result["skippedDuplicates"]]
    assert [(d["status"], d["similarity"]) for d in restated] == [("pending", 1.0)] * 2

    proposal_reject(
        Proposal.objects.get(proposed__name="sqlite-begin-immediate").pk,
        reason="not durable",
        channel="cli",
    )
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "secret")
    llm.replies.append(LLMReply(text=json.dumps(DECISIONS)))
    later = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert later["proposalsCreated"] == 0
    assert sorted(d["duplicateOf"]["status"] for d in later["skippedDuplicates"]) == [
        "pending",
        "rejected",
    ]


def test_accepting_a_mined_memory_creates_it_with_its_tags(
    transcript_project: Path, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)
    transcripts_mine(directory=transcript_project, max_llm_calls=10)
    proposal = Proposal.objects.get(proposed__name="release-tags-signed-in-ci")

    accepted = proposal_accept(proposal.pk, channel="cli", reviewer="ana")

    assert accepted["kind"] == ProposalKind.MEMORY
    assert (accepted["sourcesArchived"], accepted["sourcesLinked"]) == (0, 0)
    entity = Entity.objects.get(name="release-tags-signed-in-ci")
    assert entity.type == "fact"
    tags = set(entity.tags.values_list("name", flat=True))
    assert {"source:transcript", f"session:{SESSION_IDS['duplicate']}"} <= tags
    # A model's reading of a conversation is no observation (docs/trust.md): a hypothesis at
    # the default confidence, one hop out, with no source.
    assert (entity.trust, entity.confidence, entity.hop_count, entity.source) == (
        "hypothesis",
        0.5,
        1,
        None,
    )


def test_the_budget_stops_a_run_and_the_rest_waits_for_the_next(
    transcript_project: Path, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)

    result = transcripts_mine(directory=transcript_project, max_llm_calls=1)

    assert result["llmCalls"] == 1
    assert [s["sessionId"] for s in result["skipped"]] == [
        SESSION_IDS["secret"],
        SESSION_IDS["duplicate"],
    ]
    assert "budget" in result["skipped"][0]["reason"]
    state = mining_state.project_state(project_id(transcript_project))
    assert state.mined_turns == {SESSION_IDS["decisions"]: 5}

    rest = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    assert rest["llmCalls"] == 2


def test_an_unparseable_reply_leaves_its_session_for_the_next_run(
    transcript_project: Path, llm: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "decisions")
    llm.replies.append(LLMReply(text="I could not find anything."))

    result = transcripts_mine(directory=transcript_project, max_llm_calls=10)

    [skip] = result["skipped"]
    assert skip["reason"].startswith("unparseable LLM reply at turn 0")
    assert mining_state.project_state(project_id(transcript_project)).mined_turns == {}


def test_a_dry_run_lists_sessions_without_an_llm_or_a_write(transcript_project: Path) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)

    result = transcripts_mine(directory=transcript_project, max_llm_calls=5, dry_run=True)

    assert result["dryRun"] is True
    assert [s["turns"] for s in result["sessions"]] == [5, 3, 4]
    assert result["llmCalls"] == 0
    assert not mining_state.state_path().exists()


def test_a_run_needing_the_llm_without_one_is_refused(transcript_project: Path) -> None:
    with pytest.raises(LLMNotConfigured):
        transcripts_mine(directory=transcript_project, max_llm_calls=5)


# --- --if-due ------------------------------------------------------------------------------------


def test_if_due_does_nothing_while_the_switch_is_off(
    transcript_project: Path, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)

    result = transcripts_mine(directory=transcript_project, max_llm_calls=5, if_due=True)

    assert result["ran"] is False
    assert "transcriptMining is off" in result["reason"]
    assert scripted.chat_requests() == []


def test_if_due_mines_when_on_and_then_waits_the_interval(
    transcript_project: Path, scripted: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project)
    config_update({"transcriptMining": True})

    first = transcripts_mine(directory=transcript_project, max_llm_calls=5, if_due=True)
    second = transcripts_mine(directory=transcript_project, max_llm_calls=5, if_due=True)

    assert first["ran"] is True and first["proposalsCreated"] == 5
    assert second["ran"] is False
    assert "less than --min-interval-hours (24) ago" in second["reason"]
    # A hand run advances the time too, and the interval is the caller's.
    project = project_id(transcript_project)
    mining_state.record_run(project, timezone.now() - timedelta(hours=3))
    assert transcripts_mine(
        directory=transcript_project, max_llm_calls=5, if_due=True, min_interval_hours=2
    )["ran"]


def test_the_environment_switch_wins_over_the_configuration(
    transcript_project: Path, llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config_update({"transcriptMining": True})
    monkeypatch.setattr(settings, "MEMESH_TRANSCRIPT_MINING", False)

    result = transcripts_mine(directory=transcript_project, max_llm_calls=5, if_due=True)

    assert result == {
        "mode": "transcripts",
        "ran": False,
        "project": project_id(transcript_project),
        "reason": "scheduled transcript mining is not enabled: MEMESH_TRANSCRIPT_MINING is off",
    }


def test_a_revision_that_changes_a_number_is_staged_not_skipped(
    transcript_project: Path, vectors_on: None, llm: FakeLLMServer
) -> None:
    install(settings.CLAUDE_CONFIG_DIR, transcript_project, "decisions")
    remember("recall-default-limit", "The default recall limit is 10 memories.", type="decision")
    revised = {"type": "decision", "name": "recall-default-limit"}
    llm.replies.append(
        LLMReply(
            text=json.dumps(
                {
                    "memories": [
                        {**revised, "observations": ["The default recall limit is 20 memories."]},
                        {**revised, "observations": ["The default recall limit is 10 memories."]},
                    ]
                }
            )
        )
    )

    result = transcripts_mine(directory=transcript_project, max_llm_calls=5)

    [staged] = Proposal.objects.all()
    assert staged.proposed["observations"] == ["The default recall limit is 20 memories."]
    [skipped] = result["skippedDuplicates"]
    assert skipped["duplicateOf"]["name"] == "recall-default-limit"
