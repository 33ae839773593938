"""Routes of the LLM configuration and telemetry: /v1/config, /v1/config/test, /v1/telemetry."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
