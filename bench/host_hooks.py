"""Each memesh hook's wall time inside a real agent host, as the host itself times it.

    .venv/bin/python -m bench.host_hooks                       # every host, 3 warm sessions
    .venv/bin/python -m bench.host_hooks --host gemini --warm 5 --json

A host (HOSTS) is installed from its registry at the version the suite pins (tests/hosts.py),
set up with `memesh setup <host>` in a HOME of its own, and driven through non-interactive
sessions by a scripted model on loopback (tests/fakes/) in a git repository: the prompt asks
for something to be remembered, the model commits through the host's shell tool and ends with
a reply long enough to be kept as the handoff, so every hook memesh installs does its real
work. The times are the host's own: what it logs for each hook run, from starting the command
to reading its answer (Codex logs none: a wrapper around each hook command times the hook
process there, CODEX_TIMER).

Four ways, each on new homes:
- `fresh`: the first session on a new MEMESH_HOME (the database created on the way);
- `warm`: the sessions after it on the same home (`--warm` of them);
each with `memesh serve` running on the home (`served`: the hooks forward to it) and without
(`mcp`: they forward to the session's `memesh mcp`, or run alone while it starts). The
environment is the default install's (MEMESH_HOME only), so a hook forwards to either.
Printed (or `--json`): per host, way and hook, the median and the slowest of its runs.
Nothing is asserted: docs/benchmarks.md keeps the figures with the machine they came from.

A host is a `Host`: how to install it, what its settings need besides memesh's, how to run
one session and how to read its hook times. Another host is one more entry.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import http_bench, peer_servers

REPO = Path(__file__).resolve().parent.parent
SESSION_DEADLINE = 300
RULE = "Deploys go out on Tuesdays only"
LAST_REPLY = (
    "Recorded the deploy rule and committed the README. Next: tell the release team that "
    "deploys go out on Tuesdays only, and move Friday's release to Tuesday before the freeze."
)


@dataclass
class Machine:
    """A user's machine for one way: a HOME, a MEMESH_HOME, a project."""

    root: Path
    host_command: Path

    @property
    def user_home(self) -> Path:
        return self.root / "user-home"

    @property
    def memesh_home(self) -> Path:
        return self.root / "memesh-home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def env(self) -> dict[str, str]:
        return {**peer_servers.memesh_env(self.memesh_home), "HOME": str(self.user_home)}

    def git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.project, check=True, capture_output=True)


@dataclass(frozen=True)
class Host:
    name: str  # as `memesh setup` names it
    install: Callable[[], Path]  # the host's command, installed once
    prepare: Callable[[Machine], None]  # the user's own settings, before `memesh setup`
    session: Callable[[Machine, int], str]  # run session n; the host's log of it
    hook_times: Callable[[str], list[tuple[str, float]]]  # (event, seconds) from that log


# --- Gemini CLI -----------------------------------------------------------------------------

GEMINI = ("@google/gemini-cli", "0.61.0")  # tests/e2e/test_host_gemini.py's pin
# `Hook execution for SessionStart: 1 hooks executed successfully, total duration: 508ms`
GEMINI_HOOK_RUN = re.compile(r"Hook execution for (\w+): .*?total duration: (\d+)ms")


def gemini_install() -> Path:
    from tests.hosts import npm_host_command

    return npm_host_command(*GEMINI, "gemini")


def gemini_prepare(machine: Machine) -> None:
    """What Gemini CLI's first run saves (sign-in by API key, no usage statistics) and the
    project trusted, as tests/e2e/test_host_gemini.py sets them."""
    folder = machine.user_home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
    }
    (folder / "settings.json").write_text(json.dumps(settings))
    (folder / "trustedFolders.json").write_text(json.dumps({str(machine.project): "TRUST_FOLDER"}))


