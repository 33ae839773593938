"""Project (/dashboard/project/): the work layer — decisions with their reasons, lessons,
plans and the rest of WORK_TYPES — each with its evidence count and a drill-down to the
evidence (GET /v1/graph?layer=work and /v1/graph/evidence, through their selectors).

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


def _sections(entities: list[dict[str, Any]], counts: dict[str, int]) -> list[dict[str, Any]]:
    by_section: dict[str, list[dict[str, Any]]] = {title: [] for title, _ in SECTIONS}
    by_section[OTHER] = []
    section_of = {t: title for title, types in SECTIONS for t in types}
    for entity in entities:
        item = {**entity, "evidence_count": counts.get(entity["name"], 0)}
        by_section[section_of.get(entity["type"], OTHER)].append(item)
    return [{"title": title, "items": items} for title, items in by_section.items() if items]


@require_GET
@dashboard_required
def project(request: HtmxHttpRequest) -> HttpResponse:
    chosen = request.GET.get("project", "").strip()
    work = graph_get(layer=WORK_LAYER).model_dump(mode="json", by_alias=True)
    entities = [e for e in work["entities"] if e["status"] == "active"]
    if chosen:
        tag = f"{PROJECT_TAG_PREFIX}{chosen}"
        entities = [e for e in entities if tag in e["tags"]]
    context = {
        "projects": projects_list().root,
        "chosen": chosen,
        "sections": _sections(entities, work.get("evidenceCounts") or {}),
        "total": len(entities),
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
