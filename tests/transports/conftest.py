"""Transport tests: REST views through Django's test client and middleware, the ASGI edge and
MCP handlers fed messages in process, management commands through call_command — all on the
in-memory test database built from migrations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client

from api.edge import remote_auth
from tests.dreams import make_user


@pytest.fixture
def keep_test_connection() -> Iterator[None]:
    """A real WSGI handler (schemathesis calls the app through one) closes "old" connections
    around each request, which would end the test's transaction; Django's own test client
    disconnects the same signals."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def reviewer_client() -> Client:
    """A test client logged in as "rita", a staff user who may review proposals."""
    client = Client()
    client.force_login(make_user("rita", review=True))
    return client


@pytest.fixture
def listener(monkeypatch: pytest.MonkeyPatch) -> remote_auth.ListenerConfig:
    """A fresh listener config (loopback, no token) in place of the process's for one test:
    the ASGI gate and the rate limiter both read `remote_auth.listener`."""
    monkeypatch.setattr(remote_auth, "listener", remote_auth.ListenerConfig())
    return remote_auth.listener
