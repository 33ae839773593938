"""The five rules of `memesh kg backfill-relations` (graph/maintenance/backfill_rules.py) on
hand-built snapshots: what each proposes, what each refuses, and the caps and ties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graph.maintenance.backfill_rules import (
    BELONGS_TO_PROJECT,
    CO_CREATED,
    EVIDENCES,
    RELATED_TO,
    SHARES_NAME_TOKENS,
    Candidate,
    Node,
    Settings,
    is_topical,
    jaccard,
    name_tokens,
    propose,
    steps,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def node(
    id_: int,
    type_: str = "note",
    *,
    name: str | None = None,
    tags: tuple[str, ...] = (),
    sessions: tuple[str, ...] = (),
    minutes: int = 0,
    signal: float = 1.0,
) -> Node:
    return Node(
        id=id_,
        name=name or f"entity-{id_}",
        type=type_,
        created_at=T0 + timedelta(minutes=minutes or id_),
        tags=frozenset(tags),
        sessions=frozenset(sessions),
        projects=frozenset(t.removeprefix("project:") for t in tags if t.startswith("project:")),
        signal=signal,
    )


def run(
    nodes: list[Node],
    orphans: list[int] | None = None,
    evidence: list[int] | None = None,
    **settings: object,
) -> list[Candidate]:
    by_id = {n.id: n for n in nodes}
    chosen = Settings(**{"evidence_links": False, **settings})  # type: ignore[arg-type]
    return propose(by_id, orphans if orphans is not None else sorted(by_id), evidence or [], chosen)


def edges(candidates: list[Candidate]) -> list[tuple[int, int, str]]:
    return [(c.from_id, c.to_id, c.type) for c in candidates]


def test_topical_tags_exclude_capture_noise_system_prefixes_and_dates() -> None:
    assert is_topical("auth") and is_topical("file:auth.ts")
    for noise in ("commit", "auto_saved", "Lesson", "project:x", "session:1", "2026-01-02", "a"):
        assert not is_topical(noise)


def test_name_tokens_drop_stopwords_numbers_months_and_short_runs() -> None:
    assert name_tokens("Fix_auth-token refresh 2024 jan v2") == {"auth", "token", "refresh"}
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == 1 / 3
    assert jaccard(frozenset(), frozenset({"a"})) == 0.0


def test_two_topical_tags_in_common_relate_an_orphan_once_per_pair() -> None:
    nodes = [
        node(1, tags=("auth", "jwt", "commit")),
        node(2, tags=("auth", "jwt")),
        node(3, tags=("auth", "commit", "auto_saved")),  # one topical tag in common only
    ]

    assert edges(run(nodes)) == [(1, 2, RELATED_TO)]  # not 2 -> 1 again


def test_min_shared_tags_and_max_per_source_bound_rule_one() -> None:
    nodes = [node(1, tags=("a1", "b1", "c1"))] + [
        node(i, tags=("a1", "b1", "c1")[: 2 + (i % 2)]) for i in range(2, 8)
    ]

    capped = run(nodes, orphans=[1], max_per_source=2)
    strict = run(nodes, orphans=[1], min_shared_tags=3)

    # Most shared tags first, then the lower id.
    assert [c.to_id for c in capped] == [3, 5]
    assert [c.to_id for c in strict] == [3, 5, 7]
    assert capped[0].reason == "shares 3 topical tags"


def test_an_orphan_lesson_belongs_to_its_projects_most_recent_anchor() -> None:
    nodes = [
        node(1, "architecture", tags=("project:app",), minutes=10),
        node(2, "release", tags=("project:app",), minutes=20),
        node(3, "feature", tags=("project:other",), minutes=30),
        node(4, "lesson_learned", tags=("project:app",), minutes=40),
        node(5, "note", tags=("project:app",), minutes=50),  # not a consumer type
    ]

    assert edges(run(nodes)) == [(4, 2, BELONGS_TO_PROJECT)]


def test_session_cooccurrence_is_opt_in_and_needs_high_signal() -> None:
    nodes = [
        node(1, "decision", sessions=("s",)),
        node(2, "lesson_learned", sessions=("s",)),
        node(3, "decision", sessions=("s",), signal=0.2),
        node(4, "note", sessions=("s",)),  # not an eligible type
    ]

    assert run(nodes) == []
    assert edges(run(nodes, session_cooccurrence=True)) == [(1, 2, CO_CREATED)]


def test_name_tokens_is_opt_in_by_shared_tokens_or_jaccard() -> None:
    nodes = [
        node(1, name="auth-token-refresh-flow"),
        node(2, name="auth token refresh design"),  # 3 shared tokens
        node(3, name="token-refresh"),  # Jaccard 2/4 = 0.5
        node(4, name="auth-cache"),  # 1 shared, Jaccard 1/5
    ]

    assert run(nodes, orphans=[1]) == []
    proposed = run(nodes, orphans=[1], name_tokens=True)
    assert edges(proposed) == [(1, 2, SHARES_NAME_TOKENS), (1, 3, SHARES_NAME_TOKENS)]
    assert proposed[1].reason == "2 shared name token(s), Jaccard=0.50"
    assert edges(run(nodes, orphans=[1], name_tokens=True, min_jaccard=0.6)) == [
        (1, 2, SHARES_NAME_TOKENS)
    ]


def test_evidence_links_by_session_then_by_the_project_work_before_it() -> None:
    nodes = [
        node(1, "decision", tags=("project:app",), sessions=("s1",), minutes=10),
        node(2, "plan", tags=("project:app",), minutes=20),
        node(3, "commit", tags=("project:app",), sessions=("s1",), minutes=30),
        node(4, "commit", tags=("project:app",), minutes=25),  # no session: the work before it
        node(5, "lesson_learned", tags=("project:app",), minutes=40),  # after both commits
        node(6, "commit", tags=("project:app",), minutes=5),  # nothing before it
    ]

    proposed = run(nodes, orphans=[], evidence=[3, 4, 6], evidence_links=True)

    assert edges(proposed) == [(3, 1, EVIDENCES), (4, 2, EVIDENCES)]


def test_evidence_does_not_cross_projects_through_a_session() -> None:
    nodes = [
        node(1, "decision", tags=("project:a",), sessions=("s",)),
        node(2, "commit", tags=("project:b",), sessions=("s",)),
        node(3, "decision", sessions=("s",)),  # untagged: may be linked
    ]

    proposed = run(nodes, orphans=[], evidence=[2], evidence_links=True)

    assert edges(proposed) == [(2, 3, EVIDENCES)]


def test_project_scope_limits_evidence_and_work_items() -> None:
    nodes = [
        node(1, "decision", tags=("project:a", "project:b"), minutes=1),
        node(2, "decision", tags=("project:b",), minutes=2),
        node(3, "commit", tags=("project:a", "project:b"), minutes=3),
    ]

    proposed = run(nodes, orphans=[], evidence=[3], evidence_links=True, project="a")

    assert edges(proposed) == [(3, 1, EVIDENCES)]


def test_progress_is_called_once_per_source_per_rule() -> None:
    calls: list[int] = []
    nodes = {n.id: n for n in (node(1), node(2), node(3, "commit"))}
    settings = Settings(name_tokens=True)

    propose(nodes, [1, 2], [3], settings, calls.append)

    assert len(calls) == steps(2, 1, settings) == 2 * 3 + 1
