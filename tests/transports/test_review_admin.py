"""The Django admin for proposals, `memesh createreviewer`, and the session/CSRF middleware the
review UI brings (which must leave the /v1 API as it was: no cookies, no CSRF token)."""

from __future__ import annotations

import json
import re
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from graph.models import Entity, Status
from proposals.models import Proposal, ProposalReview, ProposalStatus, TaskRun, TaskStatus
from proposals.staging import proposal_stage
from tests.dreams import PASSWORD, make_user, source_statuses, stage_digest, stage_relation

pytestmark = pytest.mark.django_db


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


# --- the list -------------------------------------------------------------------------------


def test_the_list_shows_proposals_and_filters_by_status_kind_and_project(
    reviewer_client: Client,
) -> None:
    alpha = stage_digest("alpha", 2)
    beta = stage_digest("beta", 2)
    relation = stage_relation("alpha")
    url = reverse("admin:proposals_proposal_changelist")

    everything = reviewer_client.get(url)
    assert everything.status_code == 200
    assert {p.pk for p in everything.context["cl"].result_list} == {alpha.pk, beta.pk, relation.pk}

    by_project = reviewer_client.get(url, {"project": "beta"})
    assert [p.pk for p in by_project.context["cl"].result_list] == [beta.pk]
    by_kind = reviewer_client.get(url, {"kind__exact": "relation"})
    assert [p.pk for p in by_kind.context["cl"].result_list] == [relation.pk]
    Proposal.objects.filter(pk=alpha.pk).update(status=ProposalStatus.REJECTED)
    by_status = reviewer_client.get(url, {"status__exact": "rejected"})
    assert [p.pk for p in by_status.context["cl"].result_list] == [alpha.pk]
    searched = reviewer_client.get(url, {"q": "beta week digest"})
    assert [p.pk for p in searched.context["cl"].result_list] == [beta.pk]


def test_no_proposal_can_be_added_or_edited_by_hand(reviewer_client: Client) -> None:
    proposal = stage_digest("alpha", 2)
    assert reviewer_client.get(reverse("admin:proposals_proposal_add")).status_code == 403
    change_url = reverse("admin:proposals_proposal_change", args=[proposal.pk])
    response = reviewer_client.post(change_url, {"project": "hacked", "status": "applied"})
    assert response.status_code == 403
    proposal.refresh_from_db()
    assert (proposal.project, proposal.status) == ("alpha", ProposalStatus.PENDING)


# --- the detail page ------------------------------------------------------------------------


