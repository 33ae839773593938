"""The dashboard's errorCode sentences (dashboard/error_text.py): every code the server can
answer with has one, found where the codes are made — the MemeshError family, the
reference's list in the OpenAPI document, and each `Failure(status, "code", ...)`,
`(status, "code", ...)` or `error_code = "code"` in the server's source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from api.rest.openapi import ERROR_CODES
from core.errors import MemeshError
from dashboard.error_text import (
    ERROR_SENTENCES,
    PROBE_SENTENCES,
    UNKNOWN_ERROR,
    error_sentence,
    probe_sentence,
)
from tests.processes import ROOT

SERVER_CODE = ("agents", "api", "dashboard", "graph", "memesh_site", "proposals")
CODE = r'"([a-z]+\.[a-z][a-z-]*)"'
MADE_HERE = (
    re.compile(r"\b[1-5][0-9][0-9],\s*" + CODE),  # Failure(404, "route.not-found", ...)
    re.compile(r"error_code\s*[=:]\s*(?:str\s*=\s*)?" + CODE),  # class attribute or keyword
    re.compile(r"_CODE\s*=\s*" + CODE),  # RETIRED_CODE = "route.retired"
)
PROBE_CODES = ("auth", "network", "no_models", "bad_host", "unknown")  # the reference's list


def _subclasses(cls: type[MemeshError]) -> set[type[MemeshError]]:
    found: set[type[MemeshError]] = set(cls.__subclasses__())
    return found.union(*(_subclasses(c) for c in found))


def codes_in_source() -> set[str]:
    codes: set[str] = set()
    for package in SERVER_CODE:
        for path in Path(ROOT, package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for pattern in MADE_HERE:
                codes.update(pattern.findall(text))
    return codes


def test_the_source_scan_finds_the_codes_made_outside_the_error_classes() -> None:
    # Guards the scan itself: these come only from literals in the ASGI edge and middleware.
    assert {"rate.limited", "request.length-required", "route.method-not-allowed"} <= (
        codes_in_source()
    )


def test_every_error_code_the_server_answers_with_has_a_sentence() -> None:
    import api.mcp_server.management.commands.mcp  # noqa: F401 - defines a MemeshError of its own

    classes = {cls.error_code for cls in _subclasses(MemeshError)} | {MemeshError.error_code}
    every = classes | set(ERROR_CODES) | codes_in_source()
    missing = sorted(code for code in every if code not in ERROR_SENTENCES)
    assert missing == []


@pytest.mark.parametrize("code", sorted(ERROR_SENTENCES))
def test_each_sentence_is_one_sentence_of_its_own(code: str) -> None:
    sentence = error_sentence(code)
    assert sentence.endswith(".") and sentence[0].isupper()
    assert code not in sentence


def test_an_unknown_code_gets_the_generic_sentence() -> None:
    assert error_sentence("brand.new-code") == UNKNOWN_ERROR


def test_every_config_test_code_has_a_sentence_and_http_codes_name_their_status() -> None:
    assert set(PROBE_CODES) == set(PROBE_SENTENCES)
    assert probe_sentence("http_429") == "The provider answered with HTTP status 429."
    assert probe_sentence(None) == PROBE_SENTENCES["unknown"]
    assert probe_sentence("auth") == PROBE_SENTENCES["auth"]
