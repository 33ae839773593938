"""/review/: the HTMX review page (review.views)."""

from django.urls import path

from review import views as review_views

app_name = "proposals"

urlpatterns = [
    path("", review_views.queue, name="queue"),
    path("<int:proposal_id>/", review_views.detail, name="detail"),
    path("<int:proposal_id>/accept", review_views.accept, name="accept"),
    path("<int:proposal_id>/reject", review_views.reject, name="reject"),
]
