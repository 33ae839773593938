"""The one envelope (api/envelope.py): what each exception means. tests/e2e/test_locked_database.py
checks that REST, MCP and the CLI report a locked database the same way."""

from __future__ import annotations

import json

from django.db import OperationalError
from rest_framework import exceptions as drf

from api.envelope import (
    DATABASE_BUSY,
    INTERNAL,
    Failure,
    failure_for,
    known_failure,
    ok,
    ok_json,
)
from graph.errors import InvalidInput, NotFound

# --- the mapping ---------------------------------------------------------------------------------


def test_a_memesh_error_keeps_its_code_status_message_and_field() -> None:
    failure = known_failure(InvalidInput("limit: too big", field="limit"))

    assert failure == Failure(400, "validation.bad-body", "limit: too big", "limit")
    assert failure.body() == {
        "success": False,
        "errorCode": "validation.bad-body",
        "error": "limit: too big",
        "field": "limit",
    }


def test_a_failure_without_a_field_has_no_field_key_and_keeps_its_extras_last() -> None:
    failure = Failure(404, "route.not-found", "No route", extra={"code": "NOT_FOUND"})

    assert list(failure.body()) == ["success", "errorCode", "error", "code"]
    assert json.loads(failure.to_json()) == failure.body()


def test_a_locked_database_is_a_busy_server_and_other_database_errors_are_internal() -> None:
    assert known_failure(OperationalError("database is locked")) is DATABASE_BUSY
    assert DATABASE_BUSY.status == 503 and DATABASE_BUSY.error_code == "server.internal"
    assert known_failure(OperationalError("no such table: x")) is None
    assert failure_for(OperationalError("no such table: x"), where="test") is INTERNAL


def test_drf_parse_errors_are_bad_bodies_and_unknown_exceptions_are_internal() -> None:
    parse = known_failure(drf.ParseError("Expecting value"))
    assert parse is not None and (parse.status, parse.error_code) == (400, "validation.bad-body")
    assert known_failure(ValueError("a bug")) is None
    assert failure_for(ValueError("a bug"), where="test") is INTERNAL
    assert failure_for(NotFound("gone"), where="test").status == 404


def test_the_success_envelope_is_the_same_built_from_data_or_from_json() -> None:
    assert (
        json.loads(ok_json('{"a":[1]}')) == ok({"a": [1]}) == {"success": True, "data": {"a": [1]}}
    )
