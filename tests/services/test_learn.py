"""learn: a structured lesson per distinct error per project (API reference, "learn")."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import InvalidInput
from graph.models import Entity
from graph.ops.kit.operation import CallContext
from graph.ops.learn import LEARN, error_signature, error_words, lesson_name
from tests.helpers import names, recall

pytestmark = pytest.mark.django_db

CTX = CallContext(source_host="test", project="acme/shop")


def learn(error: str, fix: str, ctx: CallContext = CTX, **fields: Any) -> dict[str, Any]:
    return LEARN.run({"error": error, "fix": fix, **fields}, ctx)


def lesson(name: str) -> Entity:
    return Entity.objects.get(name=name)


def observations(name: str) -> list[str]:
    return list(lesson(name).observations.values_list("text", flat=True))


def tags(name: str) -> list[str]:
    return sorted(lesson(name).tags.values_list("name", flat=True))


# --- normalisation (pure) -------------------------------------------------------------------


def test_numbers_paths_and_units_do_not_make_a_different_error() -> None:
    a = error_signature("timeout after 30s in /a/b.py")
    b = error_signature("Timeout after 45s in /c/d.py")
    c = error_signature("timeout after 1.5ms in C:\\work\\x.py")

    assert a == b == c
    assert a[0] == "timeout"


def test_hex_ids_uuids_urls_and_quoted_values_are_dropped() -> None:
    assert error_words(
        "Request https://x.io/a?b=1 for 550e8400-e29b-41d4-a716-446655440000 failed at "
        "0xdeadbeef (commit 3fa9c21e): 'foo' is \"bar\""
    ) == ["request", "for", "failed", "at", "commit", "is"]


def test_distinctive_words_keep_errors_apart() -> None:
    assert error_signature("connection refused on port 5432") != error_signature(
        "connection reset on port 5432"
    )
    assert error_signature("timeout after 30s") != error_signature("timeout before 30s")


def test_an_error_made_only_of_variable_parts_still_gets_its_own_signature() -> None:
    assert error_signature("/a/b/c.py")[1] != error_signature("/x/y/z.py")[1]


def test_the_name_carries_the_project_and_a_readable_pattern() -> None:
    name = lesson_name("acme/shop", "TypeError: Cannot read property 'x' of null")

    assert name.startswith("lesson-acme-shop-typeerror-cannot-read-property-null-")
    assert lesson_name("other/repo", "TypeError: Cannot read property 'x' of null") != name


# --- the operation --------------------------------------------------------------------------


def test_it_creates_a_lesson_with_structured_observations_and_tags() -> None:
    result = learn(
        "TypeError: Cannot read property of null",
        "Added optional chaining",
        root_cause="API response can be null on timeout",
        prevention="Validate API responses",
        severity="major",
    )

    assert result["learned"] is True
    assert result["type"] == "lesson_learned"
    assert result["name"].startswith("lesson-acme-shop-")
    assert observations(result["name"]) == [
        "Error: TypeError: Cannot read property of null",
        "Root cause: API response can be null on timeout",
        "Fix: Added optional chaining",
        "Prevention: Validate API responses",
    ]
    assert tags(result["name"]) == [
        "error-pattern:typeerror-cannot-read-property-null",
        "project:acme/shop",
        "severity:major",
        "source:explicit",
    ]
    entity = lesson(result["name"])
    assert entity.type == "lesson_learned"
    assert entity.confidence == 1.0
    assert entity.metadata["provenance"] == {"source_host": "test"}


def test_severity_defaults_to_minor_and_optional_fields_are_left_out() -> None:
    name = learn("Tests fail with SIGSEGV in native module", "Use forks pool")["name"]

    assert "severity:minor" in tags(name)
    assert observations(name) == [
        "Error: Tests fail with SIGSEGV in native module",
        "Fix: Use forks pool",
    ]


def test_the_same_error_twice_is_one_lesson_with_both_fixes() -> None:
    first = learn("timeout after 30s in /a/b.py", "Raised the timeout")
    second = learn("timeout after 45s in /c/d.py", "Cached the slow call")

    assert first["name"] == second["name"]
    assert Entity.objects.filter(type="lesson_learned").count() == 1
    obs = observations(first["name"])
    assert "Fix: Raised the timeout" in obs
    assert "Fix: Cached the slow call" in obs
    assert lesson(first["name"]).confidence == 1.0  # not 0.8 + steps


def test_different_errors_are_two_lessons() -> None:
    a = learn("connection refused on port 5432", "Started postgres")
    b = learn("permission denied writing the cache", "Fixed the directory mode")

    assert a["name"] != b["name"]
    assert Entity.objects.filter(type="lesson_learned").count() == 2


def test_the_same_error_in_another_project_is_another_lesson() -> None:
    a = learn("disk full", "Pruned logs")
    b = learn("disk full", "Pruned logs", ctx=CallContext(source_host="test", project="b/c"))

    assert a["name"] != b["name"]


def test_a_repeated_lesson_keeps_its_highest_severity() -> None:
    name = learn("disk full", "Pruned logs", severity="critical")["name"]
    learn("disk full", "Rotated logs", severity="minor")

    assert [t for t in tags(name) if t.startswith("severity:")] == ["severity:critical"]

    learn("disk full", "Moved the database", severity="major")
    assert [t for t in tags(name) if t.startswith("severity:")] == ["severity:critical"]


def test_a_lower_severity_is_raised_when_the_error_recurs_worse() -> None:
    name = learn("disk full", "Pruned logs")["name"]
    learn("disk full", "Moved the database", severity="major")

    assert [t for t in tags(name) if t.startswith("severity:")] == ["severity:major"]
    # the dropped tag left the keyword index too
    assert names(recall("minor")) == []


def test_the_lesson_is_searchable() -> None:
    name = learn("SIGSEGV in native module", "Changed vitest pool to forks")["name"]

    assert names(recall("vitest forks")) == [name]


def test_an_explicit_project_wins_over_the_callers() -> None:
    name = learn("disk full", "Pruned logs", project="other/repo")["name"]

    assert name.startswith("lesson-other-repo-")
    assert "project:other/repo" in tags(name)


def test_a_project_tag_as_project_is_not_doubled() -> None:
    name = learn("disk full", "Pruned logs", project="project:other/repo")["name"]

    assert "project:other/repo" in tags(name)


def test_project_false_files_a_general_lesson() -> None:
    name = learn("disk full", "Pruned logs", project=False)["name"]

    assert name.startswith("lesson-general-")
    assert not [t for t in tags(name) if t.startswith("project:")]


def test_it_refuses_when_no_project_is_known() -> None:
    with pytest.raises(InvalidInput, match="No project"):
        learn("disk full", "Pruned logs", ctx=CallContext(source_host="http"))
    assert not Entity.objects.exists()


@pytest.mark.parametrize(
    "payload",
    [
        {"fix": "x"},
        {"error": "x"},
        {"error": "   ", "fix": "x"},
        {"error": "x", "fix": "y", "severity": "huge"},
        {"error": "x", "fix": "y", "project": True},
        {"error": "x", "fix": "y", "extra": 1},
    ],
)
def test_it_rejects_bad_input(payload: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        LEARN.run(payload, CTX)
