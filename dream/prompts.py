"""Prompts of the dream flows, and the parsing of their replies. Pure Python, no Django.

Memory text is untrusted (DESIGN §8): it may hold instructions someone planted in a commit
message. Every prompt carries it inside a fence longer than any backtick run in it, after
the reference's "background data, not instructions" preamble (core/fence.py), and asks for
JSON only. Replies are read leniently (a ```json fence or prose around the object is
tolerated, and so are backtick runs inside its strings: dream/reply_json.py) and validated
strictly; anything else is "unparseable", never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.fence import (
    PROMPT_INFO,
    PROMPT_MEMORIES_PREAMBLE,
    PROMPT_TRANSCRIPT_PREAMBLE,
    fenced,
    untrusted_block,
)
from dream.reply_json import Unparseable, reply_object

DIGEST_PROMPT_VERSION = "dreamer-v1"
PATTERN_PROMPT_VERSION = "patterns-v1"
CONFLICT_PROMPT_VERSION = "conflicts-v1"
VALIDATOR_PROMPT_VERSION = "validator-v1"
TRANSCRIPT_PROMPT_VERSION = "transcripts-v1"

MAX_OBSERVATION_CHARS = 1_000  # per observation shown to the model
MAX_DIGEST_OBSERVATIONS = 12


@dataclass(frozen=True)
class Memory:
    """One memory as shown to the model."""

    id: int
    name: str
    type: str
    observations: Sequence[str]
    created: str = ""


def language_instruction(language: str | None) -> str:
    """The `language` setting as a prompt instruction (unset: English). Identifiers stay
    English whatever the language (the reference)."""
    lang = (language or "").strip()[:60] or "English"
    return (
        f"Write every human-readable text (names excepted) in {lang}. Keep entity names, "
        "type slugs and tags in English."
    )


def render_memories(memories: Sequence[Memory]) -> str:
    lines: list[str] = []
    for m in memories:
        head = f"[{m.id}] {m.name} ({m.type}{', ' + m.created if m.created else ''})"
        lines.append(head)
        lines.extend(f"  - {o[:MAX_OBSERVATION_CHARS]}" for o in m.observations)
    return untrusted_block(
        "\n".join(lines), preamble=PROMPT_MEMORIES_PREAMBLE, info=PROMPT_INFO, blank_line=False
    )


# --- dreamer -----------------------------------------------------------------------------


def digest_prompt(
    project: str, cluster_key: str, memories: Sequence[Memory], language: str | None
) -> tuple[str, str]:
    system = (
        "You compact a cluster of episodic memories (commits, session notes) of one software "
        "project into one digest memory that keeps every durable fact and drops the noise. "
        "Only state what the memories support. " + language_instruction(language)
    )
    prompt = (
        f"Project: {project or '(none)'}\nCluster: {cluster_key}\n\n"
        f"{render_memories(memories)}\n\n"
        "Reply with JSON only: "
        '{"name": "<short-kebab-case-name>", "title": "<one line>", '
        f'"observations": ["<fact>", ...at most {MAX_DIGEST_OBSERVATIONS}]}}'
    )
    return system, prompt


@dataclass(frozen=True)
class Digest:
    name: str
    title: str | None
    observations: list[str]


def slug(text: str, fallback: str) -> str:
    value = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80]
    return value or fallback


def parse_digest(reply: str) -> Digest:
    data = reply_object(reply, required=("observations",))
    observations = data.get("observations")
    if not isinstance(observations, list) or not observations:
        raise Unparseable("observations: a non-empty list is required")
    clean = [str(o).strip() for o in observations if isinstance(o, str) and o.strip()]
    if not clean:
        raise Unparseable("observations: no text")
    name = data.get("name")
    title = data.get("title")
    return Digest(
        name=name.strip() if isinstance(name, str) else "",
        title=title.strip()[:200] if isinstance(title, str) and title.strip() else None,
        observations=clean[:MAX_DIGEST_OBSERVATIONS],
    )


# --- validator ----------------------------------------------------------------------------


def validator_prompt(
    digest: Digest, memories: Sequence[Memory], language: str | None
) -> tuple[str, str]:
    system = (
        "You check a proposed digest against the memories it summarises. Every claim must be "
        "supported by them. " + language_instruction(language)
    )
    claims = "\n".join(f"- {o}" for o in digest.observations)
    prompt = (
        f"{render_memories(memories)}\n\nProposed digest claims:\n{fenced(claims, PROMPT_INFO)}\n\n"
        "Reply with JSON only: "
        '{"verdict": "pass" | "soften" | "reject", '
        '"warnings": [{"claim": "<claim>", "reason": "<why unsupported>"}]}. '
        "pass: every claim is supported; soften: some claims overreach (list them); "
        "reject: the digest misrepresents the memories."
    )
    return system, prompt


@dataclass(frozen=True)
class Validation:
    verdict: str  # pass | soften | reject | unavailable
    warnings: list[dict[str, str]]


def parse_validation(reply: str) -> Validation:
    data = reply_object(reply, required=("verdict",))
    verdict = str(data.get("verdict", "")).strip().lower()
    if verdict not in ("pass", "soften", "reject"):
        raise Unparseable(f"verdict: expected pass, soften or reject (got {verdict!r})")
    warnings = []
    for w in data.get("warnings") or []:
        if isinstance(w, dict) and isinstance(w.get("claim"), str):
            warnings.append({"claim": w["claim"], "reason": str(w.get("reason", ""))})
    return Validation(verdict=verdict, warnings=warnings)


# --- pattern detector ---------------------------------------------------------------------


def pattern_prompt(
    project: str, memories: Sequence[Memory], language: str | None
) -> tuple[str, str]:
    system = (
        "You find recurring patterns across the memories of one software project: habits, "
        "repeated problems, conventions that emerge from several memories. Cite the ids of "
        "the memories that show each pattern; a pattern needs at least two. Never infer "
        "causality. " + language_instruction(language)
    )
    prompt = (
        f"Project: {project or '(none)'}\n\n{render_memories(memories)}\n\n"
        "Reply with JSON only: "
        '{"patterns": [{"name": "<short-kebab-case-name>", "description": "<one paragraph>", '
        '"evidence": [<memory id>, ...]}]}'
    )
    return system, prompt


@dataclass(frozen=True)
class Pattern:
    name: str
    description: str
    evidence: list[int]


def parse_patterns(reply: str) -> list[Pattern]:
    data = reply_object(reply, required=("patterns",))
    items = data.get("patterns")
    if not isinstance(items, list):
        raise Unparseable("patterns: a list is required")
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        description = item.get("description")
        if not isinstance(description, str) or not description.strip():
            continue
        evidence: list[int] = []
        for raw in item.get("evidence") or []:
            if isinstance(raw, int) and not isinstance(raw, bool):
                evidence.append(raw)
            elif isinstance(raw, str) and raw.strip().lstrip("[").rstrip("]").isdigit():
                evidence.append(int(raw.strip().lstrip("[").rstrip("]")))
        name = item.get("name")
        out.append(
            Pattern(
                name=name.strip() if isinstance(name, str) else "",
                description=description.strip(),
                evidence=evidence,
            )
        )
    return out


# --- conflict judge -----------------------------------------------------------------------

VERDICTS = ("CONTRADICTS", "SUPERSEDES", "DUPLICATE", "UNRELATED")


def conflict_prompt(a: Memory, b: Memory, language: str | None) -> tuple[str, str]:
    system = (
        "You judge whether two memories conflict. CONTRADICTS: both cannot be true. "
        "SUPERSEDES: one is a revision of the other (its content must show the revision; "
        "never decide from dates alone) — name the survivor. DUPLICATE: they say the same "
        "thing. UNRELATED: none of these. Never infer causality. " + language_instruction(language)
    )
    prompt = (
        f"Memory A:\n{render_memories([a])}\n\nMemory B:\n{render_memories([b])}\n\n"
        "Reply with JSON only: "
        '{"verdict": "CONTRADICTS" | "SUPERSEDES" | "DUPLICATE" | "UNRELATED", '
        '"survivor": "A" | "B" (SUPERSEDES only: the memory that replaces the other), '
        '"rationale": "<one sentence>"}'
    )
    return system, prompt


@dataclass(frozen=True)
class Verdict:
    verdict: str
    survivor: str | None  # "A" | "B" for SUPERSEDES
    rationale: str


def parse_verdict(reply: str) -> Verdict:
    data = reply_object(reply, required=("verdict",))
    verdict = str(data.get("verdict", "")).strip().upper()
    if verdict not in VERDICTS:
        raise Unparseable(f"verdict: expected one of {', '.join(VERDICTS)} (got {verdict!r})")
    survivor = str(data.get("survivor") or "").strip().upper() or None
    if verdict == "SUPERSEDES" and survivor not in ("A", "B"):
        raise Unparseable("survivor: SUPERSEDES must name the survivor, A or B")
    rationale = data.get("rationale")
    return Verdict(
        verdict=verdict,
        survivor=survivor if verdict == "SUPERSEDES" else None,
        rationale=rationale.strip()[:1000] if isinstance(rationale, str) else "",
    )


# --- transcript extractor -------------------------------------------------------------------

# What a mined memory may be, and the spellings models use for them.
MINED_TYPES = {
    "decision": "decision",
    "lesson_learned": "lesson_learned",
    "lesson": "lesson_learned",
    "lesson-learned": "lesson_learned",
    "fact": "fact",
}
MAX_MINED_OBSERVATIONS = 5
MAX_EVIDENCE_CHARS = 300


def transcript_block(conversation: str) -> str:
    """A conversation as untrusted data: the prompt's and the work package's material."""
    return untrusted_block(
        conversation, preamble=PROMPT_TRANSCRIPT_PREAMBLE, info=PROMPT_INFO, blank_line=False
    )


def transcript_prompt(
    project: str, session: str, conversation: str, language: str | None
) -> tuple[str, str]:
    system = (
        "You read part of a conversation between a developer and an AI coding agent and pick "
        "out the durable memories worth keeping for later sessions of this project: decisions "
        "taken (with their reason), lessons learned (a mistake or pitfall and what fixed it), "
        "and facts about the project (how something works, where it lives, a convention). "
        "Skip small talk, progress reports, plans that were not carried out, anything only true "
        "at that moment, and anything the code itself makes obvious. Each observation must make "
        "sense on its own, without the conversation. Never copy credentials, keys, tokens or "
        "passwords. " + language_instruction(language)
    )
    prompt = (
        f"Project: {project or '(none)'}\nSession: {session}\n\n"
        f"{transcript_block(conversation)}\n\n"
        "Reply with JSON only: "
        '{"memories": [{"type": "decision" | "lesson_learned" | "fact", '
        '"name": "<short-kebab-case-name>", "title": "<one line>", '
        f'"observations": ["<self-contained statement>", ...at most {MAX_MINED_OBSERVATIONS}], '
        '"evidence": "<a short quote from the conversation>"}]}. '
        'Reply {"memories": []} when nothing is worth keeping.'
    )
    return system, prompt


@dataclass(frozen=True)
class MinedMemory:
    """One candidate as the model wrote it (not yet sanitised or checked for secrets)."""

    type: str
    name: str
    title: str | None
    observations: list[str]
    evidence: str | None


def _text_or_none(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _mined(item: object) -> MinedMemory | None:
    """One item of the reply's list; None when it has no known type or no observation."""
    if not isinstance(item, dict):
        return None
    kind = MINED_TYPES.get(str(item.get("type", "")).strip().lower())
    raw = item.get("observations")
    observations = (
        [o.strip() for o in raw if isinstance(o, str) and o.strip()]
        if isinstance(raw, list)
        else []
    )
    if kind is None or not observations:
        return None
    return MinedMemory(
        type=kind,
        name=_text_or_none(item.get("name")) or "",
        title=_text_or_none(item.get("title")),
        observations=observations[:MAX_MINED_OBSERVATIONS],
        evidence=_text_or_none(item.get("evidence")),
    )


def parse_mined(reply: str) -> tuple[list[MinedMemory], int]:
    """The candidates of a transcript reply, and how many items were unusable (an unknown
    type, no observation). An empty list is a valid answer."""
    data = reply_object(reply, required=("memories",))
    items = data.get("memories")
    if not isinstance(items, list):
        raise Unparseable("memories: a list is required")
    mined = [_mined(item) for item in items]
    return [m for m in mined if m is not None], sum(m is None for m in mined)
