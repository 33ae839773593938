"""A SQLite home copied onto PostgreSQL: `memesh db copy --to postgresql://…` of N memories
(default 100,000), as a whole process, timed, verified by the command itself.

    .venv/bin/python -m bench.db_copy                       # 100,000 memories
    .venv/bin/python -m bench.db_copy --entities 10000 --json

The home is filled with the synthetic bundle of bench/bundle_roundtrip.py (observations, tags,
titles, a relation on every tenth memory) through `memesh import`; the target is an empty
database on a PostgreSQL + pgvector started for the run (the pinned pgserver wheel of the
test suite) in a temporary folder. Printed: rows copied, the copy's wall time, rows and
memories a second, the process's peak RSS, and whether the command verified the copy (every
table's rows read back from both sides). Embedder `none`: no vectors to copy.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import warnings
from pathlib import Path

from bench.bundle_roundtrip import memesh, synthetic_bundle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import psycopg

    # platformdirs warns that XDG_RUNTIME_DIR is unset whenever pgserver asks for a lock folder.
    warnings.simplefilter("ignore")
    import pgserver  # the test suite's pinned PostgreSQL (requirements-dev.txt)

    with tempfile.TemporaryDirectory(prefix="memesh-copy-bench-") as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        bundle = work / "seed.json"
        synthetic_bundle(bundle, args.entities, args.seed)
        seeded = memesh(home, ["import", str(bundle), "--merge", "skip"])
        server = pgserver.get_server(work / "pg", cleanup_mode="stop")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("CREATE DATABASE team")
            url = f"postgresql://postgres:@/team?host={work / 'pg'}"
            report_file = work / "report.json"
            copied = memesh(home, ["db", "copy", "--to", url, "--json"], stdout_path=report_file)
            report = json.loads(report_file.read_text())
        finally:
            server.cleanup()
    seconds = copied["seconds"]
    result = {
        "entities": args.entities,
        "seed_import_s": seeded["seconds"],
        "rows": report["copied"],
        "copy_s": seconds,
        "rows_per_s": round(report["copied"] / seconds),
        "memories_per_s": round(args.entities / seconds),
        "peak_rss_mb": copied["peak_rss_mb"],
        "verified": report["verified"],
        "tables": {t["table"]: t["target"] for t in report["tables"] if t["target"]},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{args.entities:,} memories: {result['rows']:,} rows copied in {seconds:.1f} s "
        f"({result['rows_per_s']:,} rows/s, {result['memories_per_s']:,} memories/s), "
        f"peak RSS {result['peak_rss_mb']} MB, verified: {result['verified']}"
    )


if __name__ == "__main__":
    main()
