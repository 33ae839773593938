"""Routes of the LLM configuration and telemetry: /v1/config, /v1/config/test, /v1/telemetry."""

from django.urls import URLPattern, path

from api.rest.config_views import ConfigTestView, ConfigView, TelemetryView

urlpatterns: list[URLPattern] = [
    path("config", ConfigView.as_view(), name="config"),
    path("config/test", ConfigTestView.as_view(), name="config-test"),
    path("telemetry", TelemetryView.as_view(), name="telemetry"),
]
