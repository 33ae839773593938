"""The pattern detector and the conflict judge against a real loopback LLM server: evidence
limited to what the model was shown, candidate pairs from the vector index, verdict handling."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from dream.conflicts import conflict_candidates, dream_conflicts
from dream.patterns import dream_patterns
from graph.indexing import embedding_pass
from graph.models import Entity
from proposals.decisions import proposal_accept, proposal_reject
from proposals.models import JudgedPair, Proposal, ProposalKind
from tests.dreams import CODE_RUN, bare_json, fenced_json, llm_provider
from tests.fakes.llm_servers import FakeLLMServer, LLMReply
from tests.helpers import remember
from tests.vector_support import use_embedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(kind="anthropic", api_key="sk-ant-test-123") as server, llm_provider(server):
        yield server


def ids(*names: str) -> list[int]:
    found = dict(Entity.objects.filter(name__in=names).values_list("name", "id"))
    return [found[n] for n in names]


# --- patterns ---------------------------------------------------------------------------------


def test_pattern_evidence_is_limited_to_memories_the_model_was_shown(llm):
    for i in range(6):
        remember(f"n{i}", f"debugged a timeout in the worker {i}", tags=["project:alpha"])
    remember("elsewhere", "not shown: another project", tags=["project:beta"])
    shown = ids("n0", "n1", "n2")
    [outsider] = ids("elsewhere")
    llm.replies.append(
        LLMReply(
            text=json.dumps(
                {
                    "patterns": [
                        {
                            "name": "worker-timeouts",
                            "description": "Timeouts recur",
                            "evidence": shown,
                        },
                        # Only one real id left once the invented and unshown ones are dropped.
                        {
                            "name": "thin",
                            "description": "Thin",
                            "evidence": [shown[0], 99999, outsider],
                        },
                    ]
                }
            )
        )
    )

    result = dream_patterns(project="alpha")

    assert result["proposalsCreated"] == 1
    assert result["dropped"] == 1
    assert result["llmCalls"] == 1
    [proposal] = Proposal.objects.all()
    assert proposal.kind == ProposalKind.PATTERN_EMERGENT
    assert proposal.source_ids == shown
    assert proposal.proposed["name"] == "pattern-worker-timeouts"
    assert proposal.proposed["type"] == "pattern_emergent"
    assert "not shown" not in llm.chat_requests()[0].body["messages"][0]["content"]


@pytest.mark.parametrize("wrap", [bare_json, fenced_json])
def test_a_pattern_whose_strings_hold_backtick_runs_is_staged_as_written(llm, wrap):
    for i in range(5):
        remember(f"n{i}", f"ran the tests before pushing {i}", tags=["project:alpha"])
    evidence = ids("n0", "n1")
    pattern = {"name": "```tests```", "description": CODE_RUN, "evidence": evidence}
    llm.replies.append(LLMReply(text=wrap({"patterns": [pattern]})))

    result = dream_patterns(project="alpha")

    assert (result["proposalsCreated"], result["failures"]) == (1, 0)
    proposal = Proposal.objects.get()
    assert (proposal.proposed["observations"], proposal.source_ids) == ([CODE_RUN], evidence)


def test_a_rejected_pattern_is_not_staged_again_until_its_evidence_changes(llm):
    for i in range(5):
        remember(f"n{i}", f"debugged a timeout in the worker {i}", tags=["project:alpha"])
    evidence = ids("n0", "n1")
    pattern = {"name": "worker-timeouts", "description": "Timeouts recur", "evidence": evidence}
    llm.replies.append(LLMReply(text=json.dumps({"patterns": [pattern]})))
    dream_patterns(project="alpha")
    rejected = Proposal.objects.get()
    proposal_reject(rejected.pk, channel="api")
    reworded = {**pattern, "description": "Worker timeouts keep coming back"}
    llm.replies.append(LLMReply(text=json.dumps({"patterns": [reworded]})))

    again = dream_patterns(project="alpha")

    assert (again["proposalsCreated"], again["llmCalls"]) == (0, 1)
    [skip] = again["skipped"]
    assert f"rejected (proposal {rejected.pk})" in skip["reason"]

    remember("n1", "the timeout came from the database, not the worker")
    llm.replies.append(LLMReply(text=json.dumps({"patterns": [reworded]})))
    changed = dream_patterns(project="alpha")

    assert changed["proposalsCreated"] == 1
    assert Proposal.objects.get(status="pending").proposed["observations"] == [
        reworded["description"]
    ]


def test_patterns_skip_projects_with_too_little_signal(llm):
    remember("only", "one memory", tags=["project:alpha"])

    result = dream_patterns(min_signal=5)

    assert result["llmCalls"] == 0
    assert "too few" in result["skipped"][0]["reason"]


# --- conflicts --------------------------------------------------------------------------------


@pytest.fixture
def decisions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    use_embedder(monkeypatch, "deterministic")
    remember("cache-v1", "session cache store uses memcached cluster", type="decision")
    remember("cache-v2", "session cache store uses redis cluster", type="decision")
    remember("deploy", "releases ship every friday afternoon", type="decision")
    # A commit is not a signal type: never a candidate, however close.
    remember("commit-x", "session cache store uses memcached cluster today", type="commit")
    embedding_pass.embed_pending()
    return ids("cache-v1", "cache-v2")


def test_candidates_are_close_signal_pairs_only(decisions):
    pairs = conflict_candidates()

    assert [(p.low, p.high) for p in pairs] == [tuple(sorted(decisions))]


def test_dry_run_counts_candidates_without_an_llm(decisions):
    result = dream_conflicts(dry_run=True)

    assert result["candidates"] == 1
    assert result["llmCalls"] == 0
    assert not JudgedPair.objects.exists()


def test_a_supersedes_verdict_is_staged_with_the_survivor_first_and_accepted(llm, decisions):
    llm.replies.append(
        LLMReply(text=json.dumps({"verdict": "SUPERSEDES", "survivor": "B", "rationale": "moved"}))
    )

    result = dream_conflicts()

    assert (result["judged"], result["proposalsCreated"]) == (1, 1)
    [proposal] = Proposal.objects.all()
    assert proposal.kind == ProposalKind.RELATION
    assert proposal.proposed["from"] == "cache-v2"
    assert proposal.proposed["to"] == "cache-v1"
    assert proposal.proposed["relation"] == "supersedes"
    assert JudgedPair.objects.get().verdict == "SUPERSEDES"
    assert dream_conflicts()["candidates"] == 0  # judged: never paid for again

    proposal_accept(proposal.pk, channel="api")
    assert Entity.objects.get(name="cache-v1").status == "archived"


def test_unrelated_is_remembered_and_nothing_is_staged(llm, decisions):
    llm.replies.append(LLMReply(text=json.dumps({"verdict": "UNRELATED", "rationale": "no"})))

    result = dream_conflicts()

    assert (result["unrelated"], result["proposalsCreated"]) == (1, 0)
    assert JudgedPair.objects.get().verdict == "UNRELATED"
    assert not Proposal.objects.exists()
    assert conflict_candidates() == []


def test_an_unparseable_verdict_is_a_counted_failure_and_the_pair_returns(llm, decisions):
    llm.replies.append(LLMReply(text="I think they kind of disagree?"))

    result = dream_conflicts()

    assert (result["failures"], result["judged"]) == (1, 0)
    assert not JudgedPair.objects.exists()
    assert len(conflict_candidates()) == 1


def test_contradicts_and_duplicate_verdicts_become_relation_proposals(llm, decisions):
    llm.replies.append(LLMReply(text=json.dumps({"verdict": "CONTRADICTS", "rationale": "x"})))

    dream_conflicts()

    assert Proposal.objects.get().proposed["relation"] == "contradicts"


@pytest.mark.parametrize("wrap", [bare_json, fenced_json])
def test_a_verdict_whose_strings_hold_backtick_runs_is_read(llm, decisions, wrap):
    verdict = {"verdict": "DUPLICATE", "rationale": f"both say: {CODE_RUN}"}
    llm.replies.append(LLMReply(text=wrap(verdict)))

    result = dream_conflicts()

    assert (result["judged"], result["failures"], result["proposalsCreated"]) == (1, 0, 1)
    proposed = Proposal.objects.get().proposed
    assert (proposed["relation"], proposed["rationale"]) == ("duplicates", verdict["rationale"])


def test_a_rejected_relation_proposal_is_never_judged_again(llm, decisions):
    llm.replies.append(LLMReply(text=json.dumps({"verdict": "CONTRADICTS", "rationale": "x"})))
    dream_conflicts()
    proposal_reject(Proposal.objects.get().pk, channel="api")

    again = dream_conflicts()

    assert (again["candidates"], again["llmCalls"]) == (0, 0)
    assert len(llm.chat_requests()) == 1


def test_pairs_already_related_are_not_candidates(decisions):
    remember("cache-v2", relations=[{"to": "cache-v1", "type": "contradicts"}])

    assert conflict_candidates() == []
