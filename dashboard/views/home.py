"""Home (/dashboard/): the health score and its four factors, the 30-day timeline, the loop
metric, the pending proposals (reviewed at /review/), the LLM activity from telemetry, and on
an empty graph the onboarding banner with the demo tour's seed and reset.

Each figure comes from the selector its REST route serves (GET /v1/analytics, /v1/stats,
/v1/dream/proposals, /v1/telemetry), so the page shows what the API shows.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core.errors import MemeshError
from dashboard.charts import line_chart, percent_width
from dashboard.pages import HtmxHttpRequest, dashboard_required, page, refused
from dream import telemetry
from dream.demo import demo_entity_ids, demo_reset, demo_seed
from graph.ops.analytics import WEIGHTS, analytics_get
from graph.ops.stats import stats_get
from proposals import selectors
from proposals.models import ProposalStatus

PENDING_SHOWN = 5
FACTOR_HELP = {
    "activity": "active memories recalled in the last 30 days",
    "quality": "active memories with confidence above 0.7",
    "freshness": "memories created in the last 7 days, per active memory",
    "lessons": "lessons learned, per 5",
}


@require_GET
@dashboard_required
def home(request: HtmxHttpRequest) -> HttpResponse:
    analytics = analytics_get()
    stats = stats_get()
    pending = selectors.proposal_list(ProposalStatus.PENDING)
    days = [d.day for d in analytics.timeline]
    factors = analytics.healthFactors.model_dump()
    context = {
        "analytics": analytics,
        "stats": stats,
        "factors": [
            {"name": name, "value": factors[name], "weight": WEIGHTS[name], "help": help_}
            for name, help_ in FACTOR_HELP.items()
        ],
        "timeline": line_chart(
            days,
            {
                "created": [d.created for d in analytics.timeline],
                "recalled": [d.recalled for d in analytics.timeline],
            },
        ),
        "loop": line_chart(days, {"reused": [d.count for d in analytics.loopMetric.trend]}),
        "radar": [
            {**axis.model_dump(), "width": percent_width(axis.count, stats.totalEntities)}
            for axis in analytics.knowledgeRadar
        ],
        "pending": pending[:PENDING_SHOWN],
        "pending_total": len(pending),
        "telemetry": telemetry.telemetry_summary(),
        "empty": stats.totalEntities == 0,
        "has_demo": bool(demo_entity_ids()),
    }
    return page(request, "dashboard/home.html", context, "dashboard:home")


@require_POST
@dashboard_required
def demo_seed_view(request: HtmxHttpRequest) -> HttpResponse:
    try:
        result = demo_seed(source_host="dashboard")
    except MemeshError as exc:
        refused(request, exc)
    else:
        messages.success(request, f"Demo tour loaded: {result.inserted} memories inserted.")
    return HttpResponseRedirect(reverse("dashboard:home"))


@require_POST
@dashboard_required
def demo_reset_view(request: HtmxHttpRequest) -> HttpResponse:
    try:
        result = demo_reset()
    except MemeshError as exc:
        refused(request, exc)
    else:
        messages.success(request, f"Demo tour removed: {result.removed} memories deleted.")
    return HttpResponseRedirect(reverse("dashboard:home"))
