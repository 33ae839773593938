"""No confidence laundering, as a property (docs/trust.md): whatever sequence of remember,
import, dream accept (memesh's reviewed consolidation: digests and patterns) and forget runs,
no memory becomes a fact, or more confident than it was stated at or than the least confident
of the memories it was derived from, without an `observe` with a source. Observes run in the
sequences too, and the model below follows them: it is what they may do, and only they.

The model keeps, per name, whether the memory may be a fact and the highest confidence it may
have; after every step each stored memory is checked against it. Each example runs in a
transaction rolled back at its end, so examples start from an empty graph.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import MemeshError
from graph.models import Entity, Relation, Status
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
from proposals.decisions import proposal_accept
from proposals.models import ProposalKind
from proposals.staging import proposal_stage

pytestmark = pytest.mark.django_db

CTX = CallContext(source_host="property")
# Few names, so that steps meet on the same memories (a second remember, an import over it).
STATED = ["a", "b", "c"]
# Accepted proposals are named "summary", "summary-2", ... (proposals.appliers._free_name):
# later steps may remember into, observe, import over or summarise those too.
DERIVED = ["summary", "summary-2"]
NAMES = st.sampled_from(STATED + DERIVED)
SOURCES = st.one_of(st.none(), st.sampled_from(["runbook", "a commit", "the user"]))
CONFIDENCES = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0, allow_nan=False))

remember_steps = st.tuples(
    st.just("remember"),
    NAMES,
    SOURCES,
    CONFIDENCES,
    st.one_of(st.none(), NAMES),  # parent
    st.booleans(),  # replace
)
import_steps = st.tuples(
    st.just("import"),
    NAMES,
    SOURCES,
    CONFIDENCES,
    st.sampled_from(["skip", "append", "overwrite"]),
)
accept_steps = st.tuples(
    st.just("accept"),
    st.sampled_from([ProposalKind.DIGEST, ProposalKind.PATTERN_EMERGENT]),
    st.lists(NAMES, min_size=1, max_size=4, unique=True),
)
observe_steps = st.tuples(st.just("observe"), NAMES, SOURCES)
forget_steps = st.tuples(st.just("forget"), NAMES)
STEPS = st.lists(
    st.one_of(remember_steps, import_steps, accept_steps, observe_steps, forget_steps),
    min_size=1,
    max_size=12,
)


@dataclass
class Allowed:
    """What a memory may be without an observe since: a fact or not, at most this confident."""

    fact: bool
    confidence: float


def _default(source: str | None) -> float:
    return 1.0 if source is not None else 0.5


def _try(step: Any) -> None:
    # A refusal (observe-required, source-required, not found, ...) changes nothing.
    with contextlib.suppress(MemeshError):
        step()


def _remember(model: dict[str, Allowed], step: tuple[Any, ...]) -> None:
    _, name, source, confidence, parent, replace = step
    existing = Entity.objects.filter(name=name).first()
    payload: dict[str, Any] = {"name": name, "type": "note", "observations": [f"{name} says"]}
    if replace:
        payload.update(replace=True, observations=[f"{name} corrected"])
    if source is not None:
        payload["source"] = source
    if confidence is not None:
        payload["confidence"] = confidence
    parent_entity = Entity.objects.filter(name=parent).first() if parent else None
    if parent_entity is not None and parent != name:
        payload["parent_id"] = parent_entity.pk
    before = Entity.objects.filter(name=name).exists()
    _try(lambda: OPERATIONS["remember"].run(payload, CTX))
    created = not before and Entity.objects.filter(name=name).exists()
    if existing is None and created:
        cap = confidence if confidence is not None else _default(source)
        if "parent_id" in payload and source is None:
            assert parent_entity is not None
            cap = min(cap, parent_entity.confidence)
        model[name] = Allowed(fact=source is not None, confidence=cap)


def _import(model: dict[str, Allowed], step: tuple[Any, ...]) -> None:
    _, name, source, confidence, strategy = step
    trust: dict[str, Any] = {"status": "fact"}  # claimed: an import must not believe it
    if source is not None:
        trust["source"] = source
    if confidence is not None:
        trust["confidence"] = confidence
    entry = {"name": name, "type": "note", "observations": ["imported"], "trust": trust}
    before = Entity.objects.filter(name=name).exists()
    OPERATIONS["import"].run({"data": {"entities": [entry]}, "merge_strategy": strategy}, CTX)
    if not before and Entity.objects.filter(name=name).exists():
        cap = confidence if confidence is not None else _default(source)
        model[name] = Allowed(fact=source is not None, confidence=cap)


def _accept(model: dict[str, Allowed], step: tuple[Any, ...]) -> None:
    _, kind, names = step
    sources = list(Entity.objects.filter(name__in=names))
    if not sources:
        return
    confidence = {e.pk: e.confidence for e in sources}
    proposal, _ = proposal_stage(
        kind=kind,
        project="p",
        cluster_key="k",
        source_ids=[e.pk for e in sources],
        proposed={"name": "summary", "observations": ["what they share"]},
    )
    known = set(Entity.objects.values_list("name", flat=True))
    _try(lambda: proposal_accept(proposal.pk, channel="cli"))
    for created in Entity.objects.exclude(name__in=known):
        if kind == ProposalKind.DIGEST:
            used = Relation.objects.filter(from_entity=created, type="summarizes")
            ids = list(used.values_list("to_entity_id", flat=True))
        else:
            used = Relation.objects.filter(to_entity=created, type="evidence_for")
            ids = list(used.values_list("from_entity_id", flat=True))
        assert ids, "an accept links what it was derived from"
        model[created.name] = Allowed(fact=False, confidence=min(confidence[i] for i in ids))


def _observe(model: dict[str, Allowed], step: tuple[Any, ...]) -> None:
    _, name, source = step
    entity = Entity.objects.filter(name=name, status=Status.ACTIVE).first()
    payload: dict[str, Any] = {"name": name}
    if source is not None:
        payload["source"] = source
    _try(lambda: OPERATIONS["observe"].run(payload, CTX))
    if entity is not None and (source is not None or entity.trust == "fact"):
        # The one path that may raise trust: a source given, or a fact's own source again.
        model[name] = Allowed(fact=True, confidence=1.0)


def _forget(model: dict[str, Allowed], step: tuple[Any, ...]) -> None:
    OPERATIONS["forget"].run({"name": step[1]}, CTX)


RUN = {
    "remember": _remember,
    "import": _import,
    "accept": _accept,
    "observe": _observe,
    "forget": _forget,
}


def _check(model: dict[str, Allowed], after: tuple[Any, ...]) -> None:
    for entity in Entity.objects.all():
        allowed = model[entity.name]
        where = f"{entity.name} after {after}"
        if entity.trust == "fact":
            assert allowed.fact, f"{where}: a fact without an observe with a source"
        assert entity.confidence <= allowed.confidence + 1e-9, (
            f"{where}: confidence {entity.confidence} above {allowed.confidence}"
        )


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,  # the same sequences on every run: a failure reproduces
)
@given(steps=STEPS)
def test_no_sequence_raises_trust_without_an_observe_with_a_source(
    steps: list[tuple[Any, ...]],
) -> None:
    with transaction.atomic():
        model: dict[str, Allowed] = {}
        for step in steps:
            RUN[step[0]](model, step)
            _check(model, step)
        transaction.set_rollback(True)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(steps=st.lists(st.one_of(remember_steps, import_steps, accept_steps), max_size=10))
def test_without_any_observe_a_derived_memory_is_never_a_fact(
    steps: list[tuple[Any, ...]],
) -> None:
    with transaction.atomic():
        model: dict[str, Allowed] = {}
        for step in steps:
            RUN[step[0]](model, step)
        derived = Entity.objects.filter(metadata__provenance__source_host="dream")
        assert all(e.trust == "hypothesis" and e.last_observed_at is None for e in derived)
        assert all(e.hop_count >= 1 for e in derived)
        transaction.set_rollback(True)
