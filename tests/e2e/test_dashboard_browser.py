"""The dashboard end to end: one real `memesh serve` on loopback, headless Chromium (Debian's,
driven by Playwright as the review page's test does), a reviewer account made by
`memesh createreviewer`. With JavaScript: the demo seed, a search as you type, a pin, a forget,
the evidence drill-down, the graph's side panel, a settings test against the fake LLM server,
the dark theme, and the demo reset; the graph fitted to its canvas, every node labelled, zoom
and pan by wheel, keys, buttons and drag; axe-core (the copy axe-playwright-python ships) on every
page, with no serious or critical violation. Without JavaScript: every page, a search and a pin
by plain form posts. Screenshots go to $MEMESH_TEST_ARTIFACTS (default: test-artifacts/).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page

from tests.fakes.llm_servers import FakeLLMServer
from tests.processes import ROOT, Served, memesh, memesh_env, run_python

pytestmark = pytest.mark.slow

ARTIFACTS = Path(os.environ.get("MEMESH_TEST_ARTIFACTS") or ROOT / "test-artifacts")
USERNAME = "dana"
PASSWORD = "a long enough dashboard password"
API_KEY = "sk-dash-test-0123456789"
BLOCKING = ("serious", "critical")
PAGES = ("", "memories/", "project/", "graph/", "graph/?layer=work", "settings/")


@pytest.fixture(scope="module")
def memesh_embedder() -> str | None:
    """The module's server (conftest's `server`) runs with memesh's default embedder."""
    return None


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(kind="openai", api_key=API_KEY, models=["gpt-4o-mini", "gpt-4o"]) as llm:
        yield llm


@pytest.fixture(scope="module", autouse=True)
def _reviewer_and_llm_chain(server: Served, fake_llm: FakeLLMServer) -> None:
    """A reviewer account made by `memesh createreviewer`, and the LLM chain the Settings test
    probes, stored through the API as a client would."""
    made = run_python(
        memesh("createreviewer", USERNAME)[1:],
        memesh_env(server.home, MEMESH_REVIEWER_PASSWORD=PASSWORD),
    )
    assert made.returncode == 0, made.stderr
    stored = server.post("config", {"llm": fake_llm.llm_config("gpt-4o-mini")})
    assert stored.status_code == 200, stored.text


def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"dashboard-{name}.png"))


def assert_accessible(page: Page) -> None:
    """axe-core on the page as it is now: no serious or critical violation."""
    results = Axe().run(page).response["violations"]
    blocking = [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results
        if v["impact"] in BLOCKING
    ]
    assert blocking == [], f"{page.url}: {blocking}"


def log_in(page: Page, base: str, *, check: bool = False) -> None:
    page.goto(f"{base}/dashboard/")
    assert "/accounts/login/" in page.url  # the review site's login guards the dashboard
    if check:
        assert_accessible(page)
    page.get_by_label("User name").fill(USERNAME)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/dashboard/")


def test_serve_prints_the_dashboard_url(server: Served) -> None:
    assert f"Dashboard: {server.base}/dashboard/" in server.log.read_text()


