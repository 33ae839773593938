from django.urls import path

from api.operations import OPERATIONS
from api.rest import config_urls, dream_urls
from api.rest.docs_views import DocsView, OpenAPIView
from api.rest.entities import EntityDetailView, EntityListView
from api.rest.views import (
    DoctorView,
    HealthView,
    UpdateStatusView,
    operation_view,
    retired_view,
)
from api.retired import RETIRED

app_name = "api"

urlpatterns = [
    path("health", HealthView.as_view(), name="health"),
    path("openapi.json", OpenAPIView.as_view(), name="openapi"),
    path("docs", DocsView.as_view(), name="docs"),
    path("doctor", DoctorView.as_view(), name="doctor"),
    path("update-status", UpdateStatusView.as_view(), name="update-status"),
    path("entities", EntityListView.as_view(), name="entities"),
    # <path:>: an entity name may contain "/" (names are free-form).
    path("entities/<path:name>", EntityDetailView.as_view(), name="entity"),
    *[path(route, retired_view(route), name=f"retired-{route}") for route in RETIRED],
    *config_urls.urlpatterns,
    *dream_urls.urlpatterns,
    *[
        path(op.rest_route, operation_view(op), name=name)
        for name, op in OPERATIONS.items()
        if op.rest
    ],
]
