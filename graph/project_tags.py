"""The `project:<id>` tag: how a memory is filed under a project (graph/project.py says which
project a directory is)."""

from __future__ import annotations

from collections.abc import Iterable

PROJECT_TAG_PREFIX = "project:"
MAX_TAG_CHARS = 255
MAX_PROJECT_CHARS = MAX_TAG_CHARS - len(PROJECT_TAG_PREFIX)  # `project:<id>` must fit a tag


def project_tag(project: str) -> str:
    return f"{PROJECT_TAG_PREFIX}{project}"


def is_project_tag(tag: str) -> bool:
    return tag.startswith(PROJECT_TAG_PREFIX)


def has_project_tag(tags: Iterable[str]) -> bool:
    return any(is_project_tag(t) for t in tags)


def project_of(value: str) -> str:
    """The project id in a tag or a caller's value: `project: "project:x"` means project x
    (the prefix is not doubled)."""
    return value.strip().removeprefix(PROJECT_TAG_PREFIX).strip()
