"""GET /v1/doctor: no embedding probe unless asked, and no secret or home path in what it
answers, on success or failure."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from api.rest import views
from graph import doctor
from tests.rest import assert_error, assert_json
from tests.vector_support import use_fake_openai

pytestmark = pytest.mark.django_db


def test_doctor_does_not_probe_the_embedder_unless_asked(client, monkeypatch, embedding_server):
    use_fake_openai(monkeypatch, embedding_server)

    plain = assert_json(client.get("/v1/doctor"))
    assert embedding_server.requests == []  # no (possibly paid) embedding call per GET
    probed = assert_json(client.get("/v1/doctor?probe=true"))

    assert plain["success"] is True and plain["data"]["probed"] is False
    [embedder] = [c for c in plain["data"]["checks"] if c["name"] == "embedder"]
    assert "not probed" in embedder["detail"]
    assert probed["data"]["probed"] is True
    assert len(embedding_server.requests) == 1


def test_doctor_rejects_a_bad_probe_flag(client):
    body = assert_error(client.get("/v1/doctor?probe=maybe"), 400, "validation.bad-param")
    assert body["field"] == "probe"


def test_doctor_redacts_secrets_and_home_paths(client, monkeypatch):
    home = str(Path.home())
    secret = "sk-live-0123456789abcdefABCDEF"
    checks = [
        doctor.Check(
            "database",
            "ok",
            f"opened {home}/.memesh/knowledge-graph.db",
            {"error": f"Authorization: Bearer {secret}", "nested": [f"apiKey={secret}"]},
        ),
        doctor.Check("embedder", "warn", f"provider echoed {secret}"),
    ]
    monkeypatch.setattr(doctor, "run_checks", lambda probe: checks)

    response = client.get("/v1/doctor")

    text = response.content.decode()
    assert response.status_code == 200
    assert secret not in text
    assert home not in text
    data = assert_json(response)["data"]
    assert data["checks"][0]["detail"] == "opened ~/.memesh/knowledge-graph.db"
    assert data["checks"][0]["data"]["error"] == "Authorization: Bearer ***"


def test_doctor_redacts_a_memesh_home_outside_the_home_directory(monkeypatch):
    monkeypatch.setattr(settings, "MEMESH_HOME", Path("/srv/memesh-data"))

    assert views.redact({"p": ["/srv/memesh-data/x.db"]}) == {"p": ["$MEMESH_HOME/x.db"]}


def test_a_failing_doctor_suite_is_a_500_envelope_without_secrets(client, monkeypatch):
    def boom(probe: bool) -> list[doctor.Check]:
        raise RuntimeError(f"exploded in {Path.home()}/.memesh with key sk-abcdefghijklmnop")

    monkeypatch.setattr(doctor, "run_checks", boom)

    body = assert_error(client.get("/v1/doctor"), 500, "server.internal")
    assert str(Path.home()) not in body["error"]
    assert "sk-abcdefghijklmnop" not in body["error"]


def test_doctor_reports_the_agent_hosts_beside_its_checks(client, settings, tmp_path):
    """The Integrations section (hosts/health.py) on GET /v1/doctor: every host,
    the one set up with what it runs; it never turns the report's `ok` false."""
    settings.CLAUDE_CONFIG_DIR = tmp_path / ".claude"
    settings.CLAUDE_STATE_FILE = tmp_path / ".claude.json"
    settings.CODEX_HOME = tmp_path / ".codex"
    settings.GEMINI_DIR = tmp_path / ".gemini"
    settings.CURSOR_DIR = tmp_path / ".cursor"
    call_command("setup", "claude-code", stdout=StringIO())
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").write_text(
        '{"mcpServers": {"memesh": {"command": "/gone"}}}'
    )

    data = assert_json(client.get("/v1/doctor"))["data"]

    hosts = {c["name"]: c for c in data["integrations"]}
    assert list(hosts) == ["claude-code", "codex", "gemini", "cursor"]
    assert hosts["claude-code"]["status"] == "ok"
    assert hosts["claude-code"]["data"]["scopes"][0]["hooks"]["present"] == 8
    assert hosts["codex"]["data"]["installed"] is False
    assert (
        hosts["cursor"]["status"] == "warn" and "/gone does not exist" in hosts["cursor"]["detail"]
    )
    assert data["ok"] is True
