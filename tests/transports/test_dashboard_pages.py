"""The dashboard's pages through Django's test client: access (the review site's login and
permission), each page showing what its operation returns, the htmx partials, and the actions
(pin, forget, demo seed/reset, settings) going through the services. The browser test
(tests/e2e/test_dashboard_browser.py) drives the same pages in Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from core import config_sections as config
from dream.demo import demo_entity_ids
from graph.models import Entity, Status
from graph.ops.pin import PIN_KEY
from graph.ops.recall.access import flush_accesses
from tests.dreams import make_user, stage_digest
from tests.fakes.llm_servers import FakeLLMServer
from tests.helpers import remember, remember_commit, stored

# A config.json of each test's own: the settings tests write one.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("home")]

PAGES = ["home", "memories", "project", "graph", "settings"]


def text_of(response: Any) -> str:
    return response.content.decode()


def messages_of(client: Client, url: str) -> str:
    """The page a redirect lands on, for its messages."""
    return text_of(client.get(url))


@pytest.mark.parametrize("name", PAGES)
def test_a_logged_out_visitor_is_sent_to_the_login_page(name: str) -> None:
    response = Client().get(reverse(f"dashboard:{name}"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("name", PAGES)
def test_an_account_without_the_review_permission_is_refused(name: str) -> None:
    client = Client()
    client.force_login(make_user("viewer", review=False))
    assert client.get(reverse(f"dashboard:{name}")).status_code == 403


@pytest.mark.parametrize("name", PAGES)
def test_every_page_renders_on_an_empty_graph(reviewer_client: Client, name: str) -> None:
    response = reviewer_client.get(reverse(f"dashboard:{name}"))
    assert response.status_code == 200
    assert 'aria-current="page"' in text_of(response)


def test_home_offers_the_demo_tour_on_an_empty_graph_and_seeds_then_resets_it(
    reviewer_client: Client,
) -> None:
    home = text_of(reviewer_client.get(reverse("dashboard:home")))
    assert "Nothing remembered yet" in home
    assert "Remove the demo tour" not in home

    seeded = reviewer_client.post(reverse("dashboard:demo-seed"))
    assert seeded.status_code == 302
    count = len(demo_entity_ids())
    assert count > 0
    after = messages_of(reviewer_client, seeded["Location"])
    assert f"Demo tour loaded: {count} memories inserted." in after
    assert "Remove the demo tour" in after
    # The tour's pending proposal is listed, linking to the review page.
    assert reverse("proposals:queue") in after
    assert "1 waiting for review" in after

    reset = reviewer_client.post(reverse("dashboard:demo-reset"))
    assert f"Demo tour removed: {count} memories deleted." in messages_of(
        reviewer_client, reset["Location"]
    )
    assert demo_entity_ids() == []
    assert Entity.objects.count() == 0


def test_home_shows_the_health_score_and_the_timeline(reviewer_client: Client) -> None:
    remember("lesson-one", "always pin the lockfile", type="lesson_learned")
    response = reviewer_client.get(reverse("dashboard:home"))
    analytics = response.context["analytics"]
    page = text_of(response)
    assert f'<span class="big">{analytics.healthScore}</span>' in page
    for factor in ("Activity", "Quality", "Freshness", "Lessons"):
        assert factor in page
    assert "created: 1" in page  # the timeline's legend: one memory created in the window
    assert "Nothing remembered yet" not in page


def test_a_search_runs_recall_and_shows_its_retrieval_and_match(reviewer_client: Client) -> None:
    remember("auth-decision", "sessions expire after 30 minutes", type="decision")
    remember("cache-note", "redis caches product pages")
    response = reviewer_client.get(reverse("dashboard:memories"), {"q": "sessions expire"})
    page = text_of(response)
    assert "auth-decision" in page
    assert "cache-note" not in page
    assert "Recall: <strong>fts</strong> retrieval" in page
    assert "keyword match, relevance" in page
    # Recall counted the access (batched: flushed here), as it does on every transport.
    flush_accesses()
    assert stored("auth-decision").access_count == 1


def test_search_as_you_type_answers_htmx_with_the_results_alone(reviewer_client: Client) -> None:
    remember("auth-decision", "sessions expire after 30 minutes", type="decision")
    response = reviewer_client.get(
        reverse("dashboard:memories"),
        {"q": "sessions"},
        headers={"HX-Request": "true", "HX-Target": "results"},
    )
    page = text_of(response)
    assert "auth-decision" in page
    assert "<html" not in page


def test_the_filters_narrow_the_listing_by_project_type_and_status(reviewer_client: Client) -> None:
    remember("a-note", "alpha thing", tags=["project:alpha"])
    remember("b-note", "beta thing", tags=["project:beta"])
    remember("b-plan", "beta plan", type="plan", tags=["project:beta"])
    url = reverse("dashboard:memories")
    by_project = text_of(reviewer_client.get(url, {"project": "beta"}))
    assert "b-note" in by_project and "b-plan" in by_project and "a-note" not in by_project
    by_type = text_of(reviewer_client.get(url, {"project": "beta", "type": "plan"}))
    assert "b-plan" in by_type and "b-note" not in by_type
    # The project chips come from the projects operation.
    chips = text_of(reviewer_client.get(url))
    assert 'value="alpha"' in chips and 'value="beta"' in chips
    reviewer_client.post(reverse("dashboard:forget", args=["a-note"]))
    archived = text_of(reviewer_client.get(url, {"status": "archived"}))
    assert "a-note" in archived and "b-note" not in archived


def test_a_bad_filter_is_told_as_a_sentence_not_a_500(reviewer_client: Client) -> None:
    response = reviewer_client.get(reverse("dashboard:memories"), {"namespace": "nowhere"})
    assert response.status_code == 200
    assert "Something in the form is not valid" in text_of(response)


def test_a_memory_page_shows_observations_history_relations_and_trust(
    reviewer_client: Client,
) -> None:
    remember("db-choice", "use sqlite", type="decision", why="one file, no server")
    remember("db-choice", "use postgres", type="decision", replace=True, why="concurrent writers")
    remember("api-note", "the api reads the db", relations=[{"to": "db-choice", "type": "uses"}])
    remember_commit("commit-1", "abc1234")
    remember("commit-1", relations=[{"to": "db-choice", "type": "evidences"}])
    page = text_of(reviewer_client.get(reverse("dashboard:memory", args=["db-choice"])))
    assert "use postgres" in page
    assert "use sqlite" in page  # the replaced version
    assert "Never replaced." not in page
    assert "commit-1" in page  # evidence pointing at it
    assert "local" in page and "hypothesis" in page
    related = text_of(reviewer_client.get(reverse("dashboard:memory", args=["api-note"])))
    assert reverse("dashboard:memory", args=["db-choice"]) in related


def test_an_unknown_memory_is_a_404(reviewer_client: Client) -> None:
    assert reviewer_client.get(reverse("dashboard:memory", args=["nope"])).status_code == 404


def test_pin_and_unpin_go_through_the_pin_service(reviewer_client: Client) -> None:
    remember("keep-me", "important")
    url = reverse("dashboard:pin", args=["keep-me"])
    landed = reviewer_client.post(url, {"pinned": "true"})
    assert stored("keep-me").metadata.get(PIN_KEY) is True
    assert "keep-me is pinned." in messages_of(reviewer_client, landed["Location"])
    reviewer_client.post(url, {"pinned": "false"})
    assert PIN_KEY not in stored("keep-me").metadata


def test_forget_asks_first_and_then_archives_with_the_reason(reviewer_client: Client) -> None:
    remember("old-host", "staging runs on box-3")
    url = reverse("dashboard:forget", args=["old-host"])
    confirm = text_of(reviewer_client.get(url))
    assert "Forget this memory?" in confirm
    assert stored("old-host").status == Status.ACTIVE  # asking changed nothing
    reviewer_client.post(url, {"reason": "staging decommissioned"})
    entity = stored("old-host")
    assert entity.status == Status.ARCHIVED
    assert entity.metadata["forgotten"]["reason"] == "staging decommissioned"


def test_the_project_page_lists_the_work_layer_with_evidence_and_drills_down(
    reviewer_client: Client,
) -> None:
    remember("use-htmx", "pages are html first", type="decision", why="no build step",
             tags=["project:shop"])  # fmt: skip
    remember("lesson-x", "pin the browser", type="lesson_learned", tags=["project:shop"])
    remember("other-plan", "ship it", type="plan", tags=["project:else"])
    remember_commit("c-1", "1111111")
    remember("c-1", relations=[{"to": "use-htmx", "type": "evidences"}])
    page = text_of(reviewer_client.get(reverse("dashboard:project"), {"project": "shop"}))
    assert "Decisions" in page and "Lessons" in page
    assert "Why:</strong> no build step" in page
    assert "1 piece of evidence" in page
    assert "other-plan" not in page
    drill = reviewer_client.get(
        reverse("dashboard:evidence"), {"node": "use-htmx"}, headers={"HX-Request": "true"}
    )
    assert "c-1" in text_of(drill) and "<html" not in text_of(drill)


def test_the_graph_page_draws_every_node_as_a_link_and_the_work_layer_with_badges(
    reviewer_client: Client,
) -> None:
    remember("use-htmx", "html first", type="decision")
    remember("a-note", "related", relations=[{"to": "use-htmx", "type": "relates_to"}])
    remember_commit("c-1", "1111111")
    remember("c-1", relations=[{"to": "use-htmx", "type": "evidences"}])
    full = text_of(reviewer_client.get(reverse("dashboard:graph")))
    assert "3 of 3 memories drawn" in full
    assert full.count("<circle") >= 3
    assert reverse("dashboard:memory", args=["a-note"]) in full
    work = text_of(reviewer_client.get(reverse("dashboard:graph"), {"layer": "work"}))
    assert "1 of 1 memories drawn" in work
    assert 'class="badge">1</text>' in work
    panel = reviewer_client.get(
        reverse("dashboard:node"), {"name": "use-htmx"}, headers={"HX-Request": "true"}
    )
    assert "c-1" in text_of(panel)


def test_the_graph_page_caps_what_it_draws_and_says_so(
    reviewer_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dashboard.views import graph as views_graph

    monkeypatch.setattr(views_graph, "MAX_NODES", 2)
    for i in range(3):
        remember(f"n-{i}", f"note {i}")
    page = text_of(reviewer_client.get(reverse("dashboard:graph")))
    assert "2 of 3 memories drawn (the 2 most recently used; the rest are left out)" in page


def test_settings_mask_keys_and_a_test_lists_the_live_models(reviewer_client: Client) -> None:
    with FakeLLMServer(kind="openai", api_key="sk-test-abcdef123456") as server:
        server.models = ["gpt-4o-mini", "gpt-4o"]
        config.config_change({"llm": server.llm_config(model="gpt-4o-mini")})
        page = text_of(reviewer_client.get(reverse("dashboard:settings")))
        assert "sk-test-abcdef123456" not in page
        assert "<code>***</code>" in page
        tested = reviewer_client.post(
            reverse("dashboard:settings-test"),
            {"provider": "openai"},
            headers={"HX-Request": "true"},
        )
        result = text_of(tested)
        assert "The key works." in result
        assert "gpt-4o-mini" in result and "gpt-4o" in result
        wrong = reviewer_client.post(
            reverse("dashboard:settings-test"), {"provider": "openai", "apiKey": "sk-wrong-key-999"}
        )
        assert "The API key is missing or the provider rejected it." in text_of(wrong)
        assert "sk-wrong-key-999" not in text_of(wrong)


def test_settings_save_language_auto_capture_and_theme(reviewer_client: Client) -> None:
    reviewer_client.post(
        reverse("dashboard:settings-save"),
        {"language": "zh-TW", "autoCapture": "on", "theme": "dark"},
    )
    stored_config = config.config_load()
    assert (stored_config["language"], stored_config["autoCapture"], stored_config["theme"]) == (
        "zh-TW", True, "dark",
    )  # fmt: skip
    assert 'data-theme="dark"' in text_of(reviewer_client.get(reverse("dashboard:home")))
    reviewer_client.post(reverse("dashboard:settings-save"), {"language": "", "theme": "light"})
    stored_config = config.config_load()
    assert "language" not in stored_config and stored_config["autoCapture"] is False


def test_a_reindex_is_queued_and_its_progress_polled(
    reviewer_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dream.tasks import reindex_task

    monkeypatch.setattr(reindex_task, "delay", lambda task_id: None)  # no worker in this test
    queued = reviewer_client.post(reverse("dashboard:reindex"))
    assert "?task=" in queued["Location"]
    task_id = queued["Location"].split("?task=")[1]
    page = text_of(reviewer_client.get(queued["Location"]))
    assert 'data-task-status="queued"' in page and 'hx-trigger="every 1s"' in page
    poll = reviewer_client.get(
        reverse("dashboard:task", args=[task_id]), headers={"HX-Request": "true"}
    )
    assert 'data-task-status="queued"' in text_of(poll)


def test_stage_digest_proposals_are_counted_on_home(reviewer_client: Client) -> None:
    stage_digest("alpha", 2)
    page = text_of(reviewer_client.get(reverse("dashboard:home")))
    assert "1 waiting for review" in page


def test_a_forget_the_service_refuses_is_told_as_a_sentence(reviewer_client: Client) -> None:
    remember("old-host", "staging runs on box-3")
    url = reverse("dashboard:forget", args=["old-host"])
    landed = reviewer_client.post(url, {"reason": "x" * 5000})
    assert landed["Location"] == url
    assert "Something in the form is not valid" in messages_of(reviewer_client, url)
    assert stored("old-host").status == Status.ACTIVE  # nothing stored on a refused write
