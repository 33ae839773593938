"""Entities as every read operation returns them (recall's shape), and how a query found one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal, TypeVar

from django.utils import timezone
from pydantic import Field

from graph.ops.kit.fields import NamespaceName, Output
from graph.ops.kit.trust.rules import HISTORY_KEY
from graph.ops.kit.trust.view import TrustOutput, trust_output
from graph.storage.documents import EntityDocument


class RelationOutput(Output):
    from_: str = Field(alias="from", description="Source entity name.")
    to: str = Field(description="Target entity name.")
    type: str = Field(description="Relation type.")


class Match(Output):
    source: Literal["keyword", "semantic"] = Field(
        description=(
            "`keyword`: the full-text index matched your words. `semantic`: found by vector "
            "similarity alone, which cannot certify relevance."
        )
    )
    relevance: float = Field(
        description="0-1: normalized keyword score, or similarity for semantic results."
    )


class EntityOutput(Output):
    id: int
    name: str = Field(description="Identifier other operations address the memory by.")
    title: str | None = Field(description="Human-readable label, or null when none was given.")
    type: str
    namespace: NamespaceName
    status: Literal["active", "archived"]
    created_at: str = Field(description="ISO 8601 time of creation (UTC).")
    updated_at: str = Field(description="ISO 8601 time of the last write (UTC).")
    confidence: float
    observations: list[str]
    tags: list[str]
    relations: list[RelationOutput] = Field(description="Outgoing relations.")
    metadata: dict[str, Any] = Field(
        description=(
            "Includes provenance.source_host; `why` for a decision. Earlier versions kept by "
            "a `replace` are not returned here (see `replaced_history_count`; export has them)."
        )
    )
    replaced_history_count: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Present when `replace` rewrote this memory: how many earlier versions exist.",
    )
    match: Match | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="How a query found this entity; absent in the recent listing.",
    )
    trust: TrustOutput = Field(
        description=(
            "Provenance and trust (docs/trust.md): fact or hypothesis, confidence, source and "
            "whether it is local or imported, hop_count, age since last observed, what would "
            "invalidate it, expiry."
        )
    )


def _history_view(metadata: dict[str, Any]) -> tuple[dict[str, Any], int | None]:
    """metadata without the versions a `replace` kept, and how many there are: recall shows
    only the count (the old lines must stop surfacing), export carries the versions. The
    trust history is memory_list's to show (graph/ops/memory_list.py), not every read's."""
    if HISTORY_KEY in metadata:
        metadata = {k: v for k, v in metadata.items() if k != HISTORY_KEY}
    history = metadata.get("replaced_history")
    if not history:
        return metadata, None
    return {k: v for k, v in metadata.items() if k != "replaced_history"}, len(history)


M = TypeVar("M", bound=Output)


def built(model: type[M], values: dict[str, Any]) -> M:
    """`model.model_construct(**values)` for values that are every field of `model`, by
    name, in declaration order, already typed: what model_construct does, without its
    per-field alias and default handling, which cost ~30 µs an entity — most of a
    whole-graph read (GET /v1/graph at 10k entities). tests/unit/test_entity_view.py holds
    the two equal."""
    instance = model.__new__(model)
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", set(values))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


# Bound once: looking object.__setattr__ up four times an instance was a third of built()'s
# time (the graph page builds 3,000 nodes).
_set = object.__setattr__


def entity_outputs(
    docs: Sequence[EntityDocument],
    matches: dict[int, Match] | None = None,
    *,
    now: datetime | None = None,
) -> list[EntityOutput]:
    """Entities as every read operation returns them (recall's shape); `now` is the time the
    trust block's ages and expiry are measured at."""
    matches = matches or {}
    now = now or timezone.now()
    # Constructed, not validated: every value comes typed from the database; validating it
    # again cost more than the rest of the envelope.
    outputs = []
    for doc in docs:
        metadata, history_count = _history_view(doc.metadata)
        relations = [
            built(RelationOutput, {"from_": from_name, "to": to_name, "type": rel_type})
            for from_name, _, to_name, rel_type in doc.relations
        ]
        outputs.append(
            built(
                EntityOutput,
                {
                    "id": doc.id,
                    "name": doc.name,
                    "title": doc.title,
                    "type": doc.type,
                    "namespace": doc.namespace,
                    "status": doc.status,
                    "created_at": doc.created_at,
                    "updated_at": doc.updated_at,
                    "confidence": doc.confidence,
                    "observations": doc.observations,
                    "tags": doc.tags,
                    "relations": relations,
                    "metadata": metadata,
                    "replaced_history_count": history_count,
                    "match": matches.get(doc.id),
                    "trust": trust_output(doc, now),
                },
            )
        )
    return outputs
