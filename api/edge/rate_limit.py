"""Per-client request rate limit of `memesh serve`: 429 `rate.limited` with Retry-After.

A token bucket per client address over every /v1 and /mcp request, checked before the bearer
token (so guessing tokens is slowed too) and before the body is read. On by default only for a
remote listener (600 requests a minute per address, bursts of 100); a loopback listener serves
this machine's own agents and is not limited unless MEMESH_RATE_LIMIT_PER_MINUTE says so
(0 turns the limit off everywhere).

Each server process keeps its own buckets, with its share of the limit (the kernel spreads
connections over the processes), so the total allowed is about the configured figure without
any shared state.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from api.edge import remote_auth
from core.errors import Failure

LIMIT_ENV = "MEMESH_RATE_LIMIT_PER_MINUTE"
REMOTE_DEFAULT_PER_MINUTE = 600
# A burst may use this many seconds' worth of the rate at once.
BURST_SECONDS = 10
MIN_BURST = 5
# Buckets of clients idle this long are dropped (a full bucket is the same as no bucket).
IDLE_SECONDS = 600


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0  # tokens per second
        self.capacity = max(float(MIN_BURST), self.rate * BURST_SECONDS)
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()
        self._swept = time.monotonic()

    def retry_after(self, client: str, now: float | None = None) -> float:
        """0 when the request may proceed (and is counted), else seconds until it may."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if now - self._swept > IDLE_SECONDS:
                self._sweep(now)
            bucket = self._buckets.get(client)
            if bucket is None:
                bucket = self._buckets[client] = _Bucket(self.capacity, now)
            bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.updated) * self.rate)
            bucket.updated = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate

    def _sweep(self, now: float) -> None:
        self._buckets = {k: b for k, b in self._buckets.items() if now - b.updated < IDLE_SECONDS}
        self._swept = now


def configured_limiter(workers: int) -> RateLimiter | None:
    """The limiter this process applies, from the environment and the listener kind."""
    configured: float | None = settings.MEMESH_RATE_LIMIT_PER_MINUTE
    if configured is not None:
        per_minute = configured
    elif remote_auth.listener.remote:
        per_minute = REMOTE_DEFAULT_PER_MINUTE
    else:
        return None
    if per_minute <= 0:
        return None
    return RateLimiter(per_minute / max(workers, 1))


def client_address(scope: dict[str, Any]) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""


async def reject(send: Any, retry_after: float) -> None:
    seconds = max(1, math.ceil(retry_after))
    message = f"Too many requests from this address: retry in {seconds} s"
    body = Failure(429, "rate.limited", message).to_json().encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(seconds).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
