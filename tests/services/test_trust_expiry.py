"""Expiry (docs/trust.md): a `ttl_hours` memory disappears from recall, briefing, export and
memory_list once its time has passed, and comes back with `include_expired`. The clock is
moved through each service's `now`, never by sleeping."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from graph.indexing import embedding_pass
from graph.ops.briefing import briefing_index, build_briefing
from graph.ops.bundle.exporter import ExportInput, bundle_export
from graph.ops.memory_list import MemoryListInput, memory_list
from graph.ops.recall import RecallInput
from graph.ops.recall.selector import entity_recall
from graph.ops.remember import RememberInput, entity_remember
from tests.helpers import remember, stored
from tests.vector_support import use_embedder

pytestmark = pytest.mark.django_db

P = "acme/app"
TAG = f"project:{P}"


def recalled(query: str | None = None, *, at: datetime, **fields: Any) -> list[str]:
    payload: dict[str, Any] = dict(fields)
    if query is not None:
        payload["query"] = query
    result = entity_recall(data=RecallInput.model_validate(payload), now=at)
    return [e.name for e in result.entities]


def exported(*, at: datetime, **fields: Any) -> list[str]:
    bundle = bundle_export(data=ExportInput.model_validate(fields), now=at)
    return [e["name"] for e in bundle.entities]


def listed(*, at: datetime, **fields: Any) -> list[str]:
    return [m.name for m in memory_list(data=MemoryListInput(**fields), now=at).memories]


@pytest.fixture
def scratch() -> datetime:
    """A permanent memory and a one-hour scratch note of project P, stored now; returns now."""
    remember("kept", "the deploy runbook lives in ops/", tags=[TAG], source="ops/README")
    remember("scratch", "the deploy is half done, resume at step 4", tags=[TAG], ttl_hours=1)
    return timezone.now()


def test_a_scratch_note_is_recalled_until_its_time_runs_out(scratch: datetime) -> None:
    assert sorted(recalled("deploy", at=scratch)) == ["kept", "scratch"]
    assert sorted(recalled(at=scratch)) == ["kept", "scratch"]

    later = scratch + timedelta(hours=2)

    assert recalled("deploy", at=later) == ["kept"]
    assert recalled(at=later) == ["kept"]
    assert sorted(recalled("deploy", at=later, include_expired=True)) == ["kept", "scratch"]
    assert sorted(recalled(at=later, include_expired=True)) == ["kept", "scratch"]


def test_the_trust_block_says_when_it_expires_and_whether_it_has(scratch: datetime) -> None:
    later = scratch + timedelta(hours=2)
    result = entity_recall(data=RecallInput(query="deploy", include_expired=True), now=later)

    trust = {e.name: e.trust for e in result.entities}
    assert trust["scratch"].expired is True and trust["scratch"].expires_at is not None
    assert trust["kept"].expired is False and trust["kept"].expires_at is None


def test_an_expired_note_leaves_the_briefing_and_its_index(scratch: datetime) -> None:
    assert "resume at step 4" in build_briefing(P, now=scratch).text
    assert "resume at step 4" in briefing_index(P, now=scratch).text

    later = scratch + timedelta(hours=2)

    assert "resume at step 4" not in build_briefing(P, now=later).text
    assert "resume at step 4" not in briefing_index(P, now=later).text
    assert "runbook" in build_briefing(P, now=later).text


def test_an_expired_note_leaves_the_export_unless_asked_for(scratch: datetime) -> None:
    later = scratch + timedelta(hours=2)

    assert sorted(exported(at=scratch)) == ["kept", "scratch"]
    assert exported(at=later) == ["kept"]
    assert sorted(exported(at=later, include_expired=True)) == ["kept", "scratch"]


def test_an_expired_note_leaves_memory_list_unless_asked_for(scratch: datetime) -> None:
    later = scratch + timedelta(hours=2)

    assert listed(at=later) == ["kept"]
    assert sorted(listed(at=later, include_expired=True)) == ["kept", "scratch"]


def test_remembering_the_note_again_with_a_ttl_restarts_its_clock(scratch: datetime) -> None:
    later = scratch + timedelta(hours=2)
    entity_remember(
        data=RememberInput(name="scratch", type="note", observations=["step 5"], ttl_hours=1),
        source_host="test",
        now=later,
    )

    assert sorted(recalled("deploy", at=later + timedelta(minutes=30))) == ["kept", "scratch"]
    assert recalled("deploy", at=later + timedelta(hours=2)) == ["kept"]


def test_the_ttl_is_measured_from_the_write(scratch: datetime) -> None:
    expires = stored("scratch").expires_at
    assert expires is not None
    assert timedelta(minutes=59) < expires - scratch < timedelta(minutes=61)


@pytest.mark.clean_indexes  # it builds a vector generation (tests/conftest.py)
def test_a_note_found_only_by_meaning_expires_too(monkeypatch: pytest.MonkeyPatch) -> None:
    use_embedder(monkeypatch, "local")
    remember("office-kitchen", "The office coffee machine is on the third floor", ttl_hours=1)
    remember("parking", "Visitor parking is behind building B")
    assert embedding_pass.embed_pending().embedded == 2
    now = timezone.now()
    query = "where is the caffeine dispenser?"

    assert "office-kitchen" in recalled(query, at=now)
    assert "office-kitchen" not in recalled(query, at=now + timedelta(hours=2))
    assert "office-kitchen" in recalled(query, at=now + timedelta(hours=2), include_expired=True)