def test_the_detail_page_shows_the_proposal_beside_its_full_sources(
    reviewer_client: Client,
) -> None:
    proposal = stage_digest("alpha", 3)
    response = reviewer_client.get(reverse("admin:proposals_proposal_change", args=[proposal.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="comparison"' in html
    assert "alpha: 3 flaky tests were fixed this week" in html  # the proposal
    for i in range(3):  # every source memory, with its observation text
        assert f"alpha: commit {i}" in html
        assert f"alpha commit {i}: fixed flaky test {i}" in html
    assert reverse("admin:proposals_proposal_accept", args=[proposal.pk]) in html
    assert reverse("admin:proposals_proposal_reject", args=[proposal.pk]) in html


def test_accepting_on_the_detail_page_applies_it_and_writes_an_admin_audit_record(
    reviewer_client: Client,
) -> None:
    proposal = stage_digest("alpha", 12)
    response = reviewer_client.post(
        reverse("admin:proposals_proposal_accept", args=[proposal.pk]),
        REMOTE_ADDR="127.0.0.9",
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse(
        "admin:proposals_proposal_change", args=[proposal.pk]
    )
    assert any("Accepted 1 proposal" in m for m in messages_of(response))
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED
    assert source_statuses(proposal) == {Status.ARCHIVED}
    digest = Entity.objects.get(name="alpha week digest")
    assert digest.status == Status.ACTIVE
    review = ProposalReview.objects.get(proposal=proposal)
    assert (review.action, review.outcome, review.channel, review.reviewer, review.origin) == (
        "accept",
        "applied",
        "admin",
        "rita",
        "127.0.0.9",
    )
    # The audit record is shown on the page, read-only.
    assert "127.0.0.9" in response.content.decode()


def test_a_second_accept_fails_cleanly_with_a_message(reviewer_client: Client) -> None:
    proposal = stage_digest("alpha", 2)
    url = reverse("admin:proposals_proposal_accept", args=[proposal.pk])
    reviewer_client.post(url)
    response = reviewer_client.post(url, follow=True)
    assert response.status_code == 200
    errors = [m for m in response.context["messages"] if m.level_tag == "error"]
    assert len(errors) == 1
    assert "is applied, not pending" in str(errors[0])
    assert Entity.objects.filter(name__startswith="alpha week digest").count() == 1
    assert list(
        ProposalReview.objects.filter(proposal=proposal).values_list("outcome", flat=True)
    ) == ["applied", "refused"]


def test_rejecting_on_the_detail_page_records_the_reason_and_leaves_sources_active(
    reviewer_client: Client,
) -> None:
    proposal = stage_digest("alpha", 3)
    response = reviewer_client.post(
        reverse("admin:proposals_proposal_reject", args=[proposal.pk]),
        {"reason": "too vague"},
        follow=True,
    )
    assert any("Rejected 1 proposal" in m for m in messages_of(response))
    proposal.refresh_from_db()
    assert (proposal.status, proposal.reason) == (ProposalStatus.REJECTED, "too vague")
    assert source_statuses(proposal) == {Status.ACTIVE}
    review = ProposalReview.objects.get(proposal=proposal)
    assert (review.action, review.channel, review.reason) == ("reject", "admin", "too vague")


def test_a_reject_reason_over_500_characters_is_refused(reviewer_client: Client) -> None:
    proposal = stage_digest("alpha", 2)
    response = reviewer_client.post(
        reverse("admin:proposals_proposal_reject", args=[proposal.pk]),
        {"reason": "x" * 501},
        follow=True,
    )
    assert any("at most 500 characters" in m for m in messages_of(response))
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


# --- the list actions -----------------------------------------------------------------------


def test_list_actions_accept_and_reject_the_selected_proposals(reviewer_client: Client) -> None:
    first, second = stage_digest("alpha", 2), stage_digest("beta", 2)
    third = stage_digest("gamma", 2)
    url = reverse("admin:proposals_proposal_changelist")
    accepted = reviewer_client.post(
        url,
        {"action": "accept_selected", "_selected_action": [first.pk, second.pk]},
        follow=True,
    )
    assert any("Accepted 2 proposal" in m for m in messages_of(accepted))
    rejected = reviewer_client.post(
        url,
        {"action": "reject_selected", "_selected_action": [third.pk], "reason": "noise"},
        follow=True,
    )
    assert any("Rejected 1 proposal" in m for m in messages_of(rejected))
    statuses = dict(Proposal.objects.values_list("pk", "status"))
    assert statuses == {
        first.pk: ProposalStatus.APPLIED,
        second.pk: ProposalStatus.APPLIED,
        third.pk: ProposalStatus.REJECTED,
    }
    assert Proposal.objects.get(pk=third.pk).reason == "noise"
    assert source_statuses(third) == {Status.ACTIVE}
    assert set(ProposalReview.objects.values_list("channel", flat=True)) == {"admin"}


def test_a_list_action_reports_each_refusal(reviewer_client: Client) -> None:
    done = stage_digest("alpha", 2)
    fresh = stage_digest("beta", 2)
    reviewer_client.post(reverse("admin:proposals_proposal_accept", args=[done.pk]))
    response = reviewer_client.post(
        reverse("admin:proposals_proposal_changelist"),
        {"action": "accept_selected", "_selected_action": [done.pk, fresh.pk]},
        follow=True,
    )
    texts = messages_of(response)
    assert any("Accepted 1 proposal(s): #" + str(fresh.pk) in m for m in texts)
    assert any(f"Proposal #{done.pk} was not accepted" in m for m in texts)


# --- the permission -------------------------------------------------------------------------


def test_a_staff_user_without_the_review_permission_cannot_accept(client: Client) -> None:
    proposal = stage_digest("alpha", 2)
    client.force_login(make_user("vera", review=False))
    # They may look...
    page = client.get(reverse("admin:proposals_proposal_change", args=[proposal.pk]))
    assert page.status_code == 200
    assert reverse("admin:proposals_proposal_accept", args=[proposal.pk]) not in (
        page.content.decode()
    )
    changelist = client.get(reverse("admin:proposals_proposal_changelist"))
    assert "accept_selected" not in changelist.content.decode()
    # ...but neither the button's URL nor the list action does anything.
    button = client.post(reverse("admin:proposals_proposal_accept", args=[proposal.pk]))
    assert button.status_code == 403
    client.post(
        reverse("admin:proposals_proposal_changelist"),
        {"action": "accept_selected", "_selected_action": [proposal.pk]},
    )
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING
    assert not ProposalReview.objects.exists()


def test_an_anonymous_visitor_is_sent_to_the_admin_login(client: Client) -> None:
    proposal = stage_digest("alpha", 2)
    response = client.post(reverse("admin:proposals_proposal_accept", args=[proposal.pk]))
    assert response.status_code == 302
    assert response.headers["Location"].startswith(reverse("admin:login"))
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


# --- memesh createreviewer ------------------------------------------------------------------


def test_createreviewer_makes_a_staff_user_who_may_review(client: Client) -> None:
    out = StringIO()
    call_command("createreviewer", "rosa", "--password", PASSWORD, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["username"] == "rosa"
    assert report["created"] is True
    assert "proposals.review_proposal" in report["permissions"]
    user = get_user_model().objects.get(username="rosa")
    assert user.is_staff and not user.is_superuser
    assert user.has_perm("proposals.review_proposal")
    assert user.check_password(PASSWORD)
    # The account works: it logs in and accepts from the admin.
    proposal = stage_digest("alpha", 2)
    assert client.login(username="rosa", password=PASSWORD)
    client.post(reverse("admin:proposals_proposal_accept", args=[proposal.pk]))
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.APPLIED


def test_createreviewer_reads_the_password_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "MEMESH_REVIEWER_PASSWORD", "from the environment")
    out = StringIO()
    call_command("createreviewer", "eve", stdout=out)
    assert "Reviewer eve created" in out.getvalue()
    assert get_user_model().objects.get(username="eve").check_password("from the environment")


def test_createreviewer_on_an_existing_user_grants_the_rights_and_keeps_the_password() -> None:
    get_user_model().objects.create_user("sam", password=PASSWORD)
    out = StringIO()
    call_command("createreviewer", "sam", "--json", stdout=out)
    assert json.loads(out.getvalue())["created"] is False
    user = get_user_model().objects.get(username="sam")
    assert user.is_staff and user.has_perm("proposals.review_proposal")
    assert user.check_password(PASSWORD)


def test_createreviewer_without_any_password_refuses_a_new_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(settings, "MEMESH_REVIEWER_PASSWORD", "")
    # stdin is not a terminal under pytest, so there is no prompt to fall back on.
    with pytest.raises(CommandError, match="No password"):
        call_command("createreviewer", "nobody")
    assert not get_user_model().objects.filter(username="nobody").exists()


# --- the REST API is untouched by the review UI's middleware --------------------------------


def _v1_views(patterns: list[Any], prefix: str = "") -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for entry in patterns:
        if isinstance(entry, URLResolver):
            found += _v1_views(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            found.append((prefix + str(entry.pattern), entry.callback))
    return found


def test_every_v1_view_is_exempt_from_csrf() -> None:
    views = [(route, view) for route, view in _v1_views(get_resolver().url_patterns)]
    v1 = [(route, view) for route, view in views if route.startswith("v1/")]
    assert len(v1) > 10
    assert [route for route, view in v1 if not getattr(view, "csrf_exempt", False)] == []


def test_a_v1_post_without_cookies_or_token_works_and_touches_no_session() -> None:
    client = Client(enforce_csrf_checks=True)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            "/v1/remember",
            {"name": "csrf probe", "type": "note", "observations": ["posted without a token"]},
            content_type="application/json",
        )
    assert response.status_code == 200, response.content
    assert response.json()["success"] is True
    assert "Set-Cookie" not in response.headers
    assert "Cookie" not in response.headers.get("Vary", "")
    assert not [q for q in queries if "django_session" in q["sql"] or "auth_user" in q["sql"]]


def test_a_retired_route_answers_410_to_a_post_without_a_csrf_token() -> None:
    response = Client(enforce_csrf_checks=True).post(
        "/v1/verify", "{}", content_type="application/json"
    )
    assert response.status_code == 410
    assert response.json()["errorCode"] == "route.retired"


def test_an_unknown_v1_route_still_answers_the_json_404_to_a_post() -> None:
    response = Client(enforce_csrf_checks=True).post(
        "/v1/no-such-route", "{}", content_type="application/json"
    )
    assert response.status_code == 404
    assert response.json()["success"] is False


# --- the review page without a browser (tests/e2e/test_review_browser.py drives Chromium) -------


def test_the_review_page_sends_anonymous_visitors_to_the_login_page(client: Client) -> None:
    response = client.get(reverse("proposals:queue"))
    assert response.status_code == 302
    assert response.headers["Location"] == f"{reverse('login')}?next=/review/"


def test_the_review_page_is_forbidden_without_the_review_permission(client: Client) -> None:
    proposal = stage_digest("alpha", 2)
    client.force_login(make_user("vera", review=False))
    assert client.get(reverse("proposals:queue")).status_code == 403
    assert client.post(reverse("proposals:accept", args=[proposal.pk])).status_code == 403
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


def test_the_queue_filters_by_kind_and_project(reviewer_client: Client) -> None:
    alpha, beta, relation = (
        stage_digest("alpha", 2),
        stage_digest("beta", 2),
        stage_relation("alpha"),
    )
    url = reverse("proposals:queue")

    def listed(**query: str) -> list[int]:
        return [card["id"] for card in reviewer_client.get(url, query).context["cards"]]

    assert set(listed()) == {alpha.pk, beta.pk, relation.pk}
    assert listed(project="beta") == [beta.pk]
    assert listed(kind="relation") == [relation.pk]
    assert listed(kind="digest", project="alpha") == [alpha.pk]


def test_the_queue_says_whether_a_dream_is_due_and_lists_the_last_automatic_runs(
    reviewer_client: Client, llm: Any
) -> None:

    TaskRun.objects.create(
        kind="dream_run",
        params={"trigger": "schedule"},
        status=TaskStatus.SUCCEEDED,
        result={"proposalsCreated": 2},
    )
    TaskRun.objects.create(kind="dream_run", params={"project": "alpha"})  # a client's run

    response = reviewer_client.get(reverse("proposals:queue"))

    [run] = response.context["automatic"]
    assert (run["trigger"], run["status"], run["proposalsCreated"]) == ("schedule", "succeeded", 2)
    text = " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())
    assert "Automatic dreams (the Stop hook and the worker's schedule): not due — the last " in text
    assert re.search(r"Last runs: schedule \S+ \S+ succeeded, 2 proposals", text), text


def test_a_mined_memory_is_shown_with_its_session_and_evidence(reviewer_client: Client) -> None:

    proposal, _ = proposal_stage(
        kind="memory",
        project="alpha",
        cluster_key="transcript:s1:0-4",
        source_ids=[],
        proposed={
            "name": "use-wal",
            "type": "decision",
            "observations": ["Writes begin IMMEDIATE."],
            "evidence": "switch every write to BEGIN IMMEDIATE",
            "source": {"transcript": "claude-code", "sessionId": "s1", "turns": [0, 4], "at": "t"},
        },
    )

    html = reviewer_client.get(reverse("proposals:detail", args=[proposal.pk])).content.decode()

    assert "From a session transcript" in html
    assert "<code>s1</code>" in html and "turns 0–4" in html
    assert "switch every write to BEGIN IMMEDIATE" in html
    assert "accepting creates this decision" in html


def test_an_htmx_reject_with_too_long_a_reason_keeps_the_card_with_the_error(
    reviewer_client: Client,
) -> None:
    proposal = stage_digest("alpha", 2)
    response = reviewer_client.post(
        reverse("proposals:reject", args=[proposal.pk]),
        {"reason": "x" * 501},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="proposal-{proposal.pk}"' in html
    assert "at most 500 characters" in html
    assert "<html" not in html  # a fragment, swapped into the page
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


def test_a_review_post_without_a_csrf_token_is_refused() -> None:
    proposal = stage_digest("alpha", 2)
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user("rita", review=True))
    response = client.post(reverse("proposals:accept", args=[proposal.pk]))
    assert response.status_code == 403
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.PENDING


def test_the_server_itself_serves_the_review_pages_scripts_and_css(
    reviewer_client: Client,
) -> None:
    # `memesh serve` has no web server or collectstatic step in front of Django.
    page = reviewer_client.get(reverse("proposals:queue")).content.decode()
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    assert any("htmx" in url and url.endswith(".js") for url in assets)
    assert any(url.endswith("review.css") for url in assets)
    for url in assets:
        response = reviewer_client.get(url)
        assert response.status_code == 200, url
        assert b"".join(response.streaming_content)  # type: ignore[attr-defined]
