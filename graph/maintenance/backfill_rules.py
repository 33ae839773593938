"""The five heuristic rules of `memesh kg backfill-relations` (the reference's section of that
name), as pure Python over a snapshot of the graph: no Django, no SQL, so each rule is tested
in microseconds. graph/maintenance/relations_backfill.py loads the snapshot, runs them and writes.

1. Tag co-occurrence — an orphan and another entity sharing >= `min_shared_tags` *topical*
   tags: `related-to`. Topical excludes auto-capture noise (SYSTEM_TAG_LITERALS), system
   prefixes (`project:`, `session:`, `date:`, ...) and dates, else every commit of a project
   would relate to every other.
2. Project clustering — an orphan lesson / decision / bug fix / pattern (CONSUMER_TYPES) in a
   project: `belongs-to-project` to the most recent release / feature / architecture / plan
   (ANCHOR_TYPES) of the same project.
3. Session co-occurrence (opt-in) — high-signal (metadata.signal_score >= 0.6; a memory without
   a score counts as 1.0) orphans of SESSION_TYPES sharing a session with another such
   entity: `co-created`.
4. Name-token similarity (opt-in) — an orphan whose name shares >= 3 content tokens with
   another's, or whose token sets have Jaccard similarity >= `min_jaccard`:
   `shares-name-tokens`. Tokens: lower-cased runs of letters/digits of >= 3 characters, not
   numbers, not NAME_STOPWORDS (generic qualifiers, month abbreviations); names of fewer than
   2 tokens take no part.
5. Evidence links (on by default) — an evidence capture (EVIDENCE_TYPES in
   graph/ops/entity_types.py: commits, session insights and summaries, ...) with no
   `evidences` edge yet: `evidences` to the work items (WORK_TYPES) of its session, else to
   the most recent work item of its project created before it. Its sources are evidence
   entities, orphans or not.

"An entity's sessions" is one definition for rules 3 and 5: its `session:<id>` tags plus its
`metadata.session_id` (commits carry the id in metadata and no session tag, by design).
Each source gets at most `max_per_source` edges per rule. The symmetric relations (rules 1, 3,
4) are proposed once per pair, whichever end is the source: A→B makes B→A redundant.
Ties are broken by id, so a run is deterministic.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

# The two layers of the work graph (what was decided or learned, and what shows it happened)
# and the edge between them are the graph view's too: one definition.
from graph.ops.entity_types import EVIDENCES, WORK_TYPES

RELATED_TO = "related-to"
BELONGS_TO_PROJECT = "belongs-to-project"
CO_CREATED = "co-created"
SHARES_NAME_TOKENS = "shares-name-tokens"
DERIVED_TYPES = (RELATED_TO, BELONGS_TO_PROJECT, CO_CREATED, SHARES_NAME_TOKENS, EVIDENCES)
SYMMETRIC_TYPES = frozenset({RELATED_TO, CO_CREATED, SHARES_NAME_TOKENS})
# The rule names of the output (`byRule`), by relation type.
RULE_OF = {
    RELATED_TO: "tagCooccurrence",
    BELONGS_TO_PROJECT: "projectClustering",
    CO_CREATED: "sessionCooccurrence",
    SHARES_NAME_TOKENS: "nameTokenSimilarity",
    EVIDENCES: "evidenceLinks",
}

SYSTEM_TAG_PREFIXES = (
    "project:", "week:", "cluster:", "severity:", "scope:", "source:", "date:", "type:",
    "urgency:", "host:", "session:", "release:",
)  # fmt: skip
SYSTEM_TAG_LITERALS = frozenset({
    "session_end", "auto_saved", "commit", "auto-tracked", "session-summary", "session-insight",
    "session_keypoint", "workflow_checkpoint", "auto", "auto-captured", "completed",
    "plan-completion", "lesson", "verification", "engineering-judgment", "reference", "plan",
})  # fmt: skip
_DATE_TAG = re.compile(r"^\d{4}-\d{2}-\d{2}")

CONSUMER_TYPES = frozenset(
    {"lesson_learned", "lesson", "decision", "bug_fix", "pattern", "mistake", "best_practice"}
)
ANCHOR_TYPES = frozenset({"release", "feature", "architecture", "plan"})
SESSION_TYPES = frozenset({
    "lesson_learned", "lesson", "decision", "architecture", "architecture_decision", "plan",
    "feature", "bug_fix", "pattern", "best_practice", "release",
})  # fmt: skip
MIN_SESSION_SIGNAL = 0.6

NAME_STOPWORDS = frozenset({
    "the", "and", "for", "with", "from", "this", "that", "are", "was", "has", "fix", "add",
    "get", "set", "use", "via", "not", "new", "old", "update", "into", "onto", "when", "then",
    "also", "both", "each", "more", "about", "best", "practices", "pattern", "applied",
    "standards", "professional", "using", "based", "related", "general", "common", "basic",
    "simple", "verification", "cleanup", "refactoring", "implementation", "migration",
    "summary", "overview", "analysis", "review", "report", "notes",
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
})  # fmt: skip
MIN_SHARED_NAME_TOKENS = 3
_TOKEN_SPLIT = re.compile(r"[\W_]+")

Step = Callable[[int], None]  # progress: called with 1 for each source a rule has looked at


@dataclass(frozen=True)
class Node:
    """One entity as the rules see it."""

    id: int
    name: str
    type: str
    created_at: datetime
    tags: frozenset[str]
    sessions: frozenset[str]  # session:<id> tags and metadata.session_id
    projects: frozenset[str]  # from project:<id> tags
    signal: float  # metadata.signal_score, 1.0 when absent


@dataclass(frozen=True)
class Settings:
    max_per_source: int = 3
    min_shared_tags: int = 2
    session_cooccurrence: bool = False
    name_tokens: bool = False
    min_jaccard: float = 0.5
    evidence_links: bool = True
    project: str | None = None  # restricts rule 5's evidence and work items


@dataclass(frozen=True)
class Candidate:
    from_id: int
    to_id: int
    type: str
    reason: str


def is_topical(tag: str) -> bool:
    lower = tag.lower()
    if len(lower) < 2 or _DATE_TAG.match(lower) or lower in SYSTEM_TAG_LITERALS:
        return False
    return not lower.startswith(SYSTEM_TAG_PREFIXES)


def name_tokens(name: str) -> frozenset[str]:
    return frozenset(
        t
        for t in _TOKEN_SPLIT.split(name.lower())
        if len(t) >= 3 and t not in NAME_STOPWORDS and not t.isdigit()
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


class _Proposals:
    """Candidates in proposal order, each pair of a symmetric type once."""

    def __init__(self) -> None:
        self.items: list[Candidate] = []
        self._seen: set[tuple[int, int, str]] = set()

    def add(self, from_id: int, to_id: int, type_: str, reason: str) -> bool:
        key = (min(from_id, to_id), max(from_id, to_id)) if type_ in SYMMETRIC_TYPES else None
        full = (*(key or (from_id, to_id)), type_)
        if from_id == to_id or full in self._seen:
            return False
        self._seen.add(full)
        self.items.append(Candidate(from_id, to_id, type_, reason))
        return True


def propose(
    nodes: dict[int, Node],
    orphans: list[int],
    evidence: list[int],
    settings: Settings,
    progress: Step | None = None,
) -> list[Candidate]:
    """Every rule's candidates: `orphans` are the sources of rules 1-4, `evidence` (evidence
    entities without an `evidences` edge) of rule 5; `nodes` holds every entity in scope."""
    step = progress or (lambda n: None)
    out = _Proposals()
    _tag_cooccurrence(nodes, orphans, settings, out, step)
    _project_clustering(nodes, orphans, settings, out, step)
    if settings.session_cooccurrence:
        _session_cooccurrence(nodes, orphans, settings, out, step)
    if settings.name_tokens:
        _name_token_similarity(nodes, orphans, settings, out, step)
    if settings.evidence_links:
        _evidence_links(nodes, evidence, settings, out, step)
    return out.items


def steps(orphans: int, evidence: int, settings: Settings) -> int:
    """How many times `propose` calls `progress` (one per source per rule)."""
    orphan_rules = 2 + settings.session_cooccurrence + settings.name_tokens
    return orphans * orphan_rules + (evidence if settings.evidence_links else 0)


def _index(nodes: Iterable[Node], keys: Callable[[Node], Iterable[str]]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = defaultdict(list)
    for node in sorted(nodes, key=lambda n: n.id):
        for key in keys(node):
            index[key].append(node.id)
    return index


def _tag_cooccurrence(
    nodes: dict[int, Node], orphans: list[int], s: Settings, out: _Proposals, step: Step
) -> None:
    topical = {n.id: frozenset(t for t in n.tags if is_topical(t)) for n in nodes.values()}
    by_tag = _index(nodes.values(), lambda n: topical[n.id])
    for orphan in orphans:
        step(1)
        tags = topical[orphan]
        if len(tags) < s.min_shared_tags:
            continue
        overlap: dict[int, int] = defaultdict(int)
        for tag in tags:
            for peer in by_tag[tag]:
                overlap[peer] += 1
        ranked = sorted(
            ((n, peer) for peer, n in overlap.items() if peer != orphan and n >= s.min_shared_tags),
            key=lambda item: (-item[0], item[1]),
        )
        added = 0
        for shared, peer in ranked:
            if added >= s.max_per_source:
                break
            plural = "s" if shared > 1 else ""
            added += out.add(orphan, peer, RELATED_TO, f"shares {shared} topical tag{plural}")


def _newest_first(node: Node) -> tuple[float, int]:
    return (-node.created_at.timestamp(), -node.id)


def _project_clustering(
    nodes: dict[int, Node], orphans: list[int], s: Settings, out: _Proposals, step: Step
) -> None:
    anchors: dict[str, Node] = {}  # project -> its most recent anchor
    for node in nodes.values():
        if node.type in ANCHOR_TYPES:
            for project in node.projects:
                best = anchors.get(project)
                if best is None or _newest_first(node) < _newest_first(best):
                    anchors[project] = node
    for orphan in orphans:
        step(1)
        node = nodes[orphan]
        if node.type not in CONSUMER_TYPES:
            continue
        projects = [s.project] if s.project else sorted(node.projects)
        found = [anchors[p] for p in projects if p in anchors and anchors[p].id != orphan]
        if found:
            anchor = min(found, key=_newest_first)
            out.add(orphan, anchor.id, BELONGS_TO_PROJECT, f"same-project anchor ({anchor.type})")


def _session_cooccurrence(
    nodes: dict[int, Node], orphans: list[int], s: Settings, out: _Proposals, step: Step
) -> None:
    def eligible(node: Node) -> bool:
        return node.type in SESSION_TYPES and node.signal >= MIN_SESSION_SIGNAL

    by_session = _index((n for n in nodes.values() if eligible(n)), lambda n: n.sessions)
    for orphan in orphans:
        step(1)
        node = nodes[orphan]
        if not eligible(node):
            continue
        added = 0
        for session in sorted(node.sessions):
            for peer in by_session[session]:
                if added >= s.max_per_source:
                    break
                if peer != orphan:
                    reason = f"co-created in the same session ({session})"
                    added += out.add(orphan, peer, CO_CREATED, reason)


def _name_token_similarity(
    nodes: dict[int, Node], orphans: list[int], s: Settings, out: _Proposals, step: Step
) -> None:
    tokens = {n.id: t for n in nodes.values() if len(t := name_tokens(n.name)) >= 2}
    by_token = _index((nodes[i] for i in tokens), lambda n: tokens[n.id])
    for orphan in orphans:
        step(1)
        mine = tokens.get(orphan)
        if mine is None:
            continue
        peers = {p for t in mine for p in by_token[t] if p != orphan}
        scored = []
        for peer in peers:
            shared = len(mine & tokens[peer])
            similarity = jaccard(mine, tokens[peer])
            if shared >= MIN_SHARED_NAME_TOKENS or similarity >= s.min_jaccard:
                scored.append((shared, similarity, peer))
        scored.sort(key=lambda x: (-x[0], -x[1], x[2]))
        added = 0
        for shared, similarity, peer in scored:
            if added >= s.max_per_source:
                break
            reason = f"{shared} shared name token(s), Jaccard={similarity:.2f}"
            added += out.add(orphan, peer, SHARES_NAME_TOKENS, reason)


def _evidence_links(
    nodes: dict[int, Node], evidence: list[int], s: Settings, out: _Proposals, step: Step
) -> None:
    def in_scope(node: Node) -> bool:
        return s.project is None or s.project in node.projects

    work = [n for n in nodes.values() if n.type in WORK_TYPES and in_scope(n)]
    by_session = _index(work, lambda n: n.sessions)
    by_project: dict[str, list[Node]] = defaultdict(list)
    for node in sorted(work, key=_newest_first):
        for project in node.projects:
            by_project[project].append(node)

    def same_project_or_untagged(a: Node, b: Node) -> bool:
        return not a.projects or not b.projects or bool(a.projects & b.projects)

    for source in evidence:
        step(1)
        node = nodes[source]
        if not in_scope(node):
            continue
        added = 0
        for session in sorted(node.sessions):
            for item in by_session[session]:
                if added >= s.max_per_source:
                    break
                if item != source and same_project_or_untagged(node, nodes[item]):
                    reason = f"captured in the same session as {nodes[item].type} ({session})"
                    added += out.add(source, item, EVIDENCES, reason)
        if added:
            continue
        for project in sorted(node.projects):
            before = (
                w for w in by_project[project] if w.id != source and w.created_at < node.created_at
            )
            anchor = next(before, None)
            if anchor is not None:
                reason = f"most recent work item in project:{project} before the capture"
                out.add(source, anchor.id, EVIDENCES, f"{reason} ({anchor.type})")
                break
