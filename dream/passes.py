"""What the dream flows share (the dreamer, the pattern detector, the conflict judge, transcript
mining, the due rules): the episodic types, the `language` setting, the LLM checks, projects
of memories, memories as the prompts show them, the per-run LLM call budget, and how every
pass starts (`pass_start`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypedDict

from core.config_sections import config_load
from core.timing import Stopwatch
from dream import prompts
from dream.config import LANGUAGE_SETTING
from dream.llm.chain import complete, llm_chain
from dream.llm.errors import LLMNotConfigured
from dream.llm.types import LLMRequest, LLMResult
from graph.models import Entity, Observation, Tag
from graph.project_tags import PROJECT_TAG_PREFIX

DIGEST_TYPE = "digest"
NO_PROJECT = ""
# Episodic memories: records of what happened (the hooks write most of them), what the dreamer
# compacts and what makes a dream due (dream/due.py). The same family the briefing
# calls "activity", plus the session-note spellings.
EPISODIC_TYPES = (
    "commit",
    "session",
    "session_summary",
    "session-summary",
    "session_note",
    "session-note",
    "session_keypoint",
    "workflow_checkpoint",
    "conversation",
)


def configured_language() -> str | None:
    """The `language` setting (unset: None, which means English)."""
    value = config_load().get(LANGUAGE_SETTING)
    return value.strip()[:60] if isinstance(value, str) and value.strip() else None


def llm_configured() -> bool:
    return bool(llm_chain(config_load()))


def require_llm() -> None:
    """Refuse up front (`llm.not-configured`) a run that would need an LLM and has none."""
    if not llm_configured():
        raise LLMNotConfigured(
            "No LLM provider is configured: the dream flows need one. Set it with "
            '`memesh config set llm \'{"provider": "anthropic", "apiKey": "..."}\'` '
            "or POST /v1/config, or use a dry run."
        )


def normalise_project(project: str | None) -> str | None:
    if project is None:
        return None
    return project.strip().removeprefix(PROJECT_TAG_PREFIX).strip()


def projects_of(entity_ids: Sequence[int]) -> dict[int, str]:
    """Each entity's project (its first `project:` tag), NO_PROJECT when it has none."""
    out: dict[int, str] = {}
    rows = Tag.objects.filter(entity_id__in=entity_ids, name__startswith=PROJECT_TAG_PREFIX)
    for entity_id, name in rows.order_by("id").values_list("entity_id", "name"):
        out.setdefault(entity_id, name.removeprefix(PROJECT_TAG_PREFIX))
    return {i: out.get(i, NO_PROJECT) for i in entity_ids}


def load_memories(entities: Iterable[Entity]) -> list[prompts.Memory]:
    entities = list(entities)
    texts: dict[int, list[str]] = {}
    for entity_id, text in (
        Observation.objects.filter(entity_id__in=[e.pk for e in entities])
        .order_by("id")
        .values_list("entity_id", "text")
    ):
        texts.setdefault(entity_id, []).append(text)
    return [
        prompts.Memory(
            id=e.pk,
            name=e.name,
            type=e.type,
            observations=texts.get(e.pk, []),
            created=e.created_at.date().isoformat(),
        )
        for e in entities
    ]


class Budget:
    """LLM calls a run may still make."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def left(self) -> int:
        return self.limit - self.used

    def call(self, request: LLMRequest) -> LLMResult:
        """One counted call (a failed call costs too: the provider was asked)."""
        self.used += 1
        return complete(request)


@dataclass(frozen=True)
class PassRun:
    """A pass under way: its LLM call budget, the language what it stages is written in
    (None: English; always None in a dry run, which writes nothing) and its clock."""

    budget: Budget
    language: str | None
    clock: Stopwatch

    def duration_ms(self) -> int:
        return self.clock.ms


def pass_start(*, max_llm_calls: int, dry_run: bool) -> PassRun:
    """How every pass starts: its clock runs, and unless it is a dry run, a missing LLM is
    refused up front (`require_llm`) and the `language` setting is read."""
    clock = Stopwatch()
    if dry_run:
        return PassRun(Budget(max_llm_calls), None, clock)
    require_llm()
    return PassRun(Budget(max_llm_calls), configured_language(), clock)


class SkippedCluster(TypedDict):
    """A cluster (or a project's memories) a pass left alone, and why."""

    reason: str
    project: str
    clusterKey: str
