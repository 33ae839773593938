"""Project (/dashboard/project/): the work layer — decisions with their reasons, lessons,
plans and the rest of WORK_TYPES, the SECTION_CAP most recently used of each section — each
with its evidence count and a drill-down to the evidence (GET /v1/graph?layer=work and
/v1/graph/evidence, through their selectors).

The work layer is the whole graph's; a project chip (from GET /v1/projects) narrows it to the
memories tagged `project:<id>`. The drill-down expands in place with htmx and is a plain page
without JavaScript.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from core.errors import NotFound
from dashboard.pages import HtmxHttpRequest, dashboard_required, page
from dashboard.selectors import entities_get
from graph.ops.entity_types import LESSON_TYPES
from graph.ops.graph_view import WORK_LAYER, GraphNode, graph_evidence_get, graph_get
from graph.ops.kit.entity_view import EntityOutput
from graph.ops.projects import projects_list
from graph.project_tags import PROJECT_TAG_PREFIX
from graph.storage.commit_cache import kept_until_commit

# The sections of the page, in order; a work type in none of them is listed under "Other".
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Decisions", ("decision",)),
    ("Lessons", LESSON_TYPES),
    ("Plans", ("plan", "goal", "milestone", "task-state")),
    ("Patterns", ("pattern", "technical_pattern")),
)
OTHER = "Other"
# Items listed per section: a large graph has thousands of lessons, and a page of them all is
# megabytes; the heading says how many more there are.
SECTION_CAP = 50
LISTING_KEY = "dashboard.project_listing"


def _sections(
    nodes: list[GraphNode], counts: dict[str, int], urls: tuple[str, str]
) -> list[dict[str, Any]]:
    """The work items by section, each section's first SECTION_CAP (most recently used first,
    the operation's order) read in full for what the template shows; `more` counts the rest.
    `urls`: a memory's page less its name, and the evidence drill-down's."""
    by_section: dict[str, list[GraphNode]] = {title: [] for title, _ in SECTIONS}
    by_section[OTHER] = []
    section_of = {t: title for title, types in SECTIONS for t in types}
    for node in nodes:
        by_section[section_of.get(node.type, OTHER)].append(node)
    listed = [n.id for items in by_section.values() for n in items[:SECTION_CAP]]
    shown = {e.id: e for e in entities_get(listed)}
    return [
        {
            "title": title,
            "count": len(items),
            "more": max(0, len(items) - SECTION_CAP),
            "items": [
                _item(shown[n.id], counts.get(n.name, 0), urls)
                for n in items[:SECTION_CAP]
                if n.id in shown  # forgotten since the work layer was read
            ],
        }
        for title, items in by_section.items()
        if items
    ]


def _item(entity: EntityOutput, evidence_count: int, urls: tuple[str, str]) -> dict[str, Any]:
    """One listed work item: the links are written here, as a {% url %} per item cost a
    tenth of the page (quote(safe=""), as the graph page's links; `urlencode`'s safe `/`)."""
    page_prefix, evidence_url = urls
    why = entity.metadata.get("why")
    return {
        "name": entity.name,
        "label": entity.title or entity.name,
        "type": entity.type,
        "why": why if isinstance(why, str) else None,
        "preview": entity.observations[0] if entity.observations else "",
        "evidence_count": evidence_count,
        "href": page_prefix + quote(entity.name, safe=""),
        "evidence_href": f"{evidence_url}?node={quote(entity.name, safe='/')}",
    }


@require_GET
@dashboard_required
def project(request: HtmxHttpRequest) -> HttpResponse:
    chosen = request.GET.get("project", "").strip()
    urls = (reverse("dashboard:memory", args=["x"])[:-1], reverse("dashboard:evidence"))
    # The listing is the graph's until the next commit (graph/storage/commit_cache.py).
    listing = kept_until_commit((LISTING_KEY, chosen, urls), lambda: _listing(chosen, urls))
    context = {"chosen": chosen, "section_cap": SECTION_CAP, **listing}
    return page(request, "dashboard/project.html", context, "dashboard:project")


def _listing(chosen: str, urls: tuple[str, str]) -> dict[str, Any]:
    """The project chips and the work layer's sections, of one project or of every one."""
    work = graph_get(layer=WORK_LAYER)
    nodes = [n for n in work.entities if n.status == "active"]
    if chosen:
        tag = f"{PROJECT_TAG_PREFIX}{chosen}"
        nodes = [n for n in nodes if tag in n.tags]
    return {
        "projects": projects_list().root,
        "sections": _sections(nodes, work.evidenceCounts or {}, urls),
        "total": len(nodes),
    }


@require_GET
@dashboard_required
def evidence(request: HtmxHttpRequest) -> HttpResponse:
    node = request.GET.get("node", "").strip()
    if not node:
        raise Http404("No node named")
    try:
        found = graph_evidence_get(node=node)
    except NotFound:
        raise Http404("No such memory") from None
    context = {"node": node, "evidence": found.model_dump(mode="json", by_alias=True)}
    if request.htmx:
        return render(request, "dashboard/_evidence.html", context)
    return page(request, "dashboard/evidence.html", context, "dashboard:project")
