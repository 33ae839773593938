"""Routes of the dream workflow: /v1/dream/*, /v1/tasks/<id>."""

from django.urls import URLPattern, path

from api.rest.dream_views import (
    DreamRunView,
    ProposalAcceptView,
    ProposalDetailView,
    ProposalListView,
    ProposalRejectView,
    TaskRunView,
)

urlpatterns: list[URLPattern] = [
    path("dream/proposals", ProposalListView.as_view(), name="dream-proposals"),
    path("dream/proposals/<int:proposal_id>", ProposalDetailView.as_view(), name="dream-proposal"),
    path(
        "dream/proposals/<int:proposal_id>/accept",
        ProposalAcceptView.as_view(),
        name="dream-accept",
    ),
    path(
        "dream/proposals/<int:proposal_id>/reject",
        ProposalRejectView.as_view(),
        name="dream-reject",
    ),
    path("dream/run", DreamRunView.as_view(), name="dream-run"),
    path("tasks/<uuid:task_id>", TaskRunView.as_view(), name="task"),
]
