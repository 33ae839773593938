"""Many memesh processes writing one database file at once, driven from this process.

`run_load(home, plan)` starts, on one MEMESH_HOME: `memesh worker` (the embedded filesystem
broker, the deterministic embedder, so every write's embedding really happens),
`memesh serve --no-worker` spoken to by HTTP clients, `memesh mcp` stdio servers driven by the
official SDK client, and a loop of one-shot CLI calls (`memesh remember`, `forget`, `recall`,
`import FILE`, and one `memesh reindex` half way). Each client runs a fixed number of calls
drawn from tests/procs/load_workload.py; every acknowledged write goes into the journal.

Once the clients are done it waits for the worker to embed the last writes, then checks the
journal against the database (tests/procs/load_verify.py, its own process) and runs
`memesh doctor --json`. Used by tests/e2e/test_multiprocess_load.py and tests/procs/load_soak.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import mcp_types as types
from mcp import Client, StdioServerParameters

from tests.processes import ROOT, free_port, memesh_env, stop, wait_until_healthy
from tests.procs.load_workload import Actor, Call, Journal

PROCS = Path(__file__).resolve().parent
STARTUP_DEADLINE = 90.0  # seconds for a server to answer; a hang fails, it does not block
CALL_DEADLINE = 120.0  # one call, however loaded the machine
EMBED_DEADLINE = 180.0  # for the worker to catch up with the last writes
LOCKED = "database is locked"


@dataclass
class LoadPlan:
    mcp_sessions: int = 2
    mcp_calls: int = 300  # per session
    http_clients: int = 4
    http_calls: int = 250  # per client
    cli_calls: int = 16  # one process each
    reindex: bool = True  # one `memesh reindex` from the CLI loop half way through
    seed: int = 8
    deadline: float = 600.0  # seconds for every client to finish; a hang fails the run


@dataclass
class LoadResult:
    journal: Journal
    seconds: float  # from the first call to the last answer
    verify: dict[str, Any]
    doctor: dict[str, Any]
    doctor_exit: int
    logs: dict[str, str]  # process -> its log, for diagnosis and the lock-error check

    def calls(self) -> int:
        return sum(self.journal.counts.values())

    def log_problems(self) -> list[str]:
        return [
            f"{name}: {line.strip()}"
            for name, text in self.logs.items()
            for line in text.splitlines()
            if LOCKED in line or "Traceback" in line
        ]


def memesh(*args: str) -> list[str]:
    return [sys.executable, "-m", "memesh_site.cli", *args]


def load_env(home: Path) -> dict[str, str]:
    return memesh_env(home, MEMESH_EMBEDDER="deterministic", PYTHONPATH=str(ROOT))


def migrate(home: Path) -> None:
    done = subprocess.run(
        memesh("migrate", "--verbosity", "0"),
        cwd=ROOT,
        env=load_env(home),
        capture_output=True,
        text=True,
        timeout=STARTUP_DEADLINE,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"migrate failed:\n{done.stderr}")


def start(args: list[str], home: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            args, cwd=ROOT, env=load_env(home), stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip


# --- running one call through each transport -------------------------------------------------
# Each returns (acknowledged, body): body is the operation's result, or the error envelope.


async def via_http(client: httpx.AsyncClient, call: Call) -> tuple[bool, dict[str, Any]]:
    response = await client.post(f"/v1/{call.operation}", json=call.payload)
    if response.status_code >= 500:
        raise Problem(f"HTTP {response.status_code}: {response.text}")
    body = response.json()
    if response.status_code == 200 and body.get("success") is True:
        return True, body["data"]
    return False, body


async def via_mcp(session: Client, call: Call) -> tuple[bool, dict[str, Any]]:
    result = await session.call_tool(call.operation, call.payload)
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return not result.is_error, json.loads(block.text)


async def via_cli(home: Path, tmp: Path, call: Call) -> tuple[bool, dict[str, Any]]:
    if call.operation == "import":
        bundle = tmp / "bundle.json"
        bundle.write_text(json.dumps(call.payload["data"]))
        args = memesh("import", str(bundle), "--merge", call.payload["merge_strategy"], "--json")
    else:
        args = memesh(call.operation, "--json", "--input", json.dumps(call.payload))
    done = await anyio.run_process(args, cwd=ROOT, env=load_env(home), check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    try:
        # The result on stdout; a --json failure is the envelope, as the last line of stderr.
        body = json.loads(out) if out.strip() else json.loads(err.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise Problem(f"CLI {call.operation} exit {done.returncode}: {out}{err}") from None
    if LOCKED in err or "Traceback" in err:
        raise Problem(f"CLI {call.operation} stderr: {err}")
    return done.returncode == 0, body


class Problem(Exception):
    """A client saw something no correct server answers."""


async def drive(
    transport: str,
    actor: Actor,
    journal: Journal,
    calls: int,
    send: Callable[[Call], Awaitable[tuple[bool, dict[str, Any]]]],
) -> None:
    for _ in range(calls):
        call = actor.next_call()
        began = time.perf_counter()
        try:
            with anyio.fail_after(CALL_DEADLINE):
                acknowledged, body = await send(call)
        except Exception as exc:
            journal.problems.append(f"{transport} {call.kind}: {type(exc).__name__}: {exc}")
            if not isinstance(exc, Problem):
                return  # the client itself broke: stop driving it
            continue
        journal.count(transport, call.kind, time.perf_counter() - began)
        if LOCKED in json.dumps(body):
            journal.problems.append(f"{transport} {call.kind}: {body}")
        elif acknowledged == call.refused:
            journal.problems.append(f"{transport} {call.kind} answered {body}")
        elif (wrong := call.check(body)) is not None:
            journal.problems.append(f"{transport}: {wrong}")


async def http_client(base: str, actor: Actor, journal: Journal, calls: int) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=CALL_DEADLINE) as client:
        await drive("http", actor, journal, calls, lambda call: via_http(client, call))


async def mcp_session(home: Path, actor: Actor, journal: Journal, calls: int) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memesh_site.cli", "mcp"], env=load_env(home),
        cwd=str(ROOT),
    )  # fmt: skip
    info = types.Implementation(name=f"load-{actor.client}", version="1.0")
    async with Client(params, client_info=info) as session:
        await drive("mcp", actor, journal, calls, lambda call: via_mcp(session, call))


async def cli_loop(home: Path, tmp: Path, actor: Actor, journal: Journal, plan: LoadPlan) -> None:
    half = plan.cli_calls // 2
    await drive("cli", actor, journal, half, lambda call: via_cli(home, tmp, call))
    if plan.reindex:
        # A new vector generation built and swapped in while every other client writes.
        done = await anyio.run_process(
            memesh("reindex", "--json"), cwd=ROOT, env=load_env(home), check=False
        )
        if done.returncode != 0:
            # Its --json result (why it is incomplete: failed, missing, errors) is on stdout.
            journal.problems.append(
                f"reindex exit {done.returncode}: {done.stderr.decode()}"
                f"{done.stdout.decode()[-2000:]}"
            )
        journal.count("cli", "reindex", 0.0)
    await drive("cli", actor, journal, plan.cli_calls - half, lambda c: via_cli(home, tmp, c))


def start_clients(
    group: anyio.abc.TaskGroup, home: Path, base: str, journal: Journal, plan: LoadPlan
) -> None:
    for i in range(plan.mcp_sessions):
        actor = Actor(f"m{i}", journal, plan.seed)
        group.start_soon(mcp_session, home, actor, journal, plan.mcp_calls)
    for i in range(plan.http_clients):
        actor = Actor(f"h{i}", journal, plan.seed)
        group.start_soon(http_client, base, actor, journal, plan.http_calls)
    actor = Actor("c0", journal, plan.seed)
    group.start_soon(cli_loop, home, home.parent, actor, journal, plan)


# --- the whole run -------------------------------------------------------------------------


def run_load(home: Path, plan: LoadPlan) -> LoadResult:
    """Run `plan` against a fresh database under `home` and check what it promised."""
    tmp = home.parent
    migrate(home)
    journal = Journal()
    logs = {"worker": tmp / "worker.log", "serve": tmp / "serve.log"}
    worker = start(memesh("worker", "--log-level", "warning"), home, logs["worker"])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start(
        memesh("serve", "--port", str(port), "--no-migrate", "--no-worker"), home, logs["serve"]
    )
    try:
        wait_until_healthy(server, base, logs["serve"], STARTUP_DEADLINE)

        async def everyone() -> None:
            with anyio.fail_after(plan.deadline):
                async with anyio.create_task_group() as group:
                    start_clients(group, home, base, journal, plan)

        began = time.perf_counter()
        anyio.run(everyone)
        seconds = time.perf_counter() - began
        stop(server, timeout=30)
        journal_file = tmp / "journal.json"
        journal_file.write_text(json.dumps(journal.as_json()))
        verify = run_json(
            [sys.executable, str(PROCS / "load_verify.py"), str(journal_file),
             "--wait", str(EMBED_DEADLINE)],
            home,
        )  # fmt: skip
    finally:
        stop(server, timeout=30)
        stop(worker, timeout=30)
    doctor_run = subprocess.run(
        memesh("doctor", "--json"), cwd=ROOT, env=load_env(home), capture_output=True,
        text=True, timeout=STARTUP_DEADLINE, check=False,
    )  # fmt: skip
    return LoadResult(
        journal=journal,
        seconds=seconds,
        verify=verify[1],
        doctor=json.loads(doctor_run.stdout) if doctor_run.stdout.strip() else {},
        doctor_exit=doctor_run.returncode,
        logs={name: path.read_text(errors="replace") for name, path in logs.items()},
    )


def run_json(args: list[str], home: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        args, cwd=ROOT, env=load_env(home), capture_output=True, text=True,
        timeout=EMBED_DEADLINE + STARTUP_DEADLINE, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"{args[1]} exit {done.returncode}:\n{done.stderr}")
    return done.returncode, json.loads(done.stdout)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(result: LoadResult) -> dict[str, Any]:
    """The figures a bench prints: calls, rate, latency per transport, what went wrong."""
    per_transport = {}
    for transport, values in result.journal.latencies.items():
        per_transport[transport] = {
            "calls": len(values),
            "p50_ms": round(percentile(values, 0.50) * 1000, 1),
            "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            "p99_ms": round(percentile(values, 0.99) * 1000, 1),
        }
    return {
        "calls": result.calls(),
        "seconds": round(result.seconds, 2),
        "calls_per_second": round(result.calls() / result.seconds, 1),
        "by_kind": dict(sorted(result.journal.counts.items())),
        "transports": per_transport,
        "entities_promised": len(result.journal.entities),
        "observations_promised": sum(len(e.observations) for e in result.journal.entities.values()),
        "problems": result.journal.problems[:20],
        "log_problems": result.log_problems()[:20],
        "verify": result.verify,
        "doctor_ok": result.doctor.get("ok"),
    }
