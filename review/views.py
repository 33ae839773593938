"""The review page at /review/: the pending queue, a proposal beside its sources, accept/reject.

HTML first (DESIGN §9): every link and form works without JavaScript — a POST redirects back
to the queue with a message (post/redirect/get). With htmx (`request.htmx`), a card expands in
place and an accept or reject swaps the card for its result, without a page load.

Views only check access, validate the form and call one service or selector; the rules
(who may claim which sources, a double accept) live in proposals.decisions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from core.errors import MemeshError, NotFound
from dream.due import dream_due
from proposals import decisions, selectors
from proposals.models import ProposalKind, ProposalStatus, ReviewChannel
from proposals.permissions import HtmxHttpRequest, reviewer_required
from proposals.results import DreamRunSummary, ProposalListEntry
from review.forms import QueueFilterForm, RejectForm


def request_origin(request: HttpRequest) -> str:
    """Where a web review came from, for the audit record: the client address. memesh serves
    on loopback without a proxy, so REMOTE_ADDR is the peer (X-Forwarded-For is not trusted)."""
    return str(request.META.get("REMOTE_ADDR") or "")


def _card(item: ProposalListEntry) -> dict[str, Any]:
    """A queue entry (selectors.proposal_list's shape) with its date parsed for display."""
    return {**item, "created": datetime.fromisoformat(item["created_at"])}


def _card_for(proposal_id: int) -> dict[str, Any]:
    for item in selectors.proposal_list(ProposalStatus.PENDING):
        if item["id"] == proposal_id:
            return _card(item)
    raise NotFound(f"Proposal {proposal_id} is not pending")


def proposal_comparison(proposal_id: int) -> dict[str, Any]:
    try:
        proposal = selectors.proposal_get(proposal_id)
    except NotFound:
        raise Http404("No such proposal") from None
    detail = selectors.proposal_detail(proposal_id)
    return {
        "proposal": detail,
        "proposed": detail["proposed_digest"],
        "is_relation": detail["kind"] == ProposalKind.RELATION,
        "sources": selectors.proposal_sources(proposal),
        # What accepting would store: always a hypothesis (docs/trust.md, no laundering).
        "accept_trust": selectors.proposal_accept_preview(proposal),
    }


def _back(request: HttpRequest) -> str:
    """Where a no-JavaScript form returns to: its `next` field if it is on this site."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("proposals:queue")


@require_GET
@reviewer_required
def queue(request: HtmxHttpRequest) -> HttpResponse:
    pending = selectors.proposal_list(ProposalStatus.PENDING)
    projects = sorted({item["project"] for item in pending})
    filters = QueueFilterForm(request.GET or None, projects=projects)
    kind = project = ""
    if filters.is_valid():
        kind = filters.cleaned_data["kind"]
        project = filters.cleaned_data["project"]
    cards = [
        _card(item)
        for item in pending
        if (not kind or item["kind"] == kind) and (not project or item["project"] == project)
    ]
    return render(
        request,
        "review/queue.html",
        {
            "cards": cards,
            "filters": filters,
            "pending_total": len(pending),
            "reject_form": RejectForm(),
            "next": request.get_full_path(),
            "automatic": [_run_card(run) for run in selectors.automatic_dream_runs()],
            "due": dream_due(),
        },
    )


def _run_card(run: DreamRunSummary) -> dict[str, Any]:
    """An automatic dream run (selectors.automatic_dream_runs' shape) with its date parsed."""
    return {**run, "created": datetime.fromisoformat(run["createdAt"])}


@require_GET
@reviewer_required
def detail(request: HtmxHttpRequest, proposal_id: int) -> HttpResponse:
    context = proposal_comparison(proposal_id)
    if request.htmx:
        # The card's expand link: only the comparison, into the card.
        return render(request, "review/_comparison.html", context)
    context.update(reject_form=RejectForm(), next=reverse("proposals:queue"))
    return render(request, "review/detail.html", context)


def _done(request: HtmxHttpRequest, proposal_id: int, outcome: str, text: str) -> HttpResponse:
    if request.htmx:
        return render(
            request,
            "review/_result.html",
            {"proposal_id": proposal_id, "outcome": outcome, "text": text},
        )
    messages.success(request, text)
    return HttpResponseRedirect(_back(request))


def _refused(
    request: HtmxHttpRequest, proposal_id: int, error: str, reject_form: RejectForm | None = None
) -> HttpResponse:
    """The action did not happen: say why, in the card (htmx) or as a message (no JavaScript)."""
    if not request.htmx:
        messages.error(request, f"Proposal #{proposal_id}: {error}")
        return HttpResponseRedirect(_back(request))
    try:
        card: dict[str, Any] | None = _card_for(proposal_id)
    except NotFound:
        card = None  # no longer pending (reviewed elsewhere, or gone): only the error is left
    # 200, not 4xx: htmx swaps only successful responses by default.
    return render(
        request,
        "review/_card.html",
        {
            "card": card,
            "proposal_id": proposal_id,
            "error": error,
            "reject_form": reject_form or RejectForm(),
            "next": _back(request),
        },
    )


@require_POST
@reviewer_required
def accept(request: HtmxHttpRequest, proposal_id: int) -> HttpResponse:
    try:
        result = decisions.proposal_accept(
            proposal_id,
            channel=ReviewChannel.HTMX,
            reviewer=request.user.get_username(),
            origin=request_origin(request),
        )
    except MemeshError as exc:
        return _refused(request, proposal_id, exc.message)
    created = result.get("digestEntityName")
    text = f"Proposal #{proposal_id} accepted" + (f": created {created}." if created else ".")
    return _done(request, proposal_id, ProposalStatus.APPLIED, text)


@require_POST
@reviewer_required
def reject(request: HtmxHttpRequest, proposal_id: int) -> HttpResponse:
    form = RejectForm(request.POST)
    if not form.is_valid():
        return _refused(request, proposal_id, form.error_text(), form)
    try:
        decisions.proposal_reject(
            proposal_id,
            reason=form.cleaned_data["reason"],
            channel=ReviewChannel.HTMX,
            reviewer=request.user.get_username(),
            origin=request_origin(request),
        )
    except MemeshError as exc:
        return _refused(request, proposal_id, exc.message, form)
    return _done(
        request, proposal_id, ProposalStatus.REJECTED, f"Proposal #{proposal_id} rejected."
    )
