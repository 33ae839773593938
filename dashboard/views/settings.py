"""Settings (/dashboard/settings/): the LLM chain with its keys masked, a Test of a provider
through the probe POST /v1/config/test runs (its live model list), the embedder's status and a
reindex with its progress (the TaskRun GET /v1/tasks/<id> reports), auto-capture, language and
the dashboard's theme — each through the service its REST route calls
(core/config_sections.py, dream/capabilities.py, dream/tasks.py). Nothing here reads or writes
config.json itself.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from core import config_sections
from core.errors import MemeshError, NotFound
from dashboard.error_text import error_sentence, probe_sentence
from dashboard.pages import THEMES, HtmxHttpRequest, dashboard_required, page, refused
from dream import capabilities
from dream.llm.providers import Provider
from dream.tasks import KIND_REINDEX, config_saved, task_run_enqueue
from graph.capture.capture import auto_capture_enabled
from proposals import selectors
from proposals.models import TaskStatus

PROVIDERS: tuple[str, ...] = Provider.__args__  # type: ignore[attr-defined]
FINISHED = (TaskStatus.SUCCEEDED, TaskStatus.FAILED)


def _chain(stored: dict[str, Any]) -> list[dict[str, Any]]:
    """The configured chain, primary first, as the masked configuration has it."""
    primary = stored.get("llm")
    fallbacks = stored.get("llmFallbacks") or []
    chain = [{"role": "primary", "index": None, **primary}] if isinstance(primary, dict) else []
    chain += [
        {"role": f"fallback {i + 1}", "index": i, **entry}
        for i, entry in enumerate(fallbacks)
        if isinstance(entry, dict)
    ]
    return chain


def _settings_context() -> dict[str, Any]:
    current = capabilities.config_get()
    stored = current["config"]
    return {
        "chain": _chain(stored),
        "capabilities": current["capabilities"],
        "embedder": stored.get("embedder"),
        "language": stored.get("language") or "",
        "auto_capture": auto_capture_enabled(),
        "auto_capture_stored": stored.get("autoCapture"),
        "stored_theme": stored.get("theme") or "system",
        "themes": THEMES,
        "providers": PROVIDERS,
    }


@require_GET
@dashboard_required
def settings_page(request: HtmxHttpRequest) -> HttpResponse:
    try:
        context = _settings_context()
    except MemeshError as exc:
        refused(request, exc)
        context = {"broken": True, "themes": THEMES, "providers": PROVIDERS}
    task_id = request.GET.get("task", "")
    if task_id:
        context["task"] = _task(task_id)
    return page(request, "dashboard/settings.html", context, "dashboard:settings")


@require_POST
@dashboard_required
def settings_save(request: HtmxHttpRequest) -> HttpResponse:
    language = request.POST.get("language", "").strip()
    update = {
        "language": language or None,  # empty: unset (English)
        "autoCapture": request.POST.get("autoCapture") == "on",
        "theme": request.POST.get("theme") or None,
    }
    try:
        config_saved(config_sections.config_change(update))
    except MemeshError as exc:
        refused(request, exc)
    else:
        messages.success(request, "Settings saved.")
    return HttpResponseRedirect(reverse("dashboard:settings"))


def _probe_payload(request: HtmxHttpRequest) -> dict[str, Any]:
    payload: dict[str, Any] = {"provider": request.POST.get("provider", "")}
    for field in ("apiKey", "host"):
        value = request.POST.get(field, "").strip()
        if value:
            payload[field] = value
    index = request.POST.get("fallbackIndex", "").strip()
    if index.isdigit():
        payload["fallbackIndex"] = int(index)
    return payload


@require_POST
@dashboard_required
def settings_test(request: HtmxHttpRequest) -> HttpResponse:
    """A provider test: the probe's outcome (valid, models, suggested, or its errorCode)."""
    try:
        outcome: dict[str, Any] = capabilities.config_test(_probe_payload(request))
    except MemeshError as exc:  # the form itself was refused (no provider, a bad key shape)
        outcome = {"valid": False, "sentence": error_sentence(exc.error_code), "error": exc.message}
    else:
        if not outcome.get("valid"):
            outcome["sentence"] = probe_sentence(outcome.get("errorCode"))
    context = {"outcome": outcome, "provider": request.POST.get("provider", "")}
    if request.htmx:
        return render(request, "dashboard/_test_result.html", context)
    page_context = {**_settings_context(), **context}
    return page(request, "dashboard/settings.html", page_context, "dashboard:settings")


@require_POST
@dashboard_required
def reindex(request: HtmxHttpRequest) -> HttpResponse:
    queued = task_run_enqueue(kind=KIND_REINDEX, params={})
    messages.success(request, "Reindex queued: the worker rebuilds the vectors in the background.")
    return HttpResponseRedirect(f"{reverse('dashboard:settings')}?task={queued.task_id}")


def _task(task_id: str) -> dict[str, Any]:
    try:
        run = selectors.task_run_detail(uuid.UUID(task_id))
    except (ValueError, NotFound):
        raise Http404("No such task") from None
    return {**run, "finished": run["status"] in FINISHED}


@require_GET
@dashboard_required
def task(request: HtmxHttpRequest, task_id: str) -> HttpResponse:
    """The reindex's progress: polled by htmx until it finishes; a plain page without JS."""
    context = {"task": _task(task_id)}
    if request.htmx:
        return render(request, "dashboard/_task.html", context)
    return HttpResponseRedirect(f"{reverse('dashboard:settings')}?task={task_id}")
