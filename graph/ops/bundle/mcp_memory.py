"""`memesh export --format mcp-memory`: the memories an export selects, written as the
official MCP memory server's file (`@modelcontextprotocol/server-memory`'s memory.jsonl), so
a user can leave as easily as they came (graph/ops/foreign/readers/mcp_memory.py reads it).

The server's `saveGraph` writes one `JSON.stringify` per line, every entity and then every
relation: `{"type":"entity","name","entityType","observations"}` and
`{"type":"relation","from","to","relationType"}`. Its format has nothing for titles, tags,
namespaces or trust, so they are not written. A relation is written only when both of its
memories are: the server's own files never hold one to a missing entity (its delete_entities
removes them), and a file that did would not import back.

Two reads of the same export in one read transaction (the entities, then their relations),
one chunk at a time: memory holds the exported names only.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from graph.ops.bundle.exporter import BundleSelection, bundle_count, bundle_entries_json
from graph.ops.bundle.files import Writer
from graph.ops.kit.scope import UNBOUND, ReadScope


def _line(value: dict[str, object]) -> str:
    # JSON.stringify's form: no spaces, non-ASCII kept as it is.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"


def mcp_memory_write(
    out: Writer,
    *,
    namespace: str | None = None,
    tag: str | None = None,
    limit: int | None = None,
    scope: ReadScope = UNBOUND,
    progress: Callable[[int], None] | None = None,
    on_count: Callable[[int], None] | None = None,
    include_expired: bool = False,
) -> int:
    """Write the selected memories to `out` as the server's JSON Lines; the number written."""
    with transaction.atomic():
        selection = BundleSelection(
            namespace=namespace,
            tag=tag,
            limit=limit,
            scope=scope,
            include_expired=include_expired,
            now=timezone.now(),
        )
        if on_count is not None:
            on_count(bundle_count(selection))
        names: set[str] = set()
        for text in bundle_entries_json(selection):
            entry = json.loads(text)
            names.add(entry["name"])
            out.write(
                _line(
                    {
                        "type": "entity",
                        "name": entry["name"],
                        "entityType": entry["type"],
                        "observations": entry["observations"],
                    }
                )
            )
            if progress is not None:
                progress(1)
        for text in bundle_entries_json(selection):
            entry = json.loads(text)
            for relation in entry["relations"]:
                if relation["to"] in names:
                    out.write(
                        _line(
                            {
                                "type": "relation",
                                "from": entry["name"],
                                "to": relation["to"],
                                "relationType": relation["type"],
                            }
                        )
                    )
    return len(names)
