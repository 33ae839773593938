"""The CLIs of memesh and MeMesh 4.6 as processes, for bench/peer_compare.py: wall time of
`remember`, `recall` and `--help`, each run several times, interleaved (memesh, peer, memesh,
…), against a home of each holding the same few memories.

memesh's home is migrated and its memories embedded first (`memesh embed`), the state its
worker leaves, so `recall` pays for what a user's recall pays for (the query's embedding);
the peer's home is its CLI's own, keyword-only by default.

memesh is measured twice: as the default install runs it, with `memesh serve` running on the
home (which runs short commands for the CLI: api/cli/forward.py), and alone
(MEMESH_CLI_LOCAL=1: the whole command in its own process, as without a server). The ratios
and the target use the first.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import http_bench, peer_servers
from bench.peer_servers import Tools

REPO = Path(__file__).resolve().parent.parent
SEEDED = (
    ("auth-decision", ("Chose JWT for authentication", "RS256 token signing keys rotate")),
    ("cache-lesson", ("Redis cache eviction caused stale sessions", "Set a TTL on session keys")),
    ("deploy-pattern", ("Canary releases go to five percent first", "Roll back on error budget")),
    ("db-decision", ("SQLite in WAL mode for the local store", "One writer at a time")),
    ("test-lesson", ("Flaky integration tests came from shared fixtures", "Isolate the database")),
)
QUERY = ("token", "signing")
COMMANDS = ("remember", "recall", "--help")
LOCAL = "MEMESH_CLI_LOCAL"


def memesh_remember(name: str, obs: tuple[str, ...]) -> list[str]:
    """memesh takes --obs once per observation."""
    return ["remember", "--name", name, "--type", "note", *(a for o in obs for a in ("--obs", o))]


def peer_remember(name: str, obs: tuple[str, ...]) -> list[str]:
    """The peer's --obs takes several values (`peer-memesh cli remember --help`)."""
    return ["remember", "--name", name, "--type", "note", "--obs", *obs]


def cli_walls(
    tools: Tools, runs: int, step: Callable[[list[str], str], None], say: Callable[[str], None]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(
        prefix="memesh-peer-compare-cli-", ignore_cleanup_errors=True
    ) as tmp:
        m_home, p_home = Path(tmp) / "memesh", Path(tmp) / "peer"
        m_home.mkdir()
        p_home.mkdir()
        memesh_cmd = [str(peer_servers.memesh_bin())]
        systems = {
            "memesh": (memesh_cmd, peer_servers.memesh_env(m_home)),
            "memesh_alone": (memesh_cmd, {**peer_servers.memesh_env(m_home), LOCAL: "1"}),
            "peer": (
                [str(tools.peer), "cli"],
                {**os.environ, "MEMESH_PEER_HOME": str(p_home)},
            ),
        }
        remember = {
            "memesh": memesh_remember,
            "memesh_alone": memesh_remember,
            "peer": peer_remember,
        }

        def run(system: str, args: list[str]) -> tuple[float, int]:
            prefix, env = systems[system]
            step([*prefix, *args], f"cli {system} {args[0]}")
            started = time.perf_counter()
            done = subprocess.run(
                [*prefix, *args], env=env, cwd=REPO, capture_output=True, check=False
            )
            return time.perf_counter() - started, done.returncode

        say("CLI: seeding both homes")
        seeding = [("memesh", ["migrate", "--verbosity", "0"])]
        for name, obs in SEEDED:
            seeding += [(s, remember[s](name, obs)) for s in systems]
        seeding = [(s, a) for s, a in seeding if s != "memesh_alone"]
        seeding.append(("memesh", ["embed", "--json"]))  # what its worker would have done
        for system, args in seeding:
            _, code = run("memesh_alone" if system == "memesh" else system, args)
            if code != 0:
                raise RuntimeError(f"{system} {' '.join(args)} exited {code}")
        say("CLI: starting memesh serve on its home")
        server = peer_servers.start_memesh(http_bench.free_port(), home=m_home)

        walls: dict[str, dict[str, list[float]]] = {c: {s: [] for s in systems} for c in COMMANDS}
        failures = dict.fromkeys(COMMANDS, 0)
        try:
            for i in range(runs):
                say(f"CLI: run {i + 1}/{runs}")
                obs = (f"CLI bench observation {i}", "token signing")
                for command in COMMANDS:
                    for system in systems:
                        args = {
                            "remember": remember[system](f"cli-bench-{i}-{system}", obs),
                            "recall": ["recall", *QUERY],
                            "--help": ["--help"],
                        }[command]
                        seconds, code = run(system, args)
                        walls[command][system].append(seconds)
                        failures[command] += code != 0
        finally:
            peer_servers.stop(server)
    return {
        "runs": runs,
        "seeded": len(SEEDED),
        "commands": {c: summary(walls[c], failures[c]) for c in COMMANDS},
    }


def summary(walls: dict[str, list[float]], failures: int) -> dict[str, Any]:
    """Median, min and max per system, and each (memesh, peer) pair of one run."""
    out: dict[str, Any] = {
        "failures": failures,
        "pairs": [
            [round(m, 4), round(p, 4)] for m, p in zip(walls["memesh"], walls["peer"], strict=True)
        ],
    }
    for system, ws in walls.items():
        out[system] = {
            "median_s": round(statistics.median(ws), 4),
            "min_s": round(min(ws), 4),
            "max_s": round(max(ws), 4),
        }
    return out
