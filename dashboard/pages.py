"""What every dashboard view shares: who may see it, the call context its operations run in,
the page's theme, and how a refused action is told to the reader.

Access is the review site's: the same login and the same reviewer permission (docs/review.md;
`memesh createreviewer`). A logged-out visitor is sent to the login page, even on loopback:
the dashboard can forget memories and change the LLM settings, and loopback is shared by every
local user and every page a browser has open.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from core.errors import MemeshError
from dashboard.error_text import error_sentence
from dashboard.theme import THEMES, theme
from graph.ops.kit.operation import CallContext
from proposals.permissions import HtmxHttpRequest, reviewer_required

__all__ = [
    "DASHBOARD_CONTEXT",
    "THEMES",
    "HtmxHttpRequest",
    "dashboard_required",
    "page",
    "refused",
]

dashboard_required = reviewer_required

# As REST's: a page names its project (a chip) or reads every project.
DASHBOARD_CONTEXT = CallContext(source_host="dashboard", project=None, binds_reads=False)
NAV = (
    ("dashboard:home", "Home", "h"),
    ("dashboard:memories", "Memories", "m"),
    ("dashboard:project", "Project", "p"),
    ("dashboard:graph", "Graph", "g"),
    ("dashboard:settings", "Settings", "s"),
)


def page(
    request: HttpRequest, template: str, context: dict[str, Any], section: str
) -> HttpResponse:
    """A full dashboard page: the template with the theme and the navigation."""
    return render(request, template, {**context, "theme": theme(), "nav": NAV, "section": section})


def refused(request: HttpRequest, exc: MemeshError) -> None:
    """Tell the reader why an action did not happen: the sentence for its errorCode, with the
    server's own words after it (they name the memory or the field)."""
    messages.error(request, f"{error_sentence(exc.error_code)} ({exc.message})")