def gemini_session(machine: Machine, n: int) -> str:
    from tests.fakes.scripted_gemini import ScriptedGemini, call, say

    script = [
        call("run_shell_command", {"command": f"git commit -q --allow-empty -m 'Bench {n}'"}),
        say(LAST_REPLY),
    ]
    with ScriptedGemini(script) as model:
        env = {**machine.env(), "GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": model.url}
        done = subprocess.run(
            [str(machine.host_command), "-p", f"Remember that {RULE.lower()}.", "--debug",
             "--output-format", "json", "--approval-mode", "yolo"],
            cwd=machine.project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=SESSION_DEADLINE, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"gemini exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout + done.stderr


def gemini_hook_times(log: str) -> list[tuple[str, float]]:
    return [(event, int(ms) / 1000) for event, ms in GEMINI_HOOK_RUN.findall(log)]


# --- Codex CLI ------------------------------------------------------------------------------

CODEX = ("@openai/codex", "0.169.0")  # tests/e2e/test_host_codex.py's pin
# Codex logs no hook times: each memesh hook command is run through this wrapper, which writes
# `<event> <start ns> <end ns>` to $HOST_HOOKS_LOG (not a MEMESH_* name: those decide where a
# hook forwards). The wrapper changes the hooks' definitions, which Codex then holds untrusted:
# the sessions run with `--dangerously-bypass-hook-trust`.
CODEX_TIMER = """#!/bin/sh
start=$(date +%s%N)
"$@"
status=$?
printf '%s %s %s\\n' "$3" "$start" "$(date +%s%N)" >> "$HOST_HOOKS_LOG"
exit $status
"""


def codex_install() -> Path:
    from tests.hosts import npm_host_command

    return npm_host_command(*CODEX, "codex")


def codex_prepare(machine: Machine) -> None:
    pass  # Codex needs no sign-in with a model provider of its own (the session passes it)


def codex_session(machine: Machine, n: int) -> str:
    from tests.fakes.scripted_responses import ScriptedResponses, call, say, search

    timer, log = machine.root / "codex-timer", machine.root / f"codex-hooks-{n}.log"
    if not timer.exists():
        timer.write_text(CODEX_TIMER)
        timer.chmod(0o755)
        hooks_file = machine.user_home / ".codex" / "hooks.json"
        document = json.loads(hooks_file.read_text())
        for groups in document["hooks"].values():
            for handler in (h for group in groups for h in group["hooks"]):
                handler["command"] = f"{timer} {handler['command']}"
        hooks_file.write_text(json.dumps(document, indent=2))
    (machine.project / "README.md").write_text(f"# Project\n\n{RULE}, session {n}.\n")
    script = [
        search("memesh remember"),
        call("remember", {"name": f"bench-{n}", "observations": [RULE]}, namespace="mcp__memesh"),
        call("exec_command", {"cmd": f"git commit -q -am 'Bench {n}'"}),
        say(LAST_REPLY),
    ]
    with ScriptedResponses(script) as model:
        provider = f'{{name="scripted", base_url="{model.base_url}", wire_api="responses"}}'
        done = subprocess.run(
            [str(machine.host_command), "exec", "--json", "-m", "gpt-5.5",
             "--dangerously-bypass-hook-trust",
             "-c", 'model_provider="scripted"', "-c", f"model_providers.scripted={provider}",
             "--sandbox", "workspace-write", "--add-dir", str(machine.project / ".git"),
             "--disable", "plugins", "--disable", "apps", "--disable", "remote_plugin",
             "-c", "analytics.enabled=false", f"Remember that {RULE.lower()}."],
            cwd=machine.project, env={**machine.env(), "HOST_HOOKS_LOG": str(log)},
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=SESSION_DEADLINE,
            check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"codex exited {done.returncode}: {done.stderr[-2000:]}")
    return log.read_text() if log.exists() else ""


def codex_hook_times(log: str) -> list[tuple[str, float]]:
    runs = [line.split() for line in log.splitlines() if line.strip()]
    return [(event, (int(end) - int(start)) / 1e9) for event, start, end in runs]


HOSTS = {
    "codex": Host("codex", codex_install, codex_prepare, codex_session, codex_hook_times),
    "gemini": Host("gemini", gemini_install, gemini_prepare, gemini_session, gemini_hook_times),
}


# --- the four ways --------------------------------------------------------------------------


def new_machine(root: Path, host: Host, command: Path) -> Machine:
    machine = Machine(root, command)
    machine.project.mkdir(parents=True)
    machine.git("init", "-q")
    machine.git("config", "user.email", "bench@example.invalid")
    machine.git("config", "user.name", "Bench")
    (machine.project / "README.md").write_text(f"# Project\n\n{RULE}.\n")
    machine.git("add", "README.md")
    machine.git("commit", "-q", "-m", "Start the project")
    host.prepare(machine)
    subprocess.run(
        [str(peer_servers.memesh_bin()), "setup", host.name], cwd=machine.project,
        env=machine.env(), stdin=subprocess.DEVNULL, capture_output=True, check=True,
    )  # fmt: skip
    return machine


def start_serve(machine: Machine, folder: Path) -> peer_servers.Server:
    """`memesh serve` on the machine's home, in the user's environment (HOME included: a hook
    forwards only to a server that reads the hosts' folders where the hook does)."""
    folder.mkdir()
    port = http_bench.free_port()
    log = folder / "server.log"
    args = [str(peer_servers.memesh_bin()), "serve", "--port", str(port)]
    with log.open("wb") as out:
        # Its own session, so stop() ends it and every process it started, by its group id.
        proc = subprocess.Popen(
            args, cwd=machine.project, env=machine.env(), stdin=subprocess.DEVNULL,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    server = peer_servers.Server("memesh", proc, f"http://127.0.0.1:{port}", folder, log, args)
    deadline = time.monotonic() + SESSION_DEADLINE
    while not peer_servers.http_ok(f"{server.base_url}/v1/health"):
        if proc.poll() is not None or time.monotonic() > deadline:
            peer_servers.stop(server)
            raise RuntimeError(f"memesh serve did not start: {log.read_text()[-2000:]}")
        time.sleep(0.2)
    return server


def measure_way(host: Host, command: Path, served: bool, warm: int, say: Any) -> dict[str, Any]:
    """`fresh` and `warm` hook times of one way (with or without `memesh serve`)."""
    times: dict[str, dict[str, list[float]]] = {"fresh": {}, "warm": {}}
    with tempfile.TemporaryDirectory(
        prefix="memesh-host-hooks-", ignore_cleanup_errors=True
    ) as folder:
        machine = new_machine(Path(folder), host, command)
        server = None
        if served:
            say(f"{host.name}: starting memesh serve")
            server = start_serve(machine, Path(folder) / "serve")
        try:
            for n in range(1 + warm):
                kind = "fresh" if n == 0 else "warm"
                say(f"{host.name}: {'served' if served else 'mcp'} session {n + 1}/{1 + warm}")
                for event, seconds in host.hook_times(host.session(machine, n)):
                    times[kind].setdefault(event, []).append(seconds)
        finally:
            if server is not None:
                peer_servers.stop(server)
    return times


def summary(samples: list[float]) -> dict[str, float | int]:
    return {
        "runs": len(samples),
        "median_s": round(statistics.median(samples), 3),
        "max_s": round(max(samples), 3),
    }


def measure(hosts: list[str], warm: int, say: Any) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name in hosts:
        host = HOSTS[name]
        say(f"{name}: installing (once)")
        command = host.install()
        rows: dict[str, Any] = {}
        for served in (True, False):
            way = "served" if served else "mcp"
            for kind, events in measure_way(host, command, served, warm, say).items():
                for event, samples in events.items():
                    rows.setdefault(event, {})[f"{kind} {way}"] = summary(samples)
        result[name] = rows
    return result


def _cell(row: dict[str, Any]) -> str:
    return f"{row['median_s']:.2f} s (max {row['max_s']:.2f}, n={row['runs']})"


def render_section(result: dict[str, Any]) -> list[str]:
    """The figures as Markdown, a table per host (a host that could not run: its error); the
    page's section too (bench/run_all.py `hosts`, bench/report_render.py)."""
    ways = ("fresh served", "fresh mcp", "warm served", "warm mcp")
    lines = []
    for host, rows in result.items():
        lines += [f"**{host}** (median of the runs, the slowest, and their number):", ""]
        if "error" in rows:
            lines += [f"Failed: {rows['error']}", ""]
            continue
        lines += ["| hook | " + " | ".join(ways) + " |", "|---" * 5 + "|"]
        for event, by_way in rows.items():
            cells = [_cell(by_way[w]) if w in by_way else "—" for w in ways]
            lines.append(f"| {event} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines[:-1]


def render(result: dict[str, Any]) -> str:
    return "\n".join(render_section(result)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", action="append", choices=sorted(HOSTS))
    parser.add_argument("--warm", type=int, default=3, help="warm sessions after the first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        raise SystemExit("git is needed")

    def say(message: str) -> None:
        print(f"# {message}", file=sys.stderr, flush=True)

    result = measure(args.host or sorted(HOSTS), args.warm, say)
    print(json.dumps(result, indent=2) if args.json else render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
