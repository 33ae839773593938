"""Stateful schemathesis runs over /v1: sequences of calls where later requests reuse what earlier
responses returned, against the real app (Django's WSGI handler, real SQLite with FTS5).

The OpenAPI document names entities in request bodies rather than in paths, so schemathesis
infers no links between the memory operations by itself (it finds only the dream-proposal
ones, from `{proposal_id}`). The links below are added to this test's copy of the document:
remember → recall / forget / why / remember by the name it returned, and recall → forget / why
by the name of its first result. Every response must be a non-5xx that the document describes.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.db import transaction
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.rest.openapi import openapi_document
from graph.ops.recall.access import discard_pending_accesses
from tests.helpers import remember

pytestmark = pytest.mark.django_db

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# The linked memory operations (a stateful run only walks operations that links connect).
# Config, telemetry and dream runs are left to the stateless test in test_openapi.py: a
# stateful run would rewrite the shared test configuration file.
OPERATIONS = ["remember", "recall", "forget", "why"]


def _by_name(target: str, expression: str) -> dict[str, Any]:
    return {"operationId": target, "requestBody": {"name": expression}}


def _links() -> dict[str, dict[str, dict[str, Any]]]:
    stored = "$response.body#/data/name"
    first = "$response.body#/data/entities/0/name"
    return {
        "remember": {
            "RecallWhatWasStored": {"operationId": "recall", "requestBody": {"query": stored}},
            "ForgetWhatWasStored": _by_name("forget", stored),
            "WhyWhatWasStored": _by_name("why", stored),
            "AppendToWhatWasStored": _by_name("remember", stored),
        },
        "recall": {
            "ForgetTheFirstResult": _by_name("forget", first),
            "WhyTheFirstResult": _by_name("why", first),
        },
    }


def linked_document() -> dict[str, Any]:
    doc = copy.deepcopy(openapi_document())
    links = _links()
    for item in doc["paths"].values():
        for operation in item.values():
            if operation["operationId"] in links:
                operation["responses"]["200"]["links"] = links[operation["operationId"]]
    return doc


schema = schemathesis.openapi.from_dict(linked_document()).include(operation_id=OPERATIONS)
schema.app = WSGIHandler()


class MemoryStateMachine(schema.as_state_machine()):  # type: ignore[misc]
    """Each scenario runs in a savepoint that is rolled back, so it starts from the same
    database: a replayed (or shrunk) scenario then sees the same responses."""

    def setup(self) -> None:
        self._scenario = transaction.atomic()
        self._scenario.__enter__()

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._scenario.__exit__(None, None, None)
        discard_pending_accesses()

    def validate_response(
        self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any
    ) -> None:
        case.validate_response(
            response, checks=CHECKS, transport_kwargs=kwargs or None, recorder=self.recorder
        )


def test_the_links_connect_the_memory_operations() -> None:
    machine = schema.as_state_machine()
    transitions = {
        (source, link.target.label)
        for source, entry in machine._transitions.operations.items()
        for link in entry.outgoing
    }

    assert ("POST /v1/remember", "POST /v1/recall") in transitions
    assert ("POST /v1/remember", "POST /v1/forget") in transitions
    assert ("POST /v1/recall", "POST /v1/why") in transitions


def test_call_sequences_get_documented_non_5xx_responses(keep_test_connection: None) -> None:
    remember("auth-decision", "Chose JWT for authentication", type="decision")
    remember("db-choice", "Use PostgreSQL", tags=["project:myapp"])

    run_state_machine_as_test(
        MemoryStateMachine,
        settings=settings(
            max_examples=25,
            stateful_step_count=8,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
