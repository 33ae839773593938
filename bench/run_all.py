"""Run every benchmark and regenerate docs/benchmarks.md, its plots and results.json.

    .venv/bin/python -m bench.run_all                        # everything: ~25-30 min on 2 cores
    .venv/bin/python -m bench.run_all --only http mcp        # re-run two sections, keep the rest
    .venv/bin/python -m bench.run_all --quick --out "$TMPDIR/bench.md"   # smoke run

Each section runs its benchmark script as a subprocess (`python -m bench.<name> --json`, from
the repository root), and returns a dict kept in docs/benchmarks/results.json (beside --out)
with the machine, the code's commit and the command that reproduces it; `--only` re-runs some
sections and keeps the others' results. The page is rendered from that file alone
(bench/report_render.py), plots beside it as PNG.

Seeded recall databases are cached under $MEMESH_BENCH_CACHE (default
~/.cache/memesh-bench), keyed by size, seed, the source of the recall bench and of its corpus,
and the migrations, so a re-run does not spend minutes seeding and embedding again; the
seeding's own figures are kept beside each database and shown as such. --fresh ignores the
cache.

Full run on the 2-core reference machine, estimated: recall ~15 min with an empty cache (10k
embedding ~4 min, 100k seeding ~2.5 min + 5k embedded), ~4 min cached; http ~2 min; mcp ~1
min; import ~1.5 min; reindex ~1.5 min; writers ~2-4 min; quality ~2 min; hosts ~5 min a host
(~20 s a session, 8 sessions each).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from bench import facts, report_render
from bench.bundle_roundtrip import synthetic_bundle
from bench.plots import make_plots
from bench.runner import PYTHON_SHOWN, Runner, cache_dir, memesh, memesh_env, script, scrub

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
MEASURED_CODE = ("graph", "memesh_site", "api")
SECTIONS = report_render.SECTION_ORDER


@dataclass(frozen=True)
class Sizes:
    recall: tuple[int, ...]
    recall_queries: int
    embed_at_most: dict[int, int]
    http_entities: int
    http_requests: int
    mcp_calls: int
    mcp_recalls: int
    mcp_cold_runs: int
    import_entities: int
    reindex_entities: dict[str, int]  # per embedder
    writers: tuple[int, ...]
    writer_count: int  # remember calls per writer process
    quality_memories: str
    host_warm_sessions: int  # after each way's first session, per host


FULL = Sizes(
    recall=(1_000, 10_000, 100_000),
    recall_queries=300,
    # 100k memories would take ~40 minutes to embed on 2 cores: embed 5k, synthesise the rest.
    embed_at_most={100_000: 5_000},
    http_entities=10_000,
    http_requests=2_000,
    mcp_calls=1_000,
    mcp_recalls=300,
    mcp_cold_runs=5,
    import_entities=10_000,
    reindex_entities={"local": 1_000, "deterministic": 10_000},
    writers=(1, 2, 4, 8),
    writer_count=300,
    quality_memories="memories.jsonl",
    host_warm_sessions=3,
)
QUICK = Sizes(
    recall=(200, 1_000, 2_000),
    recall_queries=20,
    embed_at_most={1_000: 200, 2_000: 200},
    http_entities=500,
    http_requests=100,
    mcp_calls=100,
    mcp_recalls=50,
    mcp_cold_runs=2,
    import_entities=1_000,
    reindex_entities={"local": 100, "deterministic": 1_000},
    writers=(1, 2, 4, 8),
    writer_count=50,
    quality_memories="memories_handwritten.jsonl",
    host_warm_sessions=1,
)


# --- sections ----------------------------------------------------------------------------------


def kept_notes(data_dir: Path) -> list[str]:
    """The notes of the bench scripts run_all does not run (`data_dir`/notes/*.md, by name)."""
    return [path.read_text(encoding="utf-8") for path in sorted((data_dir / "notes").glob("*.md"))]


def _fingerprint(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for f in files:
            digest.update(f.name.encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:12]


def recall_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    # Whatever decides a seeded database's contents: the corpus, the seeding, the schema.
    key = _fingerprint(
        BENCH / "recall_bench.py", BENCH / "corpus.py", REPO / "graph" / "migrations"
    )
    out = []
    for n in sizes.recall:
        at_most = sizes.embed_at_most.get(n)
        home = cache_dir() / f"recall-{n}-seed1-embed{at_most or 'all'}-{key}"
        db, seeding_file = home / "knowledge-graph.db", home / "seeding.json"
        cached = db.exists() and seeding_file.exists() and not fresh
        if not cached:
            shutil.rmtree(home, ignore_errors=True)  # a half-seeded database is not reused
            home.mkdir(parents=True)
        args = script(
            "recall_bench",
            "--entities",
            n,
            "--queries",
            sizes.recall_queries,
            "--db",
            db,
            "--json",
            "--embedder",
            "local",
        )
        if at_most:
            args += ["--embed-at-most", str(at_most)]
        if cached:
            args.append("--reuse")
        run = runner.run(args)
        bench = json.loads(run.stdout)
        bench.pop("db_path", None)  # a path on this machine
        if not cached:
            seeding = {
                "remember": bench["remember"],
                "backfill": bench["backfill"],
                "commit": bench["machine"]["commit"],
                "date": bench["machine"]["date"],
            }
            seeding_file.write_text(json.dumps(seeding, indent=2))
        else:
            seeding = json.loads(seeding_file.read_text())
        out.append(
            {
                "entities": n,
                "bench": bench,
                "peak_rss_mb": run.peak_rss_mb,
                "seconds": run.seconds,
                "cached": cached,
                "seeding": seeding,
            }
        )
    return {"sizes": out, "queries_per_size": sizes.recall_queries}


def http_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    data = runner.json(
        script(
            "http_bench",
            "--entities",
            sizes.http_entities,
            "--requests",
            sizes.http_requests,
            "--json",
        )
    )
    return {**data, "requests_per_level": sizes.http_requests}


def mcp_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    calls = runner.json(
        script("mcp_bench", "--calls", sizes.mcp_calls, "--recalls", sizes.mcp_recalls, "--json")
    )
    cold = runner.json(
        script("mcp_initialize", "--runs", sizes.mcp_cold_runs, "--embedder", "local", "--json")
    )
    return {"tool_calls": calls, "cold_start": cold}


def import_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    return runner.json(script("bundle_roundtrip", "--entities", sizes.import_entities, "--json"))


def reindex_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    runs = []
    with tempfile.TemporaryDirectory(prefix="memesh-reindex-bench-") as tmp:
        for embedder, n in sizes.reindex_entities.items():
            home = Path(tmp) / embedder
            home.mkdir()
            bundle = Path(tmp) / f"bundle-{n}.json"
            if not bundle.exists():
                synthetic_bundle(bundle, n, seed=7)
            runner.steps.append(
                f"# {bundle.name}: synthetic_bundle(path, {n}, seed=7) of bench/bundle_roundtrip.py"
            )
            # Imported with no embedder, so the reindex embeds every memory itself.
            runner.run(memesh("migrate", "--verbosity", "0"), memesh_env(home, "none"))
            runner.run(memesh("import", bundle, "--merge", "skip"), memesh_env(home, "none"))
            run = runner.run(memesh("reindex", "--json"), memesh_env(home, embedder))
            # The same process start-up (Python, Django, the database) with nothing to embed.
            idle = runner.run(
                memesh("reindex", "--discard-generation", "--json"), memesh_env(home, embedder)
            )
            runs.append(
                {
                    "embedder": embedder,
                    "entities": n,
                    "seconds": run.seconds,
                    "startup_seconds": idle.seconds,
                    "peak_rss_mb": run.peak_rss_mb,
                    "result": json.loads(run.stdout),
                }
            )
    return {"runs": runs}


# What bench/multiprocess_writers.py prints with --json may name its figures in more than one
# way while it is being written; these are read, first found wins.
WRITER_KEYS = {
    "per_second": ("remembers_per_second", "per_second", "throughput", "ops_per_second"),
    "p50": ("p50_ms", "p50"),
    "p95": ("p95_ms", "p95"),
    "p99": ("p99_ms", "p99"),
    "operations": ("remembers", "operations", "writes", "count"),
    "seconds": ("seconds",),
    "errors": ("errors", "lock_errors", "failures"),
}


def _writer_level(raw: dict[str, Any], writers: int) -> dict[str, Any]:
    flat = {**raw, **(raw.get("latency_ms") or {}), **(raw.get("latency") or {})}
    level: dict[str, Any] = {"writers": raw.get("writers", writers)}
    for name, keys in WRITER_KEYS.items():
        level[name] = next((flat[k] for k in keys if isinstance(flat.get(k), (int, float))), None)
    return level


def writers_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    if not (BENCH / "multiprocess_writers.py").exists():
        return {"levels": [], "note": "Not measured: bench/multiprocess_writers.py is missing."}
    data = runner.json(
        script(
            "multiprocess_writers",
            "--writers",
            *sizes.writers,
            "--count",
            sizes.writer_count,
            "--json",
        )
    )
    rows = data.get("runs") or data.get("levels") or []
    levels = [_writer_level(row, row.get("writers", 0)) for row in rows]
    return {
        "levels": levels,
        "embedder": data.get("embedder"),
        "count_per_writer": data.get("count_per_writer", sizes.writer_count),
        "load_average_at_end": data.get("load_average_at_end"),
    }


def quality_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    # Exit code 1 means the two query orders disagreed: a finding to show, not a crash.
    run = runner.run(
        script("quality_eval", "--json", "--memories", sizes.quality_memories), check=False
    )
    if run.returncode not in (0, 1):
        raise RuntimeError(f"bench.quality_eval exited {run.returncode}")
    return {**json.loads(run.stdout), "memories_file": sizes.quality_memories}


def hosts_section(sizes: Sizes, runner: Runner, fresh: bool) -> dict[str, Any]:
    """Each host on its own (bench/host_hooks.py): one that cannot run keeps its error, the
    others their figures."""
    from bench.host_hooks import HOSTS

    out: dict[str, Any] = {}
    for name in HOSTS:
        try:
            out.update(
                runner.json(
                    script("host_hooks", "--host", name, "--warm", sizes.host_warm_sessions,
                           "--json")
                )
            )  # fmt: skip
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:1000]}
    return out


SECTION_FUNCS: dict[str, Callable[[Sizes, Runner, bool], dict[str, Any]]] = {
    "recall": recall_section,
    "http": http_section,
    "mcp": mcp_section,
    "import": import_section,
    "reindex": reindex_section,
    "writers": writers_section,
    "quality": quality_section,
    "hosts": hosts_section,
}


# --- main --------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument(
        "--only",
        nargs="+",
        choices=SECTIONS,
        metavar="SECTION",
        help=f"run only these sections, keep the others' results ({', '.join(SECTIONS)})",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=REPO / "docs" / "benchmarks.md",
        help="the markdown page (docs/benchmarks.md); results.json and the plots "
        "go to a directory named after it (docs/benchmarks/)",
    )
    ap.add_argument("--fresh", action="store_true", help="seed again, ignoring cached databases")
    ap.add_argument(
        "--render-only",
        action="store_true",
        help="run nothing: re-render the page and plots from results.json",
    )
    ap.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="pass the benchmarks' progress output (stderr) through",
    )
    return ap.parse_args(argv)


def command_for(name: str, args: argparse.Namespace) -> str:
    parts = [PYTHON_SHOWN, "-m", "bench.run_all", "--only", name]
    if args.quick:
        parts.append("--quick")
    out = args.out.resolve()
    default = (REPO / "docs" / "benchmarks.md").resolve()
    if out != default:
        parts += ["--out", "OUT.md"]
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out.resolve()
    data_dir = out.with_suffix("")
    data_dir.mkdir(parents=True, exist_ok=True)
    results_file = data_dir / "results.json"
    results: dict[str, Any] = (
        json.loads(results_file.read_text()) if results_file.exists() else {"sections": {}}
    )
    sizes = QUICK if args.quick else FULL
    failed = []
    if not args.render_only:
        cache_dir().mkdir(parents=True, exist_ok=True)
        for name in args.only or SECTIONS:
            print(
                f"[run_all] {name}: running{' (quick)' if args.quick else ''}…",
                file=sys.stderr,
                flush=True,
            )
            section: dict[str, Any] = {
                "quick": args.quick,
                "date": date.today().isoformat(),
                "machine": facts.machine(),
                "commit": facts.git_commit(MEASURED_CODE),
                "command": command_for(name, args),
            }
            started = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="memesh-run-all-") as logs:
                runner = Runner(args.verbose, Path(logs))
                try:
                    section["data"] = SECTION_FUNCS[name](sizes, runner, args.fresh)
                except Exception as exc:  # a failed section is reported, the others still run
                    section["error"] = f"{type(exc).__name__}: {exc}"[:3000]
                    failed.append(name)
            section["seconds"] = round(time.perf_counter() - started, 1)
            section["steps"] = runner.steps
            if section["commit"] != facts.git_commit(MEASURED_CODE):
                section["commit"] += " (changed during the run)"
            results["sections"][name] = scrub(section)
            status = "FAILED: " + section["error"][:300] if "error" in section else "done"
            print(
                f"[run_all] {name}: {status} in {section['seconds']:.0f} s",
                file=sys.stderr,
                flush=True,
            )
            # Written after every section, so a crash later keeps what was measured.
            results_file.write_text(json.dumps(results, indent=2) + "\n")
    make_plots(results, data_dir)
    results_file.write_text(json.dumps(results, indent=2) + "\n")
    out.write_text(report_render.render(results, data_dir.name, kept_notes(data_dir)))
    print(f"[run_all] wrote {out} and {data_dir}/", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
