from django.urls import path

from api.views import HealthView, operation_view
from graph.operations import OPERATIONS

app_name = "api"

urlpatterns = [
    path("health", HealthView.as_view(), name="health"),
    *[
        path(op.rest_route, operation_view(op), name=name)
        for name, op in OPERATIONS.items()
        if op.rest
    ],
]
