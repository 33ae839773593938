"""Check a load run's journal against the database: `load_verify.py JOURNAL [--wait SECONDS]`.

JOURNAL is tests/procs/load_workload.Journal.as_json(). With --wait, first waits (up to
SECONDS) for the worker to finish: no half-built index generation and no active entity whose
live vector is missing or stale. Prints one JSON object; each `*_problems` list holds the first
few findings and each `*_count` how many there were in all:

- promises: every journaled name exists, archived exactly when it was forgotten, holding every
  acknowledged observation and none it removed; no other entity exists; no refused call wrote.
- fts: the live keyword table holds exactly the active entities and the archived table
  exactly the archived ones, each row the text `Entity.objects.index_sync` writes for it.
- vectors: one live generation and no other; every active entity has a live vector built from
  its current text, in the float rows and the vec0 table alike; no archived entity has one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "memesh_site.settings"
SHOWN = 10


def settled() -> bool:
    from django.db import close_old_connections

    from graph.indexing import generations
    from graph.models import EntityVector

    close_old_connections()
    live = generations.live_generation()
    if live is None or generations.read_marker(generations.STAGING_KEY) is not None:
        return False
    return EntityVector.objects.pending_count(live.generation) == 0


def rows(sql: str, *params: object) -> list[tuple[Any, ...]]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(sql, list(params))
        return cur.fetchall()


def check_promises(journal: dict[str, Any]) -> list[str]:
    from graph.models import Entity, Observation

    problems = []
    entities = {e.name: e for e in Entity.objects.all()}
    stored: dict[int, set[str]] = {}
    for entity_id, text in Observation.objects.values_list("entity_id", "text"):
        stored.setdefault(entity_id, set()).add(text)
    for name, promised in journal["entities"].items():
        entity = entities.get(name)
        if entity is None:
            problems.append(f"lost entity {name}")
            continue
        want = "archived" if promised["forgotten"] else "active"
        if entity.status != want:
            problems.append(f"{name} is {entity.status}, expected {want}")
        have = stored.get(entity.pk, set())
        kept = set(promised["observations"]) - set(promised["removed"])
        for text in sorted(kept - have):
            problems.append(f"lost observation of {name}: {text!r}")
        for text in sorted(set(promised["removed"]) & have):
            problems.append(f"removed observation came back in {name}: {text!r}")
        if len(have) != len(kept):
            problems.append(f"{name} has {len(have)} observations, expected {len(kept)}")
    for name in sorted(set(entities) - set(journal["entities"])):
        problems.append(f"unpromised entity {name}")
    for name in journal["refused_names"]:
        if name in entities:
            problems.append(f"a refused call wrote {name}")
    return problems


def check_fts() -> list[str]:
    from graph.models import Entity
    from graph.search.text import index_text
    from graph.storage.keyword.tables import ARCHIVED_FTS, LIVE_FTS

    problems = []
    obs: dict[int, list[str]] = {}
    for entity_id, text in rows("SELECT entity_id, text FROM graph_observation ORDER BY id"):
        obs.setdefault(entity_id, []).append(text)
    tags: dict[int, list[str]] = {}
    for entity_id, name in rows("SELECT entity_id, name FROM graph_tag ORDER BY id"):
        tags.setdefault(entity_id, []).append(name)
    indexed = {
        table: {rowid: (head, body) for rowid, head, body in rows(
            f"SELECT rowid, head, body FROM {table}"
        )}
        for table in (LIVE_FTS, ARCHIVED_FTS)
    }  # fmt: skip
    seen: set[tuple[str, int]] = set()
    for entity_id, name, title, status in Entity.objects.values_list(
        "id", "name", "title", "status"
    ):
        table = LIVE_FTS if status == "active" else ARCHIVED_FTS
        other = ARCHIVED_FTS if table == LIVE_FTS else LIVE_FTS
        want = (
            index_text(f"{name}\n{title or ''}"),
            index_text("\n".join([*obs.get(entity_id, []), *tags.get(entity_id, [])])),
        )
        got = indexed[table].get(entity_id)
        if got is None:
            problems.append(f"{status} {name} missing from {table}")
        elif got != want:
            problems.append(f"{name}: {table} row is stale")
        if entity_id in indexed[other]:
            problems.append(f"{status} {name} also in {other}")
        seen.add((table, entity_id))
    for table, found in indexed.items():
        for rowid in sorted(set(found) - {i for t, i in seen if t == table}):
            problems.append(f"{table} row {rowid} belongs to no entity")
    return problems


def check_vectors() -> tuple[list[str], dict[str, Any]]:
    from graph.indexing import generations
    from graph.models import Entity, EntityVector
    from graph.search.text import text_hash
    from graph.storage.vector_index import table_name

    live = generations.live_generation()
    if live is None:
        return ["no live vector generation"], {}
    problems = []
    present = EntityVector.objects.generations_present()
    if sorted(present) != [live.generation]:
        problems.append(f"generations present {present}, live is {live.generation}")
    hashes = EntityVector.objects.hashes(live.generation)
    coarse = {rowid for (rowid,) in rows(f"SELECT rowid FROM {table_name(live.generation)}")}
    texts = Entity.objects.embedding_texts(list(Entity.objects.values_list("id", flat=True)))
    active = set(texts)
    for entity_id, text in texts.items():
        if hashes.get(entity_id) != text_hash(text):
            problems.append(f"entity {entity_id}: live vector missing or stale")
    for entity_id in sorted(set(hashes) - active):
        problems.append(f"vector row for entity {entity_id}, which is not active")
    if coarse != set(hashes):
        problems.append(
            f"vec0 table and float rows disagree: {len(coarse ^ set(hashes))} entities differ"
        )
    return problems, {"generation": live.generation, "vectors": len(hashes)}


def main() -> None:
    import django

    parser = argparse.ArgumentParser()
    parser.add_argument("journal", type=Path)
    parser.add_argument("--wait", type=float, default=0.0)
    args = parser.parse_args()
    django.setup()
    from graph.models import Entity, Status

    waited = time.monotonic()
    deadline = waited + args.wait
    while not settled() and time.monotonic() < deadline:
        time.sleep(0.5)
    waited = time.monotonic() - waited

    journal = json.loads(args.journal.read_text())
    promise_problems = check_promises(journal)
    fts_problems = check_fts()
    vector_problems, vector_info = check_vectors()
    report = {
        "settled": settled(),
        "waited_seconds": round(waited, 1),
        "entities": Entity.objects.count(),
        "active": Entity.objects.filter(status=Status.ACTIVE).count(),
        "archived": Entity.objects.filter(status=Status.ARCHIVED).count(),
        "promised": len(journal["entities"]),
        **vector_info,
    }
    for label, found in (
        ("promise", promise_problems),
        ("fts", fts_problems),
        ("vector", vector_problems),
    ):
        report[f"{label}_problems"] = found[:SHOWN]
        report[f"{label}_count"] = len(found)
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
