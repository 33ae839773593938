"""Graph (/dashboard/graph/): the two-layer graph drawn as server-rendered SVG — the full graph
(GET /v1/graph) or the work layer with its evidence badges (?layer=work) — laid out by
dashboard/graph_layout.py, fitted to the canvas and labelled by dashboard/graph_fit.py. No
JavaScript library: every node is a link to its memory's page; with htmx a click opens the
node in the side panel instead, and on the work layer the panel holds the drill-down to the
node's evidence. graph.js adds zoom and pan by changing the drawing's viewBox.

At most MAX_NODES nodes are drawn, the most recently used first (the operation's order), and
the edges among them, at most MAX_EDGES; the page says how many it left out.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from core.errors import NotFound
from dashboard.graph_fit import HEIGHT, WIDTH, fit, place_labels
from dashboard.graph_layout import layout
from dashboard.graph_svg import SvgNode, edges_markup, nodes_markup
from dashboard.pages import HtmxHttpRequest, dashboard_required, page
from dashboard.selectors import memory_page_get
from graph.ops.graph_view import WORK_LAYER, graph_evidence_get, graph_read
from graph.storage.commit_cache import kept_until_commit

MAX_NODES = 3000
MAX_EDGES = 6000
DRAWING_KEY = "dashboard.graph_drawing"
LAYERS = ("full", WORK_LAYER)
# Node colours by the groups a reader tells apart; the legend lists them.
PALETTE = ("#0969da", "#1a7f37", "#9a6700", "#8250df", "#cf222e", "#bc4c00", "#1b7c83", "#6e7781")


@require_GET
@dashboard_required
def graph(request: HtmxHttpRequest) -> HttpResponse:
    layer = request.GET.get("layer", "full")
    if layer not in LAYERS:
        layer = "full"
    # A memory's page is its name after this prefix (reverse() per node costs too much).
    prefix = reverse("dashboard:memory", args=["x"])[:-1]
    panel_url = reverse("dashboard:node")
    # The drawing is the graph's until the next commit (graph/storage/commit_cache.py): laying out
    # and
    # writing 3,000 nodes costs more than the rest of the page.
    drawing = kept_until_commit(
        (DRAWING_KEY, layer, prefix, panel_url), lambda: _drawing(layer, prefix, panel_url)
    )
    return page(request, "dashboard/graph.html", {"layer": layer, **drawing}, "dashboard:graph")


def _drawing(layer: str, prefix: str, panel_url: str) -> dict[str, Any]:
    """The graph page's SVG markup, legend and counts for one layer."""
    # Only the drawn nodes are read: the full view holds thousands more.
    read = graph_read(layer=WORK_LAYER if layer == WORK_LAYER else None, max_nodes=MAX_NODES)
    view = read.output()
    counts = view.evidenceCounts or {}
    shown = view.entities
    placed = layout([(e.name, e.type) for e in shown])
    colours = {g.type: PALETTE[i % len(PALETTE)] for i, g in enumerate(placed.groups)}
    at = fit({name: (p.x, p.y) for name, p in placed.nodes.items()})
    linked = [(r.from_, r.to) for r in view.relations if r.from_ in at and r.to in at]
    edges = [(at[a], at[b]) for a, b in linked]
    # Where labels run out of room, the most related nodes keep theirs.
    degree = Counter(name for pair in linked for name in pair)
    labels = place_labels([(e.name, e.title or e.name, *at[e.name]) for e in shown], degree)
    nodes = (
        SvgNode(
            e.name,
            e.title or e.name,
            e.type,
            at[e.name].x,
            at[e.name].y,
            colours[e.type],
            counts.get(e.name, 0),
            e.status == "archived",
            labels.get(e.name),
        )
        for e in shown
    )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "labelled": len(labels),
        "nodes_svg": nodes_markup(nodes, page_prefix=prefix, panel_url=panel_url),
        "edges_svg": edges_markup((a.x, a.y, b.x, b.y) for a, b in edges[:MAX_EDGES]),
        "groups": [
            {"type": g.type, "count": g.count, "colour": colours[g.type]} for g in placed.groups
        ],
        "drawn_nodes": len(shown),
        "total_nodes": read.total_nodes,
        "total_edges": len(view.relations),
        "drawn_edges": min(len(edges), MAX_EDGES),
        "nodes_cut": read.total_nodes > MAX_NODES,
        "edges_cut": len(edges) > MAX_EDGES,
        "max_nodes": MAX_NODES,
    }


@require_GET
@dashboard_required
def node(request: HtmxHttpRequest) -> HttpResponse:
    """The side panel: one node and, on the work layer, its evidence."""
    name = request.GET.get("name", "").strip()
    try:
        found = memory_page_get(name)
        evidence = graph_evidence_get(node=name)
    except NotFound:
        raise Http404("No such memory") from None
    context = {
        "memory": found.output.model_dump(mode="json", by_alias=True),
        "evidence": evidence.model_dump(mode="json", by_alias=True),
        "node": name,
    }
    if request.htmx:
        return render(request, "dashboard/_node.html", context)
    return page(request, "dashboard/node.html", context, "dashboard:graph")
