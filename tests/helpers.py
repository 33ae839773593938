"""Shared helpers: create data through the operations, so indexes stay consistent, and read
back what is stored."""

from __future__ import annotations

from typing import Any

from graph.models import Entity, Observation
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS

CTX = CallContext(source_host="test")


def remember(name: str, *observations: str, type: str = "note", **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"name": name, "type": type, "observations": list(observations)}
    payload.update(fields)
    return OPERATIONS["remember"].run(payload, CTX)


def recall(query: str | None = None, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = dict(fields)
    if query is not None:
        payload["query"] = query
    return OPERATIONS["recall"].run(payload, CTX)


def names(result: dict[str, Any]) -> list[str]:
    return [e["name"] for e in result["entities"]]


def forget(name: str, **fields: Any) -> dict[str, Any]:
    return OPERATIONS["forget"].run({"name": name, **fields}, CTX)


def stored(name: str) -> Entity:
    """The stored entity called `name` (raises when there is none)."""
    return Entity.objects.get(name=name)


def observations_of(name: str) -> list[str]:
    """The stored observation texts of the entity called `name`, oldest first; [] for none."""
    return list(Observation.objects.filter(entity__name=name).values_list("text", flat=True))


def remember_commit(name: str, hash_: str, session: str | None = None, **fields: Any) -> None:
    """A commit entity as the post-commit hook captures it (graph/ops/why.py reads it): type
    `commit`, the hash in `metadata.hash`, the session in `metadata.session_id`. remember
    takes no metadata, so it is set on the stored row (no index holds metadata)."""
    remember(name, f"commit {hash_}", type="commit", **fields)
    metadata = {"hash": hash_, **({"session_id": session} if session else {})}
    Entity.objects.filter(name=name).update(metadata={**stored(name).metadata, **metadata})


def remember_in_session(
    name: str, session: str, *observations: str, type: str = "session_keypoint", **fields: Any
) -> None:
    """A memory made in `session` (its `metadata.session_id`)."""
    remember(name, *(observations or (f"work in {session}",)), type=type, **fields)
    Entity.objects.filter(name=name).update(
        metadata={**stored(name).metadata, "session_id": session}
    )


def restamp(name: str, **fields: Any) -> None:
    """Set stored fields remember takes no input for (created_at, last_accessed_at, confidence,
    status, metadata, ...) on the row: times and usage figures are in no index, and a status
    set this way is for selectors that read rows only (archive through forget otherwise)."""
    assert Entity.objects.filter(name=name).update(**fields) == 1, name
