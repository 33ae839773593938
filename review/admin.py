"""Django admin for dream proposals: browse, compare with the sources, accept or reject.

Proposals are never added or edited by hand: the admin is read-only except for accept and
reject, which call proposals.decisions (channel "admin") behind the `review_proposal`
permission, as list actions and as buttons on a proposal's page.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import URLPattern, path, reverse
from django.views.decorators.http import require_POST

from core.errors import MemeshError
from proposals import decisions
from proposals.models import Proposal, ProposalReview, ProposalStatus, ReviewChannel
from proposals.permissions import REVIEW_PERMISSION
from proposals.schemas import MAX_REASON_CHARS
from review.forms import RejectForm
from review.views import proposal_comparison, request_origin


class ReviewActionForm(ActionForm):
    """The list's action bar, with the reason a "reject" action records."""

    reason = forms.CharField(
        label="Reason (for reject)",
        required=False,
        max_length=MAX_REASON_CHARS,
        widget=forms.TextInput(attrs={"maxlength": MAX_REASON_CHARS, "size": 40}),
    )


class ProposalReviewInline(admin.TabularInline):
    model = ProposalReview
    extra = 0
    can_delete = False
    fields = ("created_at", "action", "outcome", "channel", "reviewer", "origin", "reason")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _decide(
    request: HttpRequest, proposal_id: int, *, reject_reason: str | None = None
) -> str | None:
    """Accept one proposal, or reject it when given a reject reason, as this admin user;
    None when that took effect, else the reason it was refused."""
    who = {
        "channel": ReviewChannel.ADMIN,
        "reviewer": request.user.get_username(),
        "origin": request_origin(request),
    }
    try:
        if reject_reason is None:
            decisions.proposal_accept(proposal_id, **who)
        else:
            decisions.proposal_reject(proposal_id, reason=reject_reason, **who)
    except MemeshError as exc:
        return exc.message
    return None


def _report(request: HttpRequest, verb: str, outcomes: dict[int, str | None]) -> None:
    """One success message for what took effect, one error message per refusal."""
    done = [i for i, error in outcomes.items() if error is None]
    refused = {i: error for i, error in outcomes.items() if error is not None}
    if done:
        ids = ", ".join(f"#{i}" for i in done)
        messages.success(request, f"{verb.capitalize()} {len(done)} proposal(s): {ids}.")
    for proposal_id, error in refused.items():
        messages.error(request, f"Proposal #{proposal_id} was not {verb}: {error}")


@admin.register(Proposal)
class ProposalAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "project", "title", "source_count", "created_at")
    list_filter = ("status", "kind", "project")
    search_fields = ("project", "cluster_key", "proposed", "reason", "llm_model")
    date_hierarchy = "created_at"
    fields = (
        ("kind", "status"),
        ("project", "cluster_key"),
        ("llm_model", "prompt_version"),
        ("created_at", "reviewed_at"),
        "source_ids",
        "reason",
    )
    readonly_fields = (
        "kind",
        "status",
        "project",
        "cluster_key",
        "llm_model",
        "prompt_version",
        "created_at",
        "reviewed_at",
        "source_ids",
        "reason",
    )
    inlines = (ProposalReviewInline,)
    actions = ("accept_selected", "reject_selected")
    action_form = ReviewActionForm
    change_form_template = "admin/proposals/proposal/change_form.html"

    @admin.display(description="Proposal")
    def title(self, obj: Proposal) -> str:
        proposed = obj.proposed or {}
        if "name" in proposed:
            return str(proposed["name"])
        return f"{proposed.get('from')} {proposed.get('relation')} {proposed.get('to')}"

    @admin.display(description="Sources")
    def source_count(self, obj: Proposal) -> int:
        return len(obj.source_ids or [])

    # Read-only: proposals come from the dreamer and change only through accept/reject.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_review_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(REVIEW_PERMISSION)

    @admin.action(description="Accept selected proposals", permissions=["review"])
    def accept_selected(self, request: HttpRequest, queryset: QuerySet[Proposal]) -> None:
        outcomes = {pk: _decide(request, pk) for pk in queryset.values_list("pk", flat=True)}
        _report(request, "accepted", outcomes)

    @admin.action(description="Reject selected proposals", permissions=["review"])
    def reject_selected(self, request: HttpRequest, queryset: QuerySet[Proposal]) -> None:
        form = RejectForm(request.POST)
        if not form.is_valid():
            messages.error(request, "Nothing rejected: " + form.error_text())
            return
        reason = form.cleaned_data["reason"]
        outcomes = {
            pk: _decide(request, pk, reject_reason=reason)
            for pk in queryset.values_list("pk", flat=True)
        }
        _report(request, "rejected", outcomes)

    # --- the buttons on a proposal's page ----------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "<int:proposal_id>/accept/",
                self.admin_site.admin_view(self.accept_view),
                name="proposals_proposal_accept",
            ),
            path(
                "<int:proposal_id>/reject/",
                self.admin_site.admin_view(self.reject_view),
                name="proposals_proposal_reject",
            ),
        ]
        return [*own, *super().get_urls()]

    def _back_to(self, proposal_id: int) -> HttpResponseRedirect:
        return HttpResponseRedirect(reverse("admin:proposals_proposal_change", args=[proposal_id]))

    def accept_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        return require_POST(self._accept_view)(request, proposal_id)

    def reject_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        return require_POST(self._reject_view)(request, proposal_id)

    def _accept_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        if not self.has_review_permission(request):
            raise PermissionDenied
        _report(request, "accepted", {proposal_id: _decide(request, proposal_id)})
        return self._back_to(proposal_id)

    def _reject_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        if not self.has_review_permission(request):
            raise PermissionDenied
        form = RejectForm(request.POST)
        if not form.is_valid():
            messages.error(request, "Not rejected: " + form.error_text())
            return self._back_to(proposal_id)
        reason = form.cleaned_data["reason"]
        outcome = _decide(request, proposal_id, reject_reason=reason)
        _report(request, "rejected", {proposal_id: outcome})
        return self._back_to(proposal_id)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        context = dict(extra_context or {})
        if object_id.isdigit() and Proposal.objects.filter(pk=int(object_id)).exists():
            context.update(proposal_comparison(int(object_id)))
            context["can_review"] = self.has_review_permission(request)
            context["is_pending"] = context["proposal"]["status"] == ProposalStatus.PENDING
            context["reject_reason_max"] = MAX_REASON_CHARS
        return super().change_view(request, object_id, form_url, context)