def test_with_javascript_every_page_works_and_passes_axe(
    server: Served, browser: Browser, fake_llm: FakeLLMServer
) -> None:
    base = server.base
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log_in(page, base, check=True)

    # An empty graph: the onboarding banner, then the demo tour.
    assert "Nothing remembered yet" in page.inner_text("main")
    assert_accessible(page)
    screenshot(page, "1-home-empty")
    page.get_by_role("button", name="Load the demo tour").click()
    page.wait_for_url(f"{base}/dashboard/")
    assert "Demo tour loaded" in page.locator(".messages").inner_text()
    assert "1 waiting for review" in page.inner_text("main")
    assert_accessible(page)
    screenshot(page, "2-home")

    # Search as you type: the results swap in without a page load.
    page.goto(f"{base}/dashboard/memories/")
    assert_accessible(page)
    page.evaluate("window.dashMarker = 'still here'")
    page.get_by_label("Search").press_sequentially("PostgreSQL", delay=20)
    page.locator("[data-retrieval]").wait_for()
    result = page.locator(".result a.name", has_text="PostgreSQL").first
    result.wait_for()
    assert page.evaluate("window.dashMarker") == "still here"
    assert "keyword match" in page.locator("#results").inner_text()
    assert "q=PostgreSQL" in page.url  # the search is in the address, for reload and sharing
    assert_accessible(page)
    screenshot(page, "3-search")

    # A filter narrows in place too: only the commit that mentions PostgreSQL.
    page.get_by_label("Type").select_option("commit")
    page.wait_for_function(
        "[...document.querySelectorAll('#results .result .type')]"
        ".every(t => t.textContent === 'commit')"
    )
    assert page.locator("#results .result").count() == 1
    page.get_by_label("Type").select_option("")
    page.locator("#results .result .type", has_text="decision").wait_for()

    # The keyboard: j moves to the first result (leaving the box sends no second search).
    page.locator("h1").click()
    page.wait_for_load_state("networkidle")
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.classList.contains('name')")

    # A memory's page: pin, then forget after a confirmation.
    result.click()
    page.wait_for_url(f"{base}/dashboard/memories/m/**")
    assert "Provenance and trust" in page.inner_text("main")
    page.get_by_role("button", name="Pin").click()
    assert "is pinned." in page.locator(".messages").inner_text()
    assert page.get_by_role("button", name="Unpin").count() == 1
    assert_accessible(page)
    screenshot(page, "4-memory")
    page.get_by_role("link", name="Forget…").click()
    assert "Forget this memory?" in page.inner_text("main")
    assert_accessible(page)
    page.get_by_label("Reason (optional)").fill("tried in the browser test")
    page.get_by_role("button", name="Forget it").click()
    assert "was forgotten" in page.locator(".messages").inner_text()
    assert "archived" in page.locator(".meta").first.inner_text()

    # The project page's drill-down into the evidence, in place.
    page.goto(f"{base}/dashboard/project/?project=memesh-demo")
    link = page.locator("a.evidence-link").first
    link.click()
    page.locator(".work-item .evidence").first.wait_for()
    assert_accessible(page)
    screenshot(page, "5-project")

    # The drill-down's and a node's own pages (where links lead without JavaScript).
    node = "demo-decision-postgres"
    for path in (f"project/evidence?node={node}", f"graph/node?name={node}"):
        page.goto(f"{base}/dashboard/{path}")
        assert "feat(db): initial schema" in page.inner_text("main")  # its evidence
        assert_accessible(page)

    # The graph: a node opens in the side panel.
    page.goto(f"{base}/dashboard/graph/?layer=work")
    assert_accessible(page)
    page.locator("svg.graph .nodes a").first.click()
    page.locator("#node-panel h3", has_text="Evidence").wait_for()
    screenshot(page, "6-graph-work")
    page.goto(f"{base}/dashboard/graph/")
    assert_accessible(page)
    screenshot(page, "7-graph")

    # Settings: the key masked, a test listing the fake server's live models.
    page.goto(f"{base}/dashboard/settings/")
    assert API_KEY not in page.content()
    page.get_by_role("button", name="Test").click()
    page.locator("[data-test-result]").wait_for()
    models = page.locator("[data-test-result]").inner_text()
    assert "The key works." in models and "gpt-4o-mini" in models
    assert fake_llm.requests[-1].path == "/v1/models"
    assert_accessible(page)
    screenshot(page, "8-settings")

    # The dark theme, saved as the `theme` setting.
    page.get_by_label("Theme", exact=True).select_option("dark")
    page.get_by_role("button", name="Save").click()
    page.goto(f"{base}/dashboard/")
    assert page.locator("html").get_attribute("data-theme") == "dark"
    assert_accessible(page)
    screenshot(page, "9-home-dark")
    page.goto(f"{base}/dashboard/settings/")
    page.get_by_label("Theme", exact=True).select_option("system")
    page.get_by_role("button", name="Save").click()
    context.close()


# The drawn nodes' and labels' boxes on the screen, and the canvas's.
GRAPH_BOXES = """() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const svg = document.querySelector("svg.graph");
  // Font sizes are in viewBox units: on the screen they are scaled as the drawing is.
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const labels = [...svg.querySelectorAll(".nodes a")].map(a => {
    const t = a.querySelector("text.label");
    const style = t && getComputedStyle(t);
    return {text: t ? t.textContent.trim() : "", box: t ? box(t) : null,
            visible: !!t && style.visibility !== "hidden" && style.display !== "none"
                     && t.getBoundingClientRect().width > 0,
            font: t ? parseFloat(style.fontSize) * scale : 0};
  });
  return {canvas: box(svg), nodes: [...svg.querySelectorAll(".nodes circle")].map(box), labels};
}"""


def spans(boxes: list[dict[str, float]]) -> tuple[float, float]:
    return (
        max(b["right"] for b in boxes) - min(b["left"] for b in boxes),
        max(b["bottom"] for b in boxes) - min(b["top"] for b in boxes),
    )


