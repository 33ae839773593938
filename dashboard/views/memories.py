"""Memories (/dashboard/memories/): search as you type through recall itself, filters, and a
memory's own page with pin/unpin and forget.

With words in the box the page runs the `recall` operation (POST /v1/recall's path, access
counting included) and shows its `retrieval` block and each result's `match` as recall
returns them; with none it lists through `memory_list`, which filters without searching.
Recall has no type filter, so with a query the type chip narrows the page recall returned and
says so. With htmx the results swap in place as the reader types; without JavaScript the form
submits as a GET.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.errors import MemeshError, NotFound
from dashboard.pages import DASHBOARD_CONTEXT, HtmxHttpRequest, dashboard_required, page, refused
from dashboard.selectors import memory_page_get
from graph.ops import registry
from graph.ops.forget import ForgetInput, entity_forget
from graph.ops.graph_view import graph_evidence_get
from graph.ops.kit.fields import NamespaceName
from graph.ops.kit.operation import validated
from graph.ops.pin import PIN_KEY, entity_pin_set
from graph.ops.projects import projects_list
from graph.ops.stats import stats_get
from graph.project_tags import PROJECT_TAG_PREFIX

SEARCH_LIMIT = 30
LIST_LIMIT = 50
STATUSES = ("fact", "hypothesis", "archived")
NAMESPACES: tuple[str, ...] = NamespaceName.__args__  # type: ignore[attr-defined]
FILTERS = ("q", "project", "type", "namespace", "status")


def _filters(request: HtmxHttpRequest) -> dict[str, str]:
    return {key: request.GET.get(key, "").strip() for key in FILTERS}


def _search(filters: dict[str, str]) -> dict[str, Any]:
    """The results for these filters: recall's with a query, memory_list's without."""
    tag = f"{PROJECT_TAG_PREFIX}{filters['project']}" if filters["project"] else None
    common: dict[str, Any] = {"tag": tag, "namespace": filters["namespace"] or None}
    status = filters["status"] or None
    if filters["q"]:
        payload = {
            **common,
            "query": filters["q"],
            "limit": SEARCH_LIMIT,
            "status": status if status != "archived" else None,
            "include_archived": status == "archived",
        }
        result = registry.OPERATIONS["recall"].call(_present(payload), DASHBOARD_CONTEXT)
        found = result.model_dump(mode="json", by_alias=True)
        entities = found["entities"]
        if status == "archived":
            entities = [e for e in entities if e["status"] == "archived"]
        if filters["type"]:
            entities = [e for e in entities if e["type"] == filters["type"]]
        return {
            "mode": "search",
            "entities": entities,
            "retrieval": found["retrieval"],
            "returned": len(found["entities"]),
        }
    payload = {**common, "status": status, "type": filters["type"] or None, "limit": LIST_LIMIT}
    listed = registry.OPERATIONS["memory_list"].call(_present(payload), DASHBOARD_CONTEXT)
    page_ = listed.model_dump(mode="json", by_alias=True)
    return {"mode": "list", "entities": page_["memories"], "total": page_["total"]}


def _present(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload without the filters left empty (an operation refuses an explicit null only
    where the field has no default, so leaving them out is the plain way)."""
    return {k: v for k, v in payload.items() if v is not None}


@require_GET
@dashboard_required
def memories(request: HtmxHttpRequest) -> HttpResponse:
    filters = _filters(request)
    try:
        results: dict[str, Any] = _search(filters)
    except MemeshError as exc:
        refused(request, exc)
        results = {"mode": "error", "entities": []}
    context: dict[str, Any] = {"filters": filters, "results": results}
    if request.htmx and request.htmx.target == "results":
        return render(request, "dashboard/_results.html", context)
    context.update(
        projects=projects_list().root,
        types=[t.type for t in stats_get().typeDistribution],
        namespaces=NAMESPACES,
        statuses=STATUSES,
    )
    return page(request, "dashboard/memories.html", context, "dashboard:memories")


def _memory(name: str) -> dict[str, Any]:
    """A memory's page: recall's view of it, its replaced versions and trust history (kept in
    its metadata, which reads leave out), and the evidence pointing at it."""
    try:
        found = memory_page_get(name)
    except NotFound:
        raise Http404("No such memory") from None
    evidence = graph_evidence_get(node=name)
    return {
        "memory": found.output.model_dump(mode="json", by_alias=True),
        "replaced": found.replaced_history,
        "history": found.trust_history,
        "pinned": found.output.metadata.get(PIN_KEY) is True,
        "evidence": evidence.model_dump(mode="json", by_alias=True),
    }


@require_GET
@dashboard_required
def memory(request: HtmxHttpRequest, name: str) -> HttpResponse:
    return page(request, "dashboard/memory.html", _memory(name), "dashboard:memories")


@require_POST
@dashboard_required
def pin(request: HtmxHttpRequest, name: str) -> HttpResponse:
    pinned = request.POST.get("pinned") == "true"
    try:
        result = entity_pin_set(name=name, pinned=pinned)
    except MemeshError as exc:
        refused(request, exc)
    else:
        if not result.found:
            raise Http404("No such memory")
        messages.success(request, f"{name} is {'pinned' if result.pinned else 'no longer pinned'}.")
    return HttpResponseRedirect(reverse("dashboard:memory", args=[name]))


@require_http_methods(["GET", "POST"])
@dashboard_required
def forget(request: HtmxHttpRequest, name: str) -> HttpResponse:
    """GET: the confirmation page; POST: archive the memory through forget."""
    if request.method == "GET":
        return page(request, "dashboard/forget.html", _memory(name), "dashboard:memories")
    reason = request.POST.get("reason", "").strip() or None
    try:
        data = validated(ForgetInput, {"name": name, "reason": reason})
        result = entity_forget(data=data)
    except MemeshError as exc:  # a reason too long, or the memory gone meanwhile
        refused(request, exc)
        return HttpResponseRedirect(reverse("dashboard:forget", args=[name]))
    messages.success(request, f"{result.name} was forgotten (archived; nothing is deleted).")
    return HttpResponseRedirect(reverse("dashboard:memory", args=[name]))
