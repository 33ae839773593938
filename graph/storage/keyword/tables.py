"""The keyword index's tables and the row an entity has in them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from graph.search.text import index_text

LIVE_FTS = "graph_entity_fts"
ARCHIVED_FTS = "graph_entity_fts_archived"
VOCAB = "graph_entity_fts_vocab"
ARCHIVED_VOCAB = "graph_entity_fts_archived_vocab"


def index_columns(
    name: str, title: str | None, observations: Sequence[str], tags: Sequence[str]
) -> tuple[str, str]:
    """The (head, body) an entity's keyword-index row holds: what index_sync writes and the
    consistency checker expects."""
    return (
        index_text(f"{name}\n{title or ''}"),
        index_text("\n".join([*observations, *tags])),
    )


def by_entity(rows: Iterable[tuple[int, str]]) -> dict[int, list[str]]:
    """(entity id, text) rows — observations or tags — grouped per entity, in row order."""
    grouped: dict[int, list[str]] = {}
    for entity_id, text in rows:
        grouped.setdefault(entity_id, []).append(text)
    return grouped
