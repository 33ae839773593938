"""Routes of the dream workflow: /v1/dream/*, /v1/tasks/<id>."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
