"""GET /v1/health: status, version, the active entity count, whether vectors are on, which
database answers, and a 503 when the database cannot be opened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import forget, remember
from tests.processes import memesh_env, run_python
from tests.rest import assert_json

pytestmark = pytest.mark.django_db


def test_health_reports_status_version_and_the_active_entity_count(client):
    remember("one", "first")
    remember("two", "second")

    response = client.get("/v1/health")

    assert response.status_code == 200
    body = assert_json(response)
    assert body["success"] is True
    assert body["data"]["status"] == "ok"
    assert body["data"]["version"]
    assert body["data"]["entities"] == 2
    assert isinstance(body["data"]["vectors"], bool)
    assert body["data"]["backend"] == "sqlite"


def test_health_reports_status_version_and_count(client):
    remember("one", "first")
    remember("gone", "second")
    forget("gone")

    body = assert_json(client.get("/v1/health"))

    assert body["success"] is True
    assert body["data"]["status"] == "ok"
    assert body["data"]["version"]
    assert body["data"]["entities"] == 1  # active only


_HEALTH_SCRIPT = """
import json, django
django.setup()
from django.test import Client
r = Client().get("/v1/health")
print(json.dumps({"status": r.status_code, "headers": dict(r.headers), "body": r.json()}))
"""


def test_health_answers_503_when_the_database_cannot_be_opened(tmp_path: Path) -> None:
    # A directory where the database file should be: SQLite cannot open it.
    unopenable = tmp_path / "not-a-database"
    unopenable.mkdir()
    env = memesh_env(tmp_path / "home", MEMESH_DB_PATH=str(unopenable))

    done = run_python(["-c", _HEALTH_SCRIPT], env, timeout=120)

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == 503
    assert result["body"]["success"] is False
    assert result["body"]["errorCode"] == "server.internal"
    assert "database" in result["body"]["error"]
    assert result["headers"]["X-Content-Type-Options"] == "nosniff"
