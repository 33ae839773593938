"""The per-client rate limit of a real `memesh serve` process (api/edge/rate_limit.py):
`rate.limited` with Retry-After over HTTP. tests/transports/test_rate_limit.py checks the
limiter itself in process."""

from __future__ import annotations

import subprocess

import httpx
import pytest

from api.edge.rate_limit import LIMIT_ENV
from tests.processes import ROOT, free_port, memesh, memesh_env, stop, wait_until_healthy


@pytest.mark.slow
def test_a_real_server_answers_429_rate_limited_with_retry_after(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    env = {**memesh_env(tmp_path / "home"), LIMIT_ENV: "30"}  # bursts of 5
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker", "--workers", "1"),
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(proc, base, log)
        with httpx.Client(base_url=base, timeout=30) as http:
            answers = [http.post("/v1/recall", json={}) for _ in range(12)]
        limited = [a for a in answers if a.status_code == 429]
        assert limited, [a.status_code for a in answers]
        assert all(a.status_code in (200, 429) for a in answers)
        body = limited[0].json()
        assert body["success"] is False
        assert body["errorCode"] == "rate.limited"
        assert int(limited[0].headers["retry-after"]) >= 1
    finally:
        stop(proc)
