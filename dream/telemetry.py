"""LLM telemetry: one `LLMAttempt` row per provider attempt, the per-flow scorecard of
GET /v1/telemetry and `memesh telemetry`, and pruning by age.

A *call* is one `complete()` (all its attempts share `call_id`): it succeeded when one of its
attempts did, and used the fallback when the attempt that succeeded was not the first.
Rows older than AUTO_PRUNE_DAYS are pruned at most once a day per process, as rows are written.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid
from collections import Counter, defaultdict
from datetime import timedelta
from typing import Annotated

from django.db import transaction
from django.utils import timezone
from pydantic import Field

# GET /v1/telemetry's OpenAPI model is made from the TypedDicts below (api/rest/config_views.py),
# and before Python 3.12 pydantic reads nested ones only from typing_extensions.
from typing_extensions import TypedDict

from core.errors import InvalidParameter
from core.redact import redact_message
from proposals.models import LLMAttempt

DEFAULT_WINDOW_DAYS = 30
MAX_WINDOW_DAYS = 365
AUTO_PRUNE_DAYS = 180
AUTO_PRUNE_EVERY_SECONDS = 24 * 3600
SAMPLE_ERRORS = 5

_last_auto_prune = 0.0
_prune_lock = threading.Lock()


class OkFail(TypedDict):
    ok: int
    fail: int


class SampleError(TypedDict):
    error_class: str
    message: str


# The scorecard's shapes; GET /v1/telemetry's OpenAPI models are made from them (no docstrings:
# they would become descriptions there), `Field` metadata included.
class FlowSummary(TypedDict):
    flow: str
    total_calls: int
    total_attempts: int
    successes: int
    failures: int
    fallback_used: int
    median_latency_ms: int
    by_provider: dict[str, OkFail]
    by_model: dict[str, OkFail]
    by_project: dict[str, OkFail]
    by_error_class: dict[str, int]
    sample_errors: Annotated[list[SampleError], Field(max_length=SAMPLE_ERRORS)]
    window_days: int


class TelemetrySummary(TypedDict):
    window_days: int
    summaries: list[FlowSummary]


def attempt_record(
    *,
    call_id: uuid.UUID,
    attempt: int,
    flow: str,
    provider: str,
    model: str,
    project: str,
    ok: bool,
    latency_ms: int,
    error_class: str = "",
    message: str = "",
    fallback_used: bool = False,
    secrets: list[str] | None = None,
) -> LLMAttempt:
    """Store one attempt; `message` is redacted here (the configured `secrets` literally, and
    anything key-shaped), so no caller can store a key by mistake."""
    row = LLMAttempt.objects.create(
        call_id=call_id,
        attempt=attempt,
        flow=flow[:50],
        provider=provider[:30],
        model=model[:200],
        project=project[:255],
        ok=ok,
        error_class=error_class[:30],
        message=redact_message(message, secrets or []),
        latency_ms=max(0, latency_ms),
        fallback_used=fallback_used,
    )
    _auto_prune()
    return row


def _auto_prune() -> None:
    global _last_auto_prune
    now = time.monotonic()
    with _prune_lock:
        if _last_auto_prune and now - _last_auto_prune < AUTO_PRUNE_EVERY_SECONDS:
            return
        _last_auto_prune = now
    telemetry_prune(older_than_days=AUTO_PRUNE_DAYS)


def telemetry_prune(*, older_than_days: int) -> int:
    """Delete attempts older than `older_than_days`; how many went."""
    if older_than_days < 0:
        raise InvalidParameter("prune days must be 0 or more", field="prune")
    cutoff = timezone.now() - timedelta(days=older_than_days)
    with transaction.atomic():
        deleted, _ = LLMAttempt.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def parse_window(raw: object) -> int:
    """The `window` parameter: an integer 1–365 (default 30)."""
    if raw is None or raw == "":
        return DEFAULT_WINDOW_DAYS
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise InvalidParameter(
            f"window must be a whole number of days (got {raw!r})", field="window"
        ) from None
    if not 1 <= value <= MAX_WINDOW_DAYS:
        raise InvalidParameter(
            f"window must be 1–{MAX_WINDOW_DAYS} days (got {value})", field="window"
        )
    return value


def _ok_fail() -> OkFail:
    return {"ok": 0, "fail": 0}


def _flow_summary(flow: str, rows: list[LLMAttempt], window_days: int) -> FlowSummary:
    calls: dict[uuid.UUID, list[LLMAttempt]] = defaultdict(list)
    for row in rows:
        calls[row.call_id].append(row)
    successes = sum(1 for attempts in calls.values() if any(a.ok for a in attempts))
    fallback = sum(
        1 for attempts in calls.values() if any(a.ok and a.fallback_used for a in attempts)
    )
    by: dict[str, dict[str, OkFail]] = {"provider": {}, "model": {}, "project": {}}
    for row in rows:
        for name, key in (
            ("provider", row.provider),
            ("model", row.model),
            ("project", row.project),
        ):
            counts = by[name].setdefault(key, _ok_fail())
            if row.ok:
                counts["ok"] += 1
            else:
                counts["fail"] += 1
    failed = [row for row in rows if not row.ok]
    recent_failures = sorted(failed, key=lambda r: (r.created_at, r.id), reverse=True)
    return {
        "flow": flow,
        "total_calls": len(calls),
        "total_attempts": len(rows),
        "successes": successes,
        "failures": len(calls) - successes,
        "fallback_used": fallback,
        "median_latency_ms": int(statistics.median(r.latency_ms for r in rows)) if rows else 0,
        "by_provider": by["provider"],
        "by_model": by["model"],
        "by_project": by["project"],
        "by_error_class": dict(Counter(r.error_class or "unknown" for r in failed)),
        "sample_errors": [
            {"error_class": r.error_class or "unknown", "message": r.message}
            for r in recent_failures[:SAMPLE_ERRORS]
        ],
        "window_days": window_days,
    }


def telemetry_summary(*, window_days: int = DEFAULT_WINDOW_DAYS) -> TelemetrySummary:
    """The per-flow scorecard for the last `window_days` days, flows in name order."""
    if not 1 <= window_days <= MAX_WINDOW_DAYS:
        raise InvalidParameter(f"window must be 1–{MAX_WINDOW_DAYS} days", field="window")
    since = timezone.now() - timedelta(days=window_days)
    by_flow: dict[str, list[LLMAttempt]] = defaultdict(list)
    for row in LLMAttempt.objects.filter(created_at__gte=since).order_by("id"):
        by_flow[row.flow].append(row)
    return {
        "window_days": window_days,
        "summaries": [_flow_summary(flow, by_flow[flow], window_days) for flow in sorted(by_flow)],
    }
