"""The pattern detector (`memesh dream patterns`): asks the LLM for patterns that emerge across
a project's recent memories and stages each as a `pattern_emergent` proposal.

Evidence is limited to memories the model was actually shown: an id it invents, or one of a
memory it never saw, is dropped, and a pattern left with fewer than MIN_EVIDENCE memories is
dropped whole (counted in `dropped`). A pattern whose evidence a person rejected as a pattern
before, unchanged since, is not staged again (listed in `skipped`; the call was paid: which
memories a pattern cites is known only from the reply). Pinned memories are shown (reading is
not compacting); earlier emergent patterns and digests are not (a pattern of patterns proves
nothing new).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TypedDict

from django.utils import timezone

from dream import prompts
from dream.llm.types import LLMRequest, LLMUnavailable
from dream.passes import (
    DIGEST_TYPE,
    SkippedCluster,
    load_memories,
    normalise_project,
    pass_start,
    projects_of,
)
from graph.models import Entity, Status
from graph.project_tags import PROJECT_TAG_PREFIX
from proposals.models import ProposalKind, ProposalStatus
from proposals.staging import proposal_stage

PATTERN_TYPE = "pattern_emergent"
MIN_EVIDENCE = 2
DEFAULT_MIN_SIGNAL = 5  # memories a project needs before it is worth a call
MAX_SHOWN = 40  # newest memories of a project shown to the model


class PatternsResult(TypedDict):
    """What a pattern pass reports."""

    proposalsCreated: int
    projectsScanned: int
    llmCalls: int
    dropped: int
    failures: int
    skipped: list[SkippedCluster]
    durationMs: int


def dream_patterns(
    *,
    project: str | None = None,
    window_days: int = 14,
    max_llm_calls: int = 5,
    min_signal: int = DEFAULT_MIN_SIGNAL,
    dry_run: bool = False,
) -> PatternsResult:
    """One pattern pass: its result counts what it staged, dropped and skipped (and why)."""
    run = pass_start(max_llm_calls=max_llm_calls, dry_run=dry_run)
    wanted = normalise_project(project)
    since = timezone.now() - timedelta(days=window_days)
    entities = list(
        Entity.objects.filter(status=Status.ACTIVE, created_at__gte=since)
        .exclude(type__in=[PATTERN_TYPE, DIGEST_TYPE])
        .order_by("-created_at", "-id")
    )
    project_of = projects_of([e.pk for e in entities])
    groups: dict[str, list[Entity]] = {}
    for e in entities:
        p = project_of[e.pk]
        if wanted is None or p == wanted:
            groups.setdefault(p, []).append(e)

    out: PatternsResult = {
        "proposalsCreated": 0,
        "projectsScanned": 0,
        "llmCalls": 0,
        "dropped": 0,
        "failures": 0,
        "skipped": [],
        "durationMs": 0,
    }
    for p, members in sorted(groups.items()):
        out["projectsScanned"] += 1
        key = f"patterns:{since.date().isoformat()}..{timezone.now().date().isoformat()}"

        def skip(reason: str, p: str = p, key: str = key) -> None:
            out["skipped"].append({"reason": reason, "project": p, "clusterKey": key})

        if len(members) < min_signal:
            skip(f"too few memories ({len(members)}; at least {min_signal})")
            continue
        if dry_run:
            skip("dry run: no LLM call made")
            continue
        if run.budget.left() < 1:
            skip("LLM call budget exhausted (maxLlmCalls)")
            continue
        shown = load_memories(members[:MAX_SHOWN])
        shown_ids = {m.id for m in shown}
        system, prompt = prompts.pattern_prompt(p, shown, run.language)
        try:
            reply = run.budget.call(
                LLMRequest(flow="pattern_detector", system=system, prompt=prompt, project=p)
            )
            found = prompts.parse_patterns(reply.text)
        except LLMUnavailable as exc:
            out["failures"] += 1
            skip(f"LLM unavailable ({exc.error_class})")
            continue
        except prompts.Unparseable as exc:
            out["failures"] += 1
            skip(f"unparseable LLM reply: {exc}")
            continue
        for pattern in found:
            evidence = list(dict.fromkeys(i for i in pattern.evidence if i in shown_ids))
            if len(evidence) < MIN_EVIDENCE:
                out["dropped"] += 1
                continue
            name = prompts.slug(pattern.name, "pattern")
            proposal, created = proposal_stage(
                kind=ProposalKind.PATTERN_EMERGENT,
                project=p,
                cluster_key=key,
                source_ids=evidence,
                proposed={
                    "name": name if name.startswith("pattern-") else f"pattern-{name}",
                    "type": PATTERN_TYPE,
                    "observations": [pattern.description],
                    "tags": [f"{PROJECT_TAG_PREFIX}{p}"] if p else [],
                },
                llm_model=reply.model,
                prompt_version=prompts.PATTERN_PROMPT_VERSION,
            )
            if created:
                out["proposalsCreated"] += 1
            elif proposal.status == ProposalStatus.REJECTED:
                skip(
                    f"pattern {name!r}: a pattern over these memories was rejected "
                    f"(proposal {proposal.pk}) and none of them has changed since"
                )
    out["llmCalls"] = run.budget.used
    out["durationMs"] = run.duration_ms()
    return out
