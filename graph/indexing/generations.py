"""Vector index generations: which vec0 table is live, which one a reindex is building.

A *generation* is one vec0 table (graph/storage/vector_index.py; on PostgreSQL one pgvector
table, graph/storage/postgres/vectors.py) in one embedding space, recorded in
MetaEntry `vectors.live` as {generation, provider, model, identity, dimensions}. Every writer
(the embedding pass, graph/indexing/embedding_pass.py) writes the live generation only, and only
when the configured embedder has the live generation's identity: vectors of two spaces never
meet. When the configuration names another embedder, the live index is kept (it still describes
the memories) but cannot be queried — a query embedded in another space means nothing against
it — so recall runs keyword-only and says `degraded` until `memesh reindex` builds a generation
in the new space (graph/indexing/reindex.py, under `vectors.staging`) and swaps it in. Between
the two local models the worker runs that rebuild itself (graph/tasks.py), and recall searches
the live generation with the local model that built it meanwhile (graph.embedding.provider.
for_generation), so a model switch costs no semantic recall.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

from django.db import connection
from django.utils import timezone

from graph.embedding.base import Embedder, EmbedderError
from graph.models import EntityVector, MetaEntry
from graph.storage import backend

logger = logging.getLogger(__name__)

LIVE_KEY = "vectors.live"
STAGING_KEY = "vectors.staging"
SEQUENCE_KEY = "vectors.last_generation"
PROBE_TEXT = "memesh embedding probe"


class UnreadableMarker(Exception):
    """A generation marker exists but does not describe a generation."""


@dataclass(frozen=True)
class Generation:
    generation: int
    provider: str
    model: str
    identity: str
    dimensions: int
    created_at: str = ""

    @classmethod
    def parse(cls, value: Any) -> Generation:
        try:
            gen = cls(
                generation=int(value["generation"]),
                provider=str(value["provider"]),
                model=str(value["model"]),
                identity=str(value["identity"]),
                dimensions=int(value["dimensions"]),
                created_at=str(value.get("created_at", "")),
            )
        except (TypeError, KeyError, ValueError) as exc:
            raise UnreadableMarker(f"unreadable generation marker: {value!r}") from exc
        if gen.generation < 1 or gen.dimensions < 1:
            raise UnreadableMarker(f"unreadable generation marker: {value!r}")
        return gen

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def read_marker(key: str) -> Generation | None:
    """The generation recorded under `key`; None when absent. Raises UnreadableMarker."""
    value = MetaEntry.objects.value(key)  # valid JSON: the column has a JSON_VALID check
    return None if value is None else Generation.parse(value)


def write_marker(key: str, generation: Generation | None) -> None:
    if generation is None:
        MetaEntry.objects.filter(key=key).delete()
    else:
        MetaEntry.objects.update_or_create(
            key=key, defaults={"value": generation.as_json(), "updated_at": timezone.now()}
        )


def live_generation() -> Generation | None:
    try:
        return read_marker(LIVE_KEY)
    except UnreadableMarker:
        logger.error("the live vector index marker is unreadable; vector search is off")
        return None


def vectors_supported() -> bool:
    """sqlite-vec is loaded on this connection; on PostgreSQL, always: pgvector is there
    before any migration runs (core/db/schema.py refuses a database without it)."""
    if backend.on_postgres():
        return True
    connection.ensure_connection()
    return bool(getattr(connection, "vec_available", False))


def next_generation_number() -> int:
    """A generation number never used before in this database (call inside a transaction):
    a reader keying on the number must not mistake a new table for a discarded one."""
    numbers = [0, *EntityVector.objects.generations_present()]
    for key in (LIVE_KEY, STAGING_KEY, SEQUENCE_KEY):
        value = MetaEntry.objects.filter(key=key).values_list("value", flat=True).first()
        if isinstance(value, dict) and isinstance(value.get("generation"), int):
            numbers.append(value["generation"])
    number = max(numbers) + 1
    MetaEntry.objects.update_or_create(
        key=SEQUENCE_KEY, defaults={"value": {"generation": number}, "updated_at": timezone.now()}
    )
    return number


def probe_width(embedder: Embedder) -> int:
    """Embed one string and measure it (raises EmbedderError)."""
    vectors = embedder.embed([PROBE_TEXT])
    if vectors.ndim != 2 or vectors.shape[0] != 1 or vectors.shape[1] < 1:
        raise EmbedderError("the provider returned no vector for the probe", kind="bad_response")
    return int(vectors.shape[1])


def new_generation(embedder: Embedder, dimensions: int) -> Generation:
    """Create the vec0 table of a new generation (call inside a transaction)."""
    gen = Generation(
        generation=next_generation_number(),
        provider=embedder.provider,
        model=embedder.model,
        identity=embedder.identity,
        dimensions=dimensions,
        created_at=timezone.now().isoformat(),
    )
    EntityVector.objects.create_table(gen.generation, dimensions)
    return gen
