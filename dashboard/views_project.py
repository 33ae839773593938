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

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard.pages import HtmxHttpRequest, dashboard_required, page
from graph.errors import NotFound
from graph.ops.entity_types import LESSON_TYPES
from graph.ops.entity_view import EntityOutput
from graph.ops.graph_view import WORK_LAYER, graph_evidence_get, graph_get
from graph.ops.projects import projects_list
from graph.project_tags import PROJECT_TAG_PREFIX

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


def _sections(entities: list[EntityOutput], counts: dict[str, int]) -> list[dict[str, Any]]:
    """The work items by section, each section's first SECTION_CAP (most recently used first,
    the operation's order) dumped for the template; `more` counts the rest."""
    by_section: dict[str, list[EntityOutput]] = {title: [] for title, _ in SECTIONS}
    by_section[OTHER] = []
    section_of = {t: title for title, types in SECTIONS for t in types}
    for entity in entities:
        by_section[section_of.get(entity.type, OTHER)].append(entity)
    return [
        {
            "title": title,
            "count": len(items),
            "more": max(0, len(items) - SECTION_CAP),
            "items": [
                {
                    **e.model_dump(mode="json", by_alias=True),
                    "evidence_count": counts.get(e.name, 0),
                }
                for e in items[:SECTION_CAP]
            ],
        }
        for title, items in by_section.items()
        if items
    ]


@require_GET
@dashboard_required
def project(request: HtmxHttpRequest) -> HttpResponse:
    chosen = request.GET.get("project", "").strip()
    work = graph_get(layer=WORK_LAYER)
    entities = [e for e in work.entities if e.status == "active"]
    if chosen:
        tag = f"{PROJECT_TAG_PREFIX}{chosen}"
        entities = [e for e in entities if tag in e.tags]
    context = {
        "projects": projects_list().root,
        "chosen": chosen,
        "sections": _sections(entities, work.evidenceCounts or {}),
        "total": len(entities),
        "section_cap": SECTION_CAP,
    }
    return page(request, "dashboard/project.html", context, "dashboard:project")


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
