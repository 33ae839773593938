"""Recall every entity written by remember_many.py: `recall_each.py N PROC [PROC ...]`.

Looks each one up by its unique token and prints one JSON line:
{"entities": <active entities>, "fts_rows": <live index rows>, "checked": n,
 "missed": n, "missed_names": [first few], "ambiguous": <found along with others>,
 "vectors": <sqlite-vec loaded>, "writer_switches": <see writer_switches>}.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"


def writer_switches() -> int:
    """How often consecutive entity ids come from different writers (0: never interleaved)."""
    from graph.models import Tag

    writers = list(
        Tag.objects.filter(name__startswith="proc:")
        .order_by("entity_id")
        .values_list("name", flat=True)
    )
    return sum(1 for a, b in itertools.pairwise(writers) if a != b)


def live_index_rows() -> int:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM graph_entity_fts")
        return int(cur.fetchone()[0])


def main() -> None:
    import django

    django.setup()
    from django.db import connection

    from graph.models import Entity, Status
    from graph.ops.kit.operation import CallContext
    from graph.ops.registry import OPERATIONS
    from tests.procs.remember_many import unique_token

    count, procs = int(sys.argv[1]), sys.argv[2:]
    recall = OPERATIONS["recall"]
    ctx = CallContext(source_host="cli")
    missed: list[str] = []
    ambiguous = 0
    for proc in procs:
        for i in range(count):
            name = f"p{proc}-e{i}"
            result = recall.run({"query": unique_token(proc, i), "limit": 5}, ctx)
            found = [e["name"] for e in result["entities"]]
            if name not in found:
                missed.append(name)
            elif len(found) > 1:
                ambiguous += 1
    report = {
        "entities": Entity.objects.filter(status=Status.ACTIVE).count(),
        "fts_rows": Entity.objects.indexed_row_count(),
        "checked": count * len(procs),
        "missed": len(missed),
        "missed_names": missed[:10],
        "ambiguous": ambiguous,
        "vectors": connection.vec_available,
        "writer_switches": writer_switches(),
    }
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
