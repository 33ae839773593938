"""Export/import round trip of N memories through the real `memesh` CLI processes.

    .venv/bin/python -m bench.bundle_roundtrip                   # 50,000 memories
    .venv/bin/python -m bench.bundle_roundtrip --entities 5000 --json

Run it in a terminal to see the commands' progress bars (their stderr is passed through).

1. Writes a synthetic bundle of N entities (observations, tags, titles or null, a relation on
   every tenth entity, pointing forward as well as back) and imports it into home A:
   `memesh import seed.json --merge skip`.
2. `memesh export > f.json` from A, `memesh import f.json --merge skip` into the empty home B,
   `memesh export > g.json` from B.
3. Checks that f.json and g.json hold the same entities, and prints each step's wall time
   and the peak RSS of its process (ru_maxrss from wait4).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORDS = [
    "cache",
    "index",
    "token",
    "schema",
    "worker",
    "queue",
    "retry",
    "timeout",
    "migration",
    "deploy",
    "rollback",
    "latency",
    "shard",
    "replica",
    "vector",
    "embedding",
    "tokenizer",
    "session",
    "cookie",
    "header",
    "router",
]


def synthetic_bundle(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        f.write(f'{{"version": "3.0.0", "entity_count": {n}, "entities": [')
        for i in range(n):
            entity: dict[str, Any] = {
                "name": f"memory-{i:06d}",
                "title": f"Note {i} on {rng.choice(WORDS)}" if i % 3 else None,
                "type": rng.choice(["decision", "lesson", "note", "pattern"]),
                "namespace": rng.choice(["personal", "team", "global"]),
                "observations": [
                    " ".join(rng.choices(WORDS, k=rng.randint(6, 30)))
                    for _ in range(rng.randint(1, 5))
                ],
                "tags": sorted({f"topic:{w}" for w in rng.choices(WORDS, k=3)}),
                "relations": [],
            }
            if i % 10 == 0 and n > 1:
                target = f"memory-{rng.randrange(n):06d}"
                if target != entity["name"]:
                    entity["relations"] = [
                        {"from": entity["name"], "to": target, "type": "related-to"}
                    ]
            f.write(("\n" if i == 0 else ",\n") + json.dumps(entity))
        f.write("\n]}\n")


def memesh(home: Path, args: list[str], stdout_path: Path | None = None) -> dict[str, Any]:
    """Run `memesh ARGS` with MEMESH_HOME=home; returns seconds, peak RSS (MB), output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env.update(
        MEMESH_HOME=str(home), MEMESH_EMBEDDER="none", DJANGO_SETTINGS_MODULE="memesh_site.settings"
    )
    cmd = [sys.executable, "-m", "memesh_site.cli", *args]
    out = stdout_path.open("wb") if stdout_path else subprocess.PIPE
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stdin=subprocess.DEVNULL)
    captured = b""
    if stdout_path is None:
        assert proc.stdout is not None
        captured = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if stdout_path:
        out.close()  # type: ignore[union-attr]
    if proc.returncode != 0:
        raise SystemExit(f"memesh {' '.join(args)} exited {proc.returncode}: {captured!r}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="memesh-bundle-bench-") as tmp:
        work = Path(tmp)
        home_a, home_b = work / "a", work / "b"
        seed_file, f_json, g_json = work / "seed.json", work / "f.json", work / "g.json"
        synthetic_bundle(seed_file, args.entities, args.seed)
        steps: dict[str, dict[str, Any]] = {}
        for home in (home_a, home_b):
            home.mkdir()
            memesh(home, ["migrate", "--verbosity", "0"])
        steps["seed import (A)"] = memesh(home_a, ["import", str(seed_file), "--merge", "skip"])
        steps["export A > f.json"] = memesh(home_a, ["export"], stdout_path=f_json)
        steps["import f.json --merge skip (B)"] = memesh(
            home_b, ["import", str(f_json), "--merge", "skip"]
        )
        steps["export B > g.json"] = memesh(home_b, ["export"], stdout_path=g_json)

        first = json.loads(f_json.read_text())
        second = json.loads(g_json.read_text())
        same = first["entities"] == second["entities"]
        report = {
            "entities": args.entities,
            "bundle_mb": round(f_json.stat().st_size / 2**20, 1),
            "exported": first["entity_count"],
            "round_trip_identical": same,
            "steps": steps,
        }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{report['entities']} entities, bundle {report['bundle_mb']} MB, "
            f"round trip identical: {same}"
        )
        for step, figures in steps.items():
            print(f"  {step:34} {figures['seconds']:8.2f} s   peak RSS {figures['peak_rss_mb']} MB")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
