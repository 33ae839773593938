"""Wall time and CPU of each `memesh hook <event>` process and of the short CLI commands,
next to the peer's CLI call.

    .venv/bin/python -m bench.hook_bench                 # 5 runs of each
    .venv/bin/python -m bench.hook_bench --runs 10 --json
    .venv/bin/python -m bench.hook_bench --imports 5     # and where each alone process's
                                                         # start-up goes (bench/import_areas.py)

The issue's bound: each hook process at most 2x the wall time of the original MeMesh's CLI
call (`../shared/tools/peer-memesh cli recall x`, run as bench/peer_cli.py runs it). Measured
here, printed with the ratios, never asserted.

Every hook, and `memesh --help`, `remember` and `recall`, is timed four ways, interleaved
(served, mcp, alone, peer, served, …) so drift in the machine's load spreads over all four:
- `served`: as the default install runs it, `memesh serve` running on the home (which runs
  the hook for the process: api/cli/forward.py, stdin carried with the request);
- `mcp`: without `memesh serve`, the session's `memesh mcp` running on the home, as an agent
  host keeps it (api/cli/host.py). Both run on the one home here: the mcp runs' environment
  adds MEMESH_MCP_RUNS_CLI=true, which the server's lacks, so only the MCP process answers
  them (a command is forwarded only to a process of its own MEMESH_* environment);
- `alone`: MEMESH_CLI_LOCAL=1, the whole hook in its own process, as without a server;
- `peer`: the peer's `cli recall x`, the reference call.
The home holds a few memories, a lesson, a note file and a session transcript (the test
fixtures of tests/fixtures/hooks, filled in), so each hook does its real work: the briefing,
the file's memories (a new session each run, so the once-per-session throttle never skips
it), the lesson guard, a commit read with git and captured, the reminder, the Stop hook's
citations / evidence / handoff / note files, the pre-compaction summary and a remember
request. The home's memories are embedded by the server's worker, so an alone `recall` embeds
its query as a user's does (loading the model in its own process). Each process's CPU (user +
system, from the OS's accounting of the child) is reported beside its wall time: the served
figure is the forwarding process's own, the server's work is not in it. Also reported:
whether the alone hook process imports the embedding runtime (it must not: no hook embeds a
query), from `python -X importtime`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import http_bench, import_areas, peer_servers
from core.hook_outcomes import OUTCOMES_FILENAME

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "hooks"
LOCAL = "MEMESH_CLI_LOCAL"
BOUND = 2.0  # the issue's: a hook process within 2x the peer's CLI call
# A fixture name: user-prompt-submit.json with a prompt that asks nothing of memesh.
PLAIN_PROMPT = "user-prompt-submit.json#plain"
# (label, event, fixture, a fresh session id each run)
HOOKS = (
    ("session-start", "session-start", "session-start.json", False),
    ("pre-tool-use Edit", "pre-tool-use", "pre-tool-use-edit.json", True),
    ("pre-tool-use Bash", "pre-tool-use", "pre-tool-use-bash.json", False),
    ("post-tool-use commit", "post-tool-use", "post-tool-use-bash-commit.json", False),
    ("post-tool-use ExitPlanMode", "post-tool-use", "post-tool-use-exit-plan-mode.json", True),
    ("stop", "stop", "stop.json", False),
    ("pre-compact", "pre-compact", "pre-compact.json", False),
    ("user-prompt-submit", "user-prompt-submit", "user-prompt-submit.json", False),
    # The two most frequent calls, which find nothing to do (api/hooks/triage.py).
    ("post-tool-use Bash", "post-tool-use", "post-tool-use-bash-cat.json", False),
    ("user-prompt-submit plain", "user-prompt-submit", PLAIN_PROMPT, False),
)
# (label, arguments; None: a remember of a new memory each run)
COMMANDS: tuple[tuple[str, list[str] | None], ...] = (
    ("memesh --help", ["--help"]),
    ("memesh remember", None),
    ("memesh recall", ["recall", "audience", "settings"]),
)
# Column heads of the imports table (one column per process).
SHORT = {
    "session-start": "start",
    "pre-tool-use Edit": "pre Edit",
    "pre-tool-use Bash": "pre Bash",
    "post-tool-use commit": "post commit",
    "post-tool-use ExitPlanMode": "post plan",
    "stop": "stop",
    "pre-compact": "precompact",
    "user-prompt-submit": "prompt",
    "post-tool-use Bash": "post Bash",
    "user-prompt-submit plain": "prompt plain",
    "memesh --help": "--help",
    "memesh remember": "remember",
    "memesh recall": "recall",
}
EMBEDDING_RUNTIME = ("onnxruntime", "tokenizers")
SYSTEMS = ("served", "mcp", "alone", "peer")
MCP_ONLY = "MEMESH_MCP_RUNS_CLI"  # set for the mcp runs alone (see above)
INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"hook-bench","version":"0"}}}\n'
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float  # the child's user + system time
    code: int


class Bench:
    def __init__(self, root: Path, peer: Path) -> None:
        self.home = root / "memesh"
        self.user_home = root / "user"
        self.peer_home = root / "peer"
        self.repo = root / "widget"
        self.peer = peer
        for folder in (self.home, self.user_home, self.peer_home, self.repo):
            folder.mkdir(parents=True)
        slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(self.repo))
        self.claude = self.user_home / ".claude" / "projects" / slug
        (self.claude / "memory").mkdir(parents=True)
        self.short_hash = ""

    def env(self, system: str) -> dict[str, str]:
        if system == "peer":
            return {**os.environ, "MEMESH_PEER_HOME": str(self.peer_home)}
        env = {**peer_servers.memesh_env(self.home), "HOME": str(self.user_home)}
        if system == "mcp":
            return {**env, MCP_ONLY: "true"}
        return {**env, LOCAL: "1"} if system == "alone" else env

    def start_mcp(self) -> subprocess.Popen[bytes]:
        """`memesh mcp` on the home, initialized, taking the mcp runs' commands once its
        record is written (api/cli/host.py)."""
        child = subprocess.Popen(
            [str(peer_servers.memesh_bin()), "mcp"], cwd=self.repo, env=self.env("mcp"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(INITIALIZE.encode())
        child.stdin.flush()
        child.stdout.readline()  # the initialize answer
        hosts = self.home / "cli-hosts"
        deadline = time.monotonic() + 30
        while not (hosts / f"{child.pid}.json").exists():
            if time.monotonic() > deadline or child.poll() is not None:
                raise SystemExit("memesh mcp did not record itself as a CLI host")
            time.sleep(0.05)
        return child

    def run(self, args: list[str], system: str, stdin: str = "") -> Run:
        started = time.perf_counter()
        child = subprocess.Popen(
            args, cwd=self.repo, env=self.env(system), stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        assert child.stdin is not None
        child.stdin.write(stdin.encode())
        child.stdin.close()
        # wait4, not wait: the child's own CPU time, as the OS accounted it.
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        return Run(wall, usage.ru_utime + usage.ru_stime, child.returncode)

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.repo, capture_output=True, text=True, check=True
        )
        return done.stdout

    def seed(self) -> None:
        """A repository with a commit, memories about its file, a lesson, a note file and a
        session transcript."""
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Bench")
        self.git("config", "user.email", "bench@example.com")
        (self.repo / "src").mkdir()
        (self.repo / "src" / "auth.py").write_text("AUDIENCE = None\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "Read the token audience from settings")
        self.short_hash = self.git("rev-parse", "--short=7", "HEAD").strip()
        memesh = [str(peer_servers.memesh_bin())]
        for args in (
            ["remember", "--name", "audience", "--type", "decision", "--obs",
             "auth.py reads the audience from settings", "--why", "one source",
             "--tag", "file:auth.py"],
            ["learn", "--error", "`git push --force` on main lost a commit", "--fix",
             "`git push --force-with-lease`"],
            ["remember", "--name", "notes", "--type", "note", "--obs", "release on Fridays"],
        ):  # fmt: skip
            code = self.run([*memesh, *args], "alone").code
            if code != 0:
                raise RuntimeError(f"memesh {args[0]} exited {code}")
        (self.claude / "memory" / "deploy.md").write_text(
            "---\nname: Deploy target\ndescription: fly.io from main\nmetadata:\n"
            "  type: project\n---\n\nThe app is acme-web.\n"
        )
        transcript = (FIXTURES / "session-transcript.jsonl").read_text()
        for session in ("bench",):
            text = transcript.replace("__CWD__", str(self.repo)).replace("__SESSION__", session)
            text = text.replace("__CITED__", "1").replace("__LISTED__", "2")
            (self.claude / f"{session}.jsonl").write_text(text)

    def payload(self, fixture: str, session: str) -> str:
        if fixture == PLAIN_PROMPT:
            data = json.loads(self.payload(fixture.split("#")[0], session))
            return json.dumps({**data, "prompt": "Fix the failing test, then run the suite."})
        text = (FIXTURES / fixture).read_text()
        text = text.replace("__CWD__", str(self.repo)).replace("__SESSION__", session)
        text = text.replace("__TRANSCRIPT__", str(self.claude / "bench.jsonl"))
        return text.replace("__SHORT_HASH__", self.short_hash)

    def hook_args(self, event: str) -> list[str]:
        return [str(peer_servers.memesh_bin()), "hook", event]

    def command_args(self, args: list[str] | None, run: str) -> list[str]:
        args = args or ["remember", "--name", f"bench-{run}", "--type", "note",
                        "--obs", f"bench observation {run}", "--tag", "file:auth.py"]  # fmt: skip
        return [str(peer_servers.memesh_bin()), *args]

    def import_areas(self, args: list[str], stdin: str, runs: int) -> dict[str, float]:
        """Where an alone process of `args` spends its imports, median of `runs` runs."""
        samples = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "memesh_site.cli", *args[1:]],
                cwd=self.repo, env=self.env("alone"), input=stdin.encode(),
                capture_output=True, check=False,
            )  # fmt: skip
            samples.append(import_areas.self_times(done.stderr.decode()))
        return import_areas.by_area(samples)

    def imports_embedding_runtime(self) -> bool:
        """Whether an alone hook process (the heaviest: stop) imports the embedding runtime."""
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "memesh_site.cli", "hook", "stop"],
            cwd=self.repo, env=self.env("alone"), input=self.payload("stop.json", "bench").encode(),
            capture_output=True, check=False,
        )  # fmt: skip
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()}
        return any(name in imported for name in EMBEDDING_RUNTIME)


def stats(runs: list[Run]) -> dict[str, float]:
    walls = [r.wall_s for r in runs]
    return {
        "median_s": round(statistics.median(walls), 4),
        "min_s": round(min(walls), 4),
        "max_s": round(max(walls), 4),
        "cpu_median_s": round(statistics.median(r.cpu_s for r in runs), 4),
    }


def measure(runs: int, peer: Path, say: Any, import_runs: int = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="memesh-hook-bench-", ignore_cleanup_errors=True) as t:
        bench = Bench(Path(t), peer)
        say("seeding the home")
        bench.seed()
        say("peer: first call (installs it if needed)")
        bench.run([str(peer), "cli", "recall", "x"], "peer")
        say("starting memesh serve on the home")
        server = peer_servers.start_memesh(http_bench.free_port(), home=bench.home)
        say("starting memesh mcp on the home")
        mcp = bench.start_mcp()
        labels = [label for label, *_ in HOOKS] + [label for label, _ in COMMANDS]
        samples: dict[str, dict[str, list[Run]]] = {
            label: {system: [] for system in SYSTEMS} for label in labels
        }
        areas: dict[str, dict[str, float]] = {}
        try:
            for i in range(runs):
                say(f"run {i + 1}/{runs}")
                for label, event, fixture, fresh in HOOKS:
                    for system in SYSTEMS:
                        if system == "peer":
                            args, stdin = [str(peer), "cli", "recall", "x"], ""
                        else:
                            session = f"bench-{system}-{i}" if fresh else "bench"
                            args = bench.hook_args(event)
                            stdin = bench.payload(fixture, session)
                        samples[label][system].append(bench.run(args, system, stdin))
                for label, command in COMMANDS:
                    for system in SYSTEMS:
                        if system == "peer":
                            args = [str(peer), "cli", "recall", "x"]
                        else:
                            args = bench.command_args(command, f"{system}-{i}")
                        samples[label][system].append(bench.run(args, system))
            embedding = bench.imports_embedding_runtime()
            if import_runs:
                for label, event, fixture, _ in HOOKS:
                    say(f"imports: {label}")
                    stdin = bench.payload(fixture, "bench-imports")
                    areas[label] = bench.import_areas(bench.hook_args(event), stdin, import_runs)
                for label, command in COMMANDS:
                    say(f"imports: {label}")
                    args = bench.command_args(command, "imports")
                    areas[label] = bench.import_areas(args, "", import_runs)
            outcomes = bench.home / OUTCOMES_FILENAME
            failed = [
                json.loads(line)
                for line in (outcomes.read_text().splitlines() if outcomes.exists() else [])
                if '"failed"' in line
            ]
        finally:
            assert mcp.stdin is not None
            mcp.stdin.close()  # the MCP process ends with its input
            mcp.wait(timeout=60)
            peer_servers.stop(server)  # removes the memesh home with it
    figures: dict[str, Any] = {}
    for label, by_system in samples.items():
        row = {system: stats(rs) for system, rs in by_system.items()}
        peer_median = row["peer"]["median_s"]
        figures[label] = {
            **row,
            "served_ratio": round(row["served"]["median_s"] / peer_median, 2),
            "mcp_ratio": round(row["mcp"]["median_s"] / peer_median, 2),
            "alone_ratio": round(row["alone"]["median_s"] / peer_median, 2),
        }
    every_run = [r for by_system in samples.values() for rs in by_system.values() for r in rs]
    failures = sum(r.code != 0 for r in every_run)
    return {
        "runs": runs,
        "bound_ratio": BOUND,
        "failures": failures,
        # A hook always exits 0: what failed is in hook-outcomes.jsonl (event and error only).
        "failed_outcomes": [{"event": o.get("event"), "error": o.get("error")} for o in failed],
        "alone_imports_embedding_runtime": embedding,
        "load_average": os.getloadavg(),
        "hooks": {label: figures[label] for label, *_ in HOOKS},
        "commands": {label: figures[label] for label, _ in COMMANDS},
        "import_runs": import_runs,
        "alone_import_areas_s": areas,
    }


def render(result: dict[str, Any]) -> str:
    out = [
        f"memesh processes, {result['runs']} runs each: median wall time (min-max) and median "
        "CPU (user + system) of the process; ratio to the peer's `cli recall x`; the issue's "
        f"bound: {result['bound_ratio']:g}x. served: `memesh serve` runs the command for the "
        "process (its CPU is the forwarding process's own); mcp: no serve, the session's "
        "`memesh mcp` runs it; alone: no server, the whole command in the process.",
        f"{'process':<28} {'served':>16} {'cpu':>6} {'mcp':>16} {'alone':>16} {'cpu':>6} "
        f"{'peer':>16} {'served/peer':>12} {'mcp/peer':>9} {'alone/peer':>11}",
    ]

    def cell(f: dict[str, float]) -> str:
        return f"{f['median_s']:.3f} ({f['min_s']:.2f}-{f['max_s']:.2f})"

    for label, h in {**result["hooks"], **result["commands"]}.items():
        out.append(
            f"{label:<28} {cell(h['served']):>16} {h['served']['cpu_median_s']:>6.3f} "
            f"{cell(h['mcp']):>16} "
            f"{cell(h['alone']):>16} {h['alone']['cpu_median_s']:>6.3f} {cell(h['peer']):>16} "
            f"{h['served_ratio']:>11.2f}x {h['mcp_ratio']:>8.2f}x {h['alone_ratio']:>10.2f}x"
        )
    out.append(
        f"non-zero exits: {result['failures']}; failed hook outcomes: "
        f"{len(result['failed_outcomes'])}; the alone process imports the "
        f"embedding runtime: {'yes' if result['alone_imports_embedding_runtime'] else 'no'}; "
        "load average at the end: " + " ".join(f"{x:.2f}" for x in result["load_average"])
    )
    areas: dict[str, dict[str, float]] = result["alone_import_areas_s"]
    if areas:
        labels = list(areas)
        largest = {
            a: max(by.get(a, 0.0) for by in areas.values()) for by in areas.values() for a in by
        }
        names = sorted(largest, key=lambda a: -largest[a])
        out += [
            "",
            f"alone processes' imports by area, ms (`-X importtime` self times, median of "
            f"{result['import_runs']} runs; the instrument's overhead included)",
            f"{'area':<50}" + "".join(f"{SHORT.get(label, label)[:12]:>13}" for label in labels),
        ]
        for name in [*names, "total"]:
            values = [
                sum(by.values()) if name == "total" else by.get(name, 0.0) for by in areas.values()
            ]
            out.append(f"{name:<50}" + "".join(f"{v * 1000:>13.0f}" for v in values))
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tools", default=peer_servers.TOOLS_SHOWN, help="peer-memesh's folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--imports", type=int, default=0, metavar="N",
        help="also time each alone process's imports by area, N runs each",
    )  # fmt: skip
    args = parser.parse_args()
    tools = peer_servers.find_tools(args.tools)

    def say(message: str) -> None:
        sys.stderr.write(f"[hook_bench] {message}\n")

    result = measure(args.runs, tools.peer, say, args.imports)
    print(json.dumps(result, indent=2) if args.json else render(result))


if __name__ == "__main__":
    main()
