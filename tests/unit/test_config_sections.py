"""core/config_sections.py: the registry of config.json's sections the apps declare, and the
service that checks, merges, masks and reads them (the transports' tests cover the routes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import config_sections
from core.errors import InvalidInput
from graph.config_sections import typed_section


@pytest.fixture
def webhook_section(monkeypatch: pytest.MonkeyPatch) -> None:
    """A section of a test app, declared for one test only."""
    monkeypatch.setattr(config_sections, "_sections", dict(config_sections._sections))
    config_sections.register(
        typed_section(
            "webhook",
            dict[str, str],
            "Where a test app posts.",
            default={"url": "http://127.0.0.1:9"},
            secret_fields=("signature",),
        )
    )


def test_every_app_declares_its_sections_as_django_starts() -> None:
    names = [section.name for section in config_sections.sections()]

    assert {"embedder", "briefing", "peerApi", "autoCapture"} <= set(names)  # graph
    assert {"llm", "llmFallbacks", "language", "transcriptMining"} <= set(names)  # dream
    assert "theme" in names  # the dashboard


def test_a_field_a_section_names_secret_is_masked_whatever_its_name(webhook_section) -> None:
    stored = {"webhook": {"url": "http://127.0.0.1:9", "signature": "sig-123"}, "other": 1}

    assert config_sections.masked(stored) == {
        "webhook": {"url": "http://127.0.0.1:9", "signature": "***"},
        "other": 1,
    }


def test_a_reader_gets_the_default_until_a_value_is_stored(home: Path, webhook_section) -> None:
    assert config_sections.setting("webhook") == {"url": "http://127.0.0.1:9"}

    config_sections.config_update({"webhook": {"url": "http://127.0.0.1:8"}})

    assert config_sections.setting("webhook") == {"url": "http://127.0.0.1:8"}
    assert config_sections.setting("peerApi") is False  # graph's default


def test_a_write_names_every_problem_and_changes_nothing(home: Path) -> None:
    config_sections.config_update({"language": "en"})

    with pytest.raises(InvalidInput) as refused:
        config_sections.config_change({"language": "x" * 61, "bogus": 1, "sessionLimit": 0})

    clauses = refused.value.message.split("; ")
    assert [clause.split(":")[0] for clause in clauses] == ["sessionLimit", "language", "bogus"]
    assert clauses[-1] == "bogus: unknown field"
    assert refused.value.field == "sessionLimit"
    assert json.loads((home / "config.json").read_text()) == {"language": "en"}
