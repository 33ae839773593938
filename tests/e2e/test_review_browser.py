"""The review page end to end in headless Chromium: log in, open the queue, expand a card,
accept one and reject one in place (htmx), and the same accept with JavaScript turned off.

Debian's /usr/bin/chromium is driven by Playwright (no browser download); `scripts/dev.py
test` installs it. Screenshots go to $MEMESH_TEST_ARTIFACTS (default: test-artifacts/).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import Browser, Page

from graph.models import Entity, Status
from proposals.decisions import proposal_accept
from proposals.models import Proposal, ProposalReview, ProposalStatus
from tests.dreams import source_statuses, stage_digest
from tests.processes import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("MEMESH_TEST_ARTIFACTS") or ROOT / "test-artifacts")
USERNAME = "rita"
PASSWORD = "a long enough browser password"


@pytest.fixture(scope="module", autouse=True)
def _orm_beside_playwright() -> Iterator[None]:
    """Playwright's sync API (conftest's `browser`) runs an event loop in this thread, so
    Django would refuse the test's own ORM calls as "async unsafe"; they are plain synchronous
    calls here."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


@pytest.fixture
def reviewer() -> str:
    call_command("createreviewer", USERNAME, "--password", PASSWORD, stdout=StringIO())
    return USERNAME


def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"review-{name}.png"), full_page=True)


def log_in(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/review/")
    # Not logged in: the queue sends the browser to the login page first.
    assert "/accounts/login/" in page.url
    page.get_by_label("User name").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base_url}/review/")


def test_a_reviewer_expands_accepts_and_rejects_in_place(
    browser: Browser, live_server: object, reviewer: str
) -> None:
    base = str(live_server)
    alpha = stage_digest("alpha", 5)
    beta = stage_digest("beta", 3)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    log_in(page, base)
    assert page.locator("article.card").count() == 2
    screenshot(page, "1-queue")

    # A marker on window survives only if nothing below navigates.
    page.evaluate("window.reviewMarker = 'still here'")

    card = page.locator(f"#proposal-{alpha.pk}")
    card.get_by_role("link", name="Show sources and proposal").click()
    comparison = card.locator(".comparison")
    comparison.wait_for()
    assert "alpha: 5 flaky tests were fixed this week" in comparison.inner_text()
    for i in range(5):
        assert f"alpha commit {i}: fixed flaky test {i}" in comparison.inner_text()
    screenshot(page, "2-expanded")

    card.get_by_role("button", name="Accept").click()
    page.locator(f"#proposal-{alpha.pk}.result-applied").wait_for()
    assert (
        "accepted: created alpha week digest" in page.locator(f"#proposal-{alpha.pk}").inner_text()
    )

    beta_card = page.locator(f"#proposal-{beta.pk}")
    beta_card.get_by_label("Reason for rejecting").fill("the three commits are unrelated")
    beta_card.get_by_role("button", name="Reject").click()
    page.locator(f"#proposal-{beta.pk}.result-rejected").wait_for()
    screenshot(page, "3-after-review")

    assert page.evaluate("window.reviewMarker") == "still here"
    assert page.url == f"{base}/review/"

    alpha.refresh_from_db()
    beta.refresh_from_db()
    assert alpha.status == ProposalStatus.APPLIED
    assert source_statuses(alpha) == {Status.ARCHIVED}
    assert Entity.objects.get(name="alpha week digest").status == Status.ACTIVE
    assert (beta.status, beta.reason) == (
        ProposalStatus.REJECTED,
        "the three commits are unrelated",
    )
    assert source_statuses(beta) == {Status.ACTIVE}
    audit = list(
        ProposalReview.objects.order_by("id").values_list(
            "proposal_id", "action", "outcome", "channel", "reviewer", "origin"
        )
    )
    assert audit == [
        (alpha.pk, "accept", "applied", "htmx", reviewer, "127.0.0.1"),
        (beta.pk, "reject", "rejected", "htmx", reviewer, "127.0.0.1"),
    ]

    # The same review, as the admin shows it: the proposal beside its sources, and the audit.
    page.goto(f"{base}/admin/proposals/proposal/{alpha.pk}/change/")
    assert "applied" in page.locator("#review-actions").inner_text()
    assert "alpha commit 4: fixed flaky test 4" in page.locator(".comparison").inner_text()
    screenshot(page, "7-admin-detail")
    context.close()


def test_an_accept_that_is_refused_shows_the_reason_in_the_card(
    browser: Browser, live_server: object, reviewer: str
) -> None:
    base = str(live_server)
    proposal = stage_digest("alpha", 2)
    context = browser.new_context()
    page = context.new_page()
    log_in(page, base)
    # Someone else accepts it (from the CLI) while the page is open.
    proposal_accept(proposal.pk, channel="cli", reviewer="other")
    page.locator(f"#proposal-{proposal.pk}").get_by_role("button", name="Accept").click()
    error = page.locator(f"#proposal-{proposal.pk} .error")
    error.wait_for()
    assert "is applied, not pending" in error.inner_text()
    screenshot(page, "4-refused")
    assert Entity.objects.filter(name__startswith="alpha week digest").count() == 1
    context.close()


def test_without_javascript_the_same_accept_works_by_full_page_post(
    browser: Browser, live_server: object, reviewer: str
) -> None:
    base = str(live_server)
    alpha = stage_digest("alpha", 3)
    beta = stage_digest("beta", 2)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, base)

    # The expand link is a plain link to the proposal's page.
    page.locator(f"#proposal-{alpha.pk}").get_by_role(
        "link", name="Show sources and proposal"
    ).click()
    page.wait_for_url(f"{base}/review/{alpha.pk}/")
    assert "alpha commit 2: fixed flaky test 2" in page.locator(".sources").inner_text()
    screenshot(page, "5-nojs-detail")

    page.get_by_role("button", name="Accept").click()
    # Post/redirect/get: back on the queue, with a message, and the card gone.
    page.wait_for_url(f"{base}/review/")
    assert "accepted: created alpha week digest" in page.locator(".messages").inner_text()
    assert page.locator(f"#proposal-{alpha.pk}").count() == 0

    page.locator(f"#proposal-{beta.pk}").get_by_label("Reason for rejecting").fill("duplicate")
    page.locator(f"#proposal-{beta.pk}").get_by_role("button", name="Reject").click()
    page.wait_for_url(f"{base}/review/")
    assert f"Proposal #{beta.pk} rejected." in page.locator(".messages").inner_text()
    screenshot(page, "6-nojs-after-review")

    assert Proposal.objects.get(pk=alpha.pk).status == ProposalStatus.APPLIED
    assert source_statuses(alpha) == {Status.ARCHIVED}
    assert Proposal.objects.get(pk=beta.pk).reason == "duplicate"
    assert list(ProposalReview.objects.values_list("channel", flat=True)) == ["htmx", "htmx"]
    context.close()
