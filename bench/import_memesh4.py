"""Import rate from the original MeMesh's database: N memories (default 100,000) imported by
`memesh import --from memesh4 DB --apply` into an empty home, as a whole process.

    .venv/bin/python -m bench.import_memesh4                  # 100,000 memories
    .venv/bin/python -m bench.import_memesh4 --entities 10000 --json

The database is the original's own: MeMesh 4.6 creates it (`peer-memesh cli remember`, the
runner in ../shared/tools, or --tools), then the synthetic memories are added to its tables
with SQLite — three observations and two tags each (one a `project:` tag), a title on every
other one, a relation on every tenth, every twentieth archived. The dry run (which reads
everything and writes nothing) and the apply are timed separately; the peak RSS of each
process is ru_maxrss from wait4. Embedder `none`: the embedding is the worker's, afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from bench.bundle_roundtrip import WORDS, memesh
from bench.peer_servers import find_tools


def original_database(tools_dir: str, home: Path) -> Path:
    """An empty database as the original MeMesh creates it (one memory, then forgotten)."""
    env = {**os.environ, "MEMESH_PEER_HOME": str(home)}
    tools = find_tools(tools_dir)
    for args in (
        ["remember", "--name", "seed", "--type", "note", "--obs", "seed"],
        ["forget", "--name", "seed"],
    ):
        subprocess.run([str(tools.peer), "cli", *args], env=env, check=True, capture_output=True)
    return home / ".memesh" / "knowledge-graph.db"


def fill(db: Path, n: int, seed: int) -> None:
    """N synthetic memories in the original's tables."""
    rng = random.Random(seed)
    conn = sqlite3.connect(db)
    with conn:
        for i in range(n):
            text = [" ".join(rng.choices(WORDS, k=12)) for _ in range(3)]
            cur = conn.execute(
                "INSERT INTO entities (name, type, created_at, metadata, status, access_count, "
                "namespace, title) VALUES (?, ?, '2026-01-02 03:04:05', ?, ?, ?, 'personal', ?)",
                (
                    f"memory-{i}",
                    rng.choice(["decision", "pattern", "note", "lesson"]),
                    json.dumps({"signal_score": 0.5, "trust": "trusted"}),
                    "archived" if i % 20 == 19 else "active",
                    rng.randint(0, 9),
                    f"Memory {i}" if i % 2 else None,
                ),
            )
            entity_id = cur.lastrowid
            conn.executemany(
                "INSERT INTO observations (entity_id, content) VALUES (?, ?)",
                [(entity_id, t) for t in text],
            )
            conn.executemany(
                "INSERT INTO tags (entity_id, tag) VALUES (?, ?)",
                [(entity_id, f"project:p{i % 7}"), (entity_id, rng.choice(WORDS))],
            )
        conn.execute(
            "INSERT INTO relations (from_entity_id, to_entity_id, relation_type) "
            "SELECT e.id, e.id + 1, 'relates_to' FROM entities e "
            "WHERE e.name LIKE 'memory-%' AND e.id % 10 = 0 "
            "AND EXISTS (SELECT 1 FROM entities t WHERE t.id = e.id + 1)"
        )
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tools", default="../shared/tools", help="Where peer-memesh is.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memesh-bench-import4-") as tmp:
        db = original_database(args.tools, Path(tmp) / "original")
        fill(db, args.entities, args.seed)
        database_mb = round(db.stat().st_size / 2**20, 1)
        home = Path(tmp) / "memesh"
        command = ["import", "--from", "memesh4", str(db), "--json"]
        dry = memesh(home, command)
        applied = memesh(home, [*command, "--apply"])
    n = args.entities
    figures = {
        "memories": n,
        "database_mb": database_mb,
        "dry_run": {**dry, "memories_per_s": round(n / dry["seconds"])},
        "apply": {**applied, "memories_per_s": round(n / applied["seconds"])},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{n:,} memories from the original's database ({database_mb} MB)")
    for step in ("dry_run", "apply"):
        f = figures[step]
        assert isinstance(f, dict)
        print(
            f"  {step:8} {f['seconds']:7.1f} s  {f['memories_per_s']:7,} memories/s  "
            f"peak RSS {f['peak_rss_mb']:.0f} MB"
        )


if __name__ == "__main__":
    main()
