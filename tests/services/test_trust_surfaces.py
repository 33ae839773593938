"""Briefings (and the SessionStart block, which renders the same briefing) mark hypotheses and
stale facts as unconfirmed, in the same words everywhere
(graph.ops.kit.trust.view.unconfirmed_label)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from graph.models import Entity
from graph.ops.briefing import briefing_index, build_briefing
from graph.ops.kit.trust.view import STALE_AFTER_DAYS
from tests.helpers import remember, stored

pytestmark = pytest.mark.django_db

P = "acme/app"
TAG = f"project:{P}"


def line_of(text: str, needle: str) -> str:
    return next(line for line in text.splitlines() if needle in line)


def today() -> str:
    return timezone.now().date().isoformat()


def test_a_hypothesis_is_marked_with_the_date_it_stands_unconfirmed_since() -> None:
    remember("guess", "The cache is warm at night", tags=[TAG])

    line = line_of(build_briefing(P).text, "cache is warm")

    assert f"— hypothesis, unconfirmed since {today()} [mem:{stored('guess').pk}]" in line


def test_a_fresh_fact_carries_no_mark() -> None:
    remember("deploy", "Deploys restart php-fpm", tags=[TAG], source="runbook")

    line = line_of(build_briefing(P).text, "restart php-fpm")

    assert "unconfirmed" not in line


def test_a_fact_not_observed_for_thirty_days_is_marked_stale() -> None:
    remember("deploy", "Deploys restart php-fpm", tags=[TAG], source="runbook")
    observed = timezone.now() - timedelta(days=STALE_AFTER_DAYS + 5)
    Entity.objects.filter(name="deploy").update(last_observed_at=observed)

    line = line_of(build_briefing(P).text, "restart php-fpm")

    assert f"— unconfirmed since {observed.date().isoformat()}: re-check before relying" in line


def test_the_clock_of_the_briefing_decides_staleness() -> None:
    remember("deploy", "Deploys restart php-fpm", tags=[TAG], source="runbook")
    later = timezone.now() + timedelta(days=STALE_AFTER_DAYS + 1)

    assert "unconfirmed since" in line_of(build_briefing(P, now=later).text, "php-fpm")


def test_a_decision_shows_its_reason_then_its_trust_mark() -> None:
    remember("jwt", "Chose JWT", type="decision", title="Use JWT", why="stateless", tags=[TAG])

    line = line_of(build_briefing(P).text, "Use JWT")

    assert re.search(
        r"Use JWT — why: stateless — hypothesis, unconfirmed since [\d-]+ \[mem:", line
    )


def test_a_stale_decision_flagged_by_the_guide_is_not_flagged_twice() -> None:
    remember(
        "jwt",
        "Chose JWT",
        type="decision",
        title="Use JWT",
        why="stateless",
        tags=[TAG],
        source="ADR 7",
    )
    old = timezone.now() - timedelta(days=45)
    Entity.objects.filter(name="jwt").update(updated_at=old, last_observed_at=old)

    line = line_of(build_briefing(P).text, "Use JWT")

    assert "unconfirmed 45 days: re-check before relying" in line
    assert line.count("unconfirmed") == 1


def test_the_index_and_the_loose_memories_are_marked_alike() -> None:
    remember("idx", "An indexed guess", tags=[TAG])
    remember("loose", "A guess of no project")

    index = briefing_index(P).text
    brief = build_briefing(P, "standard").text

    assert "hypothesis, unconfirmed since" in line_of(index, "An indexed guess")
    assert "hypothesis, unconfirmed since" in line_of(brief, "A guess of no project")
