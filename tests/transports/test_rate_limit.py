"""The per-client rate limit of `memesh serve` (api/edge/rate_limit.py), in process: the
buckets, and when a listener is limited. tests/e2e/test_rate_limit_serve.py sees `rate.limited`
from a real server."""

from __future__ import annotations

import runpy

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from api.edge.rate_limit import (
    LIMIT_ENV,
    REMOTE_DEFAULT_PER_MINUTE,
    RateLimiter,
    configured_limiter,
)
from tests.processes import ROOT


def test_a_client_gets_its_burst_then_waits_for_the_refill():
    limiter = RateLimiter(per_minute=60)  # 1 a second, bursts of 10
    assert [limiter.retry_after("a", now=100.0) for _ in range(10)] == [0.0] * 10
    assert limiter.retry_after("a", now=100.0) == pytest.approx(1.0)
    assert limiter.retry_after("b", now=100.0) == 0.0  # another address has its own bucket
    assert limiter.retry_after("a", now=100.5) == pytest.approx(0.5)
    assert limiter.retry_after("a", now=101.0) == 0.0


def test_only_a_remote_listener_is_limited_by_default(listener, monkeypatch):
    monkeypatch.setattr(settings, LIMIT_ENV, None)
    listener.remote = False
    assert configured_limiter(workers=1) is None
    listener.remote = True
    limiter = configured_limiter(workers=2)
    assert limiter is not None
    assert limiter.rate == pytest.approx(REMOTE_DEFAULT_PER_MINUTE / 60 / 2)  # a process's share
    monkeypatch.setattr(settings, LIMIT_ENV, 0.0)
    assert configured_limiter(workers=1) is None
    listener.remote = False
    monkeypatch.setattr(settings, LIMIT_ENV, 120.0)
    assert configured_limiter(workers=1).rate == pytest.approx(2.0)


def test_a_limit_that_is_not_a_number_is_refused_clearly(listener, monkeypatch):
    # Read once, in settings: a bad value stops the process as its settings load.
    monkeypatch.setenv(LIMIT_ENV, "lots")
    with pytest.raises(ImproperlyConfigured, match="MEMESH_RATE_LIMIT_PER_MINUTE must be a number"):
        runpy.run_path(str(ROOT / "memesh_site" / "settings.py"))