def meet(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


def test_the_graph_fills_its_canvas_labels_every_node_and_zooms_and_pans(
    server: Served, browser: Browser
) -> None:
    base = server.base
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    log_in(page, base)
    # The demo tour, unless the test before left it loaded (this test also runs alone).
    load = page.get_by_role("button", name="Load the demo tour")
    if load.count():
        load.click()
        page.wait_for_url(f"{base}/dashboard/")

    for path, name in (("graph/", "12-graph-labelled"), ("graph/?layer=work", "13-graph-work")):
        page.goto(f"{base}/dashboard/{path}")
        drawn = page.evaluate(GRAPH_BOXES)
        canvas = drawn["canvas"]
        wide, high = spans(drawn["nodes"])
        width, height = canvas["right"] - canvas["left"], canvas["bottom"] - canvas["top"]
        # The drawn nodes span most of the canvas, not a cluster in its middle.
        assert wide >= 0.7 * width and high >= 0.7 * height, (path, wide, high, width, height)
        labels = drawn["labels"]
        assert len(labels) == len(drawn["nodes"]) >= 8
        for label in labels:
            assert label["visible"] and label["text"], (path, label)
            assert label["font"] >= 11, (path, label)  # px on the screen
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                assert not meet(a["box"], b["box"]), (path, a, b)
        assert_accessible(page)
        screenshot(page, name)

    # Zoom: the wheel over the drawing, the keyboard in it, and the buttons change the view;
    # 0 and Reset put it back.
    svg = page.locator("svg.graph")

    def view() -> list[float]:
        return [float(v) for v in (svg.get_attribute("viewBox") or "").split()]

    start = view()
    box = svg.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 3, box["y"] + box["height"] / 3)
    page.mouse.wheel(0, -200)
    page.wait_for_function(
        "parseFloat(document.querySelector('svg.graph').getAttribute('viewBox').split(' ')[2])"
        f" < {start[2]}"
    )
    assert view()[2] < start[2]  # zoomed in: a narrower view
    page.locator("svg.graph .nodes a").first.focus()
    page.keyboard.press("0")
    assert view() == start
    page.keyboard.press("+")
    keyed = view()
    assert keyed[2] < start[2]
    page.keyboard.press("ArrowRight")
    assert view()[0] > keyed[0]
    page.get_by_role("button", name="Reset").click()
    assert view() == start
    page.get_by_role("button", name="Zoom out").click()
    assert view()[2] > start[2]
    page.get_by_role("button", name="Zoom in").click()
    page.get_by_role("button", name="Zoom in").click()
    zoomed = view()
    assert zoomed[2] < start[2]
    # A drag pans, and does not open the node it ends on.
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 80, box["y"] + box["height"] / 2 + 40, steps=5)
    page.mouse.up()
    panned = view()
    assert panned[0] < zoomed[0] and panned[1] < zoomed[1] and panned[2] == zoomed[2]
    assert page.url.endswith("/dashboard/graph/?layer=work")
    assert_accessible(page)
    screenshot(page, "14-graph-zoomed")
    context.close()


def test_without_javascript_every_page_works_by_links_and_forms(
    server: Served, browser: Browser
) -> None:
    base = server.base
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, base)
    # The demo tour, loaded by a form without JavaScript unless the test before left it
    # loaded: this test also runs alone (`-k`, or on another worker).
    page.goto(f"{base}/dashboard/")
    load = page.get_by_role("button", name="Load the demo tour")
    if load.count():
        load.click()
        assert "Demo tour loaded" in page.locator(".messages").inner_text()
    for path in PAGES:
        page.goto(f"{base}/dashboard/{path}")
        assert page.locator("h1").count() == 1, path
    screenshot(page, "10-nojs-settings")

    page.goto(f"{base}/dashboard/memories/")
    page.get_by_label("Search").fill("lesson")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/dashboard/memories/?q=lesson**")
    first = page.locator(".result a.name").first
    first.click()
    page.get_by_role("button", name="Pin").click()
    assert "is pinned." in page.locator(".messages").inner_text()

    # A graph node without JavaScript is a link to its memory's page; the zoom buttons, which
    # would do nothing, are not shown, and every node is labelled.
    page.goto(f"{base}/dashboard/graph/")
    assert page.get_by_role("button", name="Zoom in").count() == 0
    assert page.locator("svg.graph .nodes a").count() == page.locator("svg.graph .label").count()
    page.locator("svg.graph .nodes a").first.click()
    page.wait_for_url(f"{base}/dashboard/memories/m/**")

    # The demo tour leaves as it came: the reset, and the banner is back.
    page.goto(f"{base}/dashboard/")
    page.get_by_role("button", name="Remove the demo tour").click()
    assert "Demo tour removed" in page.locator(".messages").inner_text()
    assert "Nothing remembered yet" in page.inner_text("main")
    screenshot(page, "11-nojs-after-reset")
    context.close()
