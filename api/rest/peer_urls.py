"""The peer compatibility routes under /api/v1/ (api/rest/peer_views.py; off by default)."""

from django.urls import path

from api.rest.peer_views import ConsolidateView, MemoriesView, MemoryActionView, RecallView

app_name = "peer"

urlpatterns = [
    path("memories", MemoriesView.as_view(), name="memories"),
    path("memories/recall", RecallView.as_view(), name="recall"),
    path("memories/consolidate", ConsolidateView.as_view(), name="consolidate"),
    *[
        path(
            f"memories/<int:memory_id>/{action}",
            MemoryActionView.as_view(tool=f"memory_{action}"),
            name=action,
        )
        for action in ("supersede", "forget", "observe")
    ],
]
