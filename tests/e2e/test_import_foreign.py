"""`memesh import --from` as a process: a 100 MB flat file of the MCP memory server's format
is read as a stream, its peak memory far below the file's size; and an original MeMesh
database in a home of its own is imported with --apply."""

from __future__ import annotations

import json
from pathlib import Path

from tests.foreign_sources import memesh4_home
from tests.processes import memesh, memesh_env, read_rows, run_python

FLAT_BYTES = 100 * 1024 * 1024
# Peak memory a 100 MB import may add to a tiny one's: the names it has seen (a set) and one
# chunk of records, never the file.
MAX_EXTRA_RSS_MB = 60
_MEASURE = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def _flat_file(path: Path, size: int) -> Path:
    """Entities only (no relations): ~1 KB of observations each, until `size` bytes."""
    written = 0
    with path.open("w", encoding="utf-8") as f:
        i = 0
        while written < size:
            observations = [
                f"Note {i}.{j}: the billing queue drains nightly and the cache warms on deploy"
                for j in range(12)
            ]
            line = json.dumps(
                {"type": "entity", "name": f"memory-{i}", "entityType": "note",
                 "observations": observations},
                separators=(",", ":"),
            )  # fmt: skip
            f.write(line + "\n")
            written += len(line) + 1
            i += 1
    return path


def _peak_rss_mb(home: Path, source: Path) -> float:
    """Peak resident memory of `memesh import --from mcp-memory SOURCE` (a dry run), in MB."""
    done = run_python(
        ["-c", _MEASURE, *_command(source)],
        memesh_env(home),
    )
    code, peak_kb = done.stdout.split()
    assert code == "0", done.stderr
    return int(peak_kb) / 1024


def _command(source: Path) -> list[str]:
    return memesh("import", "--from", "mcp-memory", str(source), "--json")


def test_a_100_mb_flat_file_is_read_as_a_stream(migrated_home: Path, tmp_path: Path) -> None:
    tiny = _flat_file(tmp_path / "tiny.jsonl", 10_000)
    big = _flat_file(tmp_path / "big.jsonl", FLAT_BYTES)

    small_peak = _peak_rss_mb(migrated_home, tiny)
    big_peak = _peak_rss_mb(migrated_home, big)

    assert big_peak - small_peak < MAX_EXTRA_RSS_MB, (small_peak, big_peak)
    count = "SELECT count(*) FROM graph_entity"
    assert read_rows(migrated_home / "knowledge-graph.db", count) == [(0,)]


def test_an_original_database_is_imported_by_the_cli(migrated_home: Path, tmp_path: Path) -> None:
    database = memesh4_home(tmp_path / "original")
    before = database.read_bytes()
    args = ["-m", "memesh_site.cli", "import", "--from", "memesh4", str(database), "--json"]

    done = run_python([*args, "--apply"], memesh_env(migrated_home))

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] == 5
    assert database.read_bytes() == before
    again = run_python([*args, "--apply"], memesh_env(migrated_home))
    assert json.loads(again.stdout)["unchanged"] == 5
    rows = read_rows(
        migrated_home / "knowledge-graph.db", "SELECT name, status FROM graph_entity ORDER BY name"
    )
    assert ("old-note", "archived") in rows and ("auth-old", "archived") in rows
