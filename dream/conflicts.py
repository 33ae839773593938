"""The conflict judge (`memesh dream conflicts`): finds pairs of signal memories that may
contradict, supersede or duplicate each other, asks the LLM, and stages its verdicts as
`relation` proposals.

Candidate generation is deterministic and free: active memories of a signal type
(SIGNAL_TYPES: knowledge, not logs), each one's nearest neighbours in the live vector index
inside the cosine gate (COSINE_GATE), minus pairs already related by supersedes/contradicts,
pairs judged before (JudgedPair) and pairs with a relation proposal pending. The tightest
`max_pairs` are judged. UNRELATED is remembered so the pair is never paid for again; the
other verdicts are remembered too and staged for review. An unparseable reply is a counted
failure, not a verdict: the pair comes back next run. Causality is never inferred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from django.db import IntegrityError, transaction
from django.db.models import Q

from dream import prompts
from dream.llm.types import LLMRequest, LLMUnavailable
from dream.passes import PassRun, load_memories, pass_start, projects_of
from graph.indexing import generations
from graph.models import Entity, EntityVector, Relation, Status
from proposals.models import JudgedPair, Proposal, ProposalKind, ProposalStatus
from proposals.schemas import DEFAULT_MAX_PAIRS
from proposals.staging import proposal_stage

SIGNAL_TYPES = (
    "decision",
    "lesson_learned",
    "lesson",
    "mistake",
    "pattern",
    "best_practice",
    "convention",
    "architecture",
    "architecture_note",
    "preference",
    "fact",
)
# Cosine similarity a pair needs to be worth judging: same-subject statements on MiniLM sit
# above ~0.6, paraphrases above ~0.8.
COSINE_GATE = 0.6
NEIGHBOURS = 5
RELATED_TYPES = ("supersedes", "contradicts")
VERDICT_RELATION = {
    "CONTRADICTS": "contradicts",
    "SUPERSEDES": "supersedes",
    "DUPLICATE": "duplicates",
}


@dataclass(frozen=True)
class Pair:
    low: int
    high: int
    similarity: float


def conflict_candidates() -> list[Pair]:
    """Candidate pairs, tightest first (empty without a live vector index)."""
    if not generations.vectors_supported():
        return []
    gen = generations.live_generation()
    if gen is None:
        return []
    signal = list(
        Entity.objects.filter(status=Status.ACTIVE, type__in=SIGNAL_TYPES).values_list(
            "id", flat=True
        )
    )
    if len(signal) < 2:
        return []
    signal_set = set(signal)
    floats = EntityVector.objects.floats(gen.generation, signal)
    excluded = _excluded_pairs(signal)
    found: dict[tuple[int, int], float] = {}
    for entity_id, vec in floats.items():
        neighbours = EntityVector.objects.nearest(
            gen.generation, vec, k=NEIGHBOURS * 4 + 1, coarse=400
        )
        kept = 0
        for other, sim in neighbours:
            if other == entity_id or other not in signal_set:
                continue
            if sim < COSINE_GATE or kept >= NEIGHBOURS:
                break
            kept += 1
            key = (min(entity_id, other), max(entity_id, other))
            if key not in excluded:
                found[key] = max(sim, found.get(key, -1.0))
    pairs = [Pair(low, high, sim) for (low, high), sim in found.items()]
    return sorted(pairs, key=lambda p: (-p.similarity, p.low, p.high))


def _excluded_pairs(ids: list[int]) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    related = Relation.objects.filter(
        Q(from_entity_id__in=ids) | Q(to_entity_id__in=ids), type__in=RELATED_TYPES
    ).values_list("from_entity_id", "to_entity_id")
    for a, b in related:
        out.add((min(a, b), max(a, b)))
    out.update(JudgedPair.objects.values_list("low_entity_id", "high_entity_id"))
    for source_ids in Proposal.objects.filter(
        kind=ProposalKind.RELATION, status=ProposalStatus.PENDING
    ).values_list("source_ids", flat=True):
        if len(source_ids or []) == 2:
            a, b = int(source_ids[0]), int(source_ids[1])
            out.add((min(a, b), max(a, b)))
    return out


def _record(pair: Pair, verdict: str) -> None:
    try:
        with transaction.atomic():
            JudgedPair.objects.create(
                low_entity_id=pair.low, high_entity_id=pair.high, verdict=verdict
            )
    except IntegrityError:  # another run judged it meanwhile
        pass


class ConflictsResult(TypedDict):
    """What a judging pass reports (`vectors`: whether there is a live vector index, without
    which there are no candidates)."""

    candidates: int
    judged: int
    proposalsCreated: int
    unrelated: int
    failures: int
    llmCalls: int
    durationMs: int
    vectors: bool


def dream_conflicts(
    *, max_pairs: int = DEFAULT_MAX_PAIRS, dry_run: bool = False
) -> ConflictsResult:
    """One judging pass: at most `max_pairs` candidates judged, one LLM call each."""
    run = pass_start(max_llm_calls=max_pairs, dry_run=dry_run)
    pairs = conflict_candidates()
    out: ConflictsResult = {
        "candidates": len(pairs),
        "judged": 0,
        "proposalsCreated": 0,
        "unrelated": 0,
        "failures": 0,
        "llmCalls": 0,
        "durationMs": 0,
        "vectors": generations.live_generation() is not None,
    }
    if not dry_run:
        for pair in pairs[:max_pairs]:
            _judge(pair, run, out)
    out["llmCalls"] = run.budget.used
    out["durationMs"] = run.duration_ms()
    return out


def _judge(pair: Pair, run: PassRun, out: ConflictsResult) -> None:
    entities = {e.pk: e for e in Entity.objects.filter(pk__in=[pair.low, pair.high])}
    if len(entities) < 2:
        return
    a, b = load_memories([entities[pair.low], entities[pair.high]])
    project = projects_of([pair.low]).get(pair.low, "")
    system, prompt = prompts.conflict_prompt(a, b, run.language)
    try:
        reply = run.budget.call(
            LLMRequest(flow="conflict_judge", system=system, prompt=prompt, project=project)
        )
        verdict = prompts.parse_verdict(reply.text)
    except (LLMUnavailable, prompts.Unparseable):
        out["failures"] += 1
        return
    out["judged"] += 1
    _record(pair, verdict.verdict)
    if verdict.verdict == "UNRELATED":
        out["unrelated"] += 1
        return
    first, second = (a, b) if verdict.survivor != "B" else (b, a)
    _, created = proposal_stage(
        kind=ProposalKind.RELATION,
        project=project,
        cluster_key=f"pair:{pair.low}-{pair.high}",
        source_ids=[pair.low, pair.high],
        proposed={
            "from": first.name,
            "to": second.name,
            "relation": VERDICT_RELATION[verdict.verdict],
            "verdict": verdict.verdict,
            "rationale": verdict.rationale,
            "similarity": round(pair.similarity, 4),
        },
        llm_model=reply.model,
        prompt_version=prompts.CONFLICT_PROMPT_VERSION,
    )
    if created:
        out["proposalsCreated"] += 1
