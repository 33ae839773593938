"""Who may review proposals, for every page that shows or decides them: the review page, the
admin's review actions and the dashboard, which share the review site's login (docs/review.md;
`memesh createreviewer` grants the permission)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

REVIEW_PERMISSION = "proposals.review_proposal"


class HtmxHttpRequest(HttpRequest):
    """A request as HtmxMiddleware leaves it (django-htmx's documented typing recipe)."""

    htmx: HtmxDetails


def reviewer_required(view: Any) -> Any:
    # Logged out: to the login page. Logged in without the permission: 403.
    return login_required(permission_required(REVIEW_PERMISSION, raise_exception=True)(view))
