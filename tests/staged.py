"""memesh in a staged namespace (tests/mounts.py): a seeded MEMESH_HOME, the CLI, `memesh serve`
on loopback and `memesh mcp` on stdio with the official client, each run inside it, and the
envelope a storage condition must give through every one of them."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
from mcp import Client, StdioServerParameters

from api.envelope import known_failure
from graph.errors import StorageError
from tests import mcp_checks
from tests.mounts import Namespace
from tests.processes import (
    PROCESS_DEADLINE,
    ROOT,
    STARTUP_DEADLINE,
    free_port,
    memesh,
    memesh_env,
    wait_until_healthy,
)

SEEDED = {
    "kept-decision": "We chose SQLite for the memory store",
    "kept-note": "The nightly backup runs at two",
}
NEW = {"name": "written-later", "type": "note", "observations": ["A fact stored afterwards"]}
SMALL_BUNDLE = {"entities": [{"name": "imported", "type": "note", "observations": ["i"]}]}


def body_of(condition: type[StorageError]) -> dict[str, Any]:
    """The failure envelope every transport must give for `condition`."""
    failure = known_failure(condition())
    assert failure is not None and failure.extra["hint"]
    return failure.body()


def seed(home: Path) -> None:
    """A migrated MEMESH_HOME holding SEEDED, written outside any staging."""
    for name, fact in SEEDED.items():
        done = cli(home, None, "remember", "--input", json.dumps(entry(name, fact)), "--json")
        assert done.returncode == 0, done.stderr


def entry(name: str, *observations: str) -> dict[str, Any]:
    return {"name": name, "type": "note", "observations": list(observations)}


def env(home: Path) -> dict[str, str]:
    return memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false")


def cli(home: Path, ns: Namespace | None, *args: str) -> subprocess.CompletedProcess[str]:
    argv = memesh(*args)
    return subprocess.run(
        ns.argv(argv) if ns else argv,
        cwd=ROOT, env=env(home), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=PROCESS_DEADLINE,
    )  # fmt: skip


def cli_failure(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The envelope a `--json` command printed as the last line of stderr (exit 1, no stdout)."""
    assert done.returncode == 1 and done.stdout == "", (done.stdout, done.stderr)
    return json.loads(done.stderr.strip().splitlines()[-1])


def stored_names(home: Path, ns: Namespace | None = None) -> set[str]:
    done = cli(home, ns, "export", "--json")
    assert done.returncode == 0, done.stderr
    return {e["name"] for e in json.loads(done.stdout)["entities"]}


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    base: str

    def post(self, route: str, payload: object) -> httpx.Response:
        return httpx.post(f"{self.base}/v1/{route}", json=payload, timeout=PROCESS_DEADLINE)

    def recalled(self, query: str) -> set[str]:
        response = self.post("recall", {"query": query})
        assert response.status_code == 200, response.text
        return {e["name"] for e in response.json()["data"]["entities"]}


def start_server(home: Path, ns: Namespace, log: Path, *, touch_database: bool = True) -> Server:
    """`memesh serve` in the namespace, once it answers. With touch_database=False the wait
    asks for a route that reads nothing, so no connection to the database is open after it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ns.argv(memesh("serve", "--port", str(port), "--no-worker")),
            cwd=ROOT, env=env(home), stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    if touch_database:
        wait_until_healthy(proc, base, log, STARTUP_DEADLINE)
    else:
        wait_until_answering(proc, f"{base}/v1/no-such-route", log)
    return Server(proc, base)


def wait_until_answering(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    give_up = time.monotonic() + STARTUP_DEADLINE
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            raise RuntimeError(f"memesh serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"memesh serve did not answer:\n{log.read_text()}")


def mcp_session(home: Path, ns: Namespace, steps: list[Any]) -> list[tuple[bool, Any]]:
    """Run `memesh mcp` in the namespace and make each tool call of `steps` — (name,
    arguments), or a plain callable to run between calls — in one session; returns
    (isError, the JSON of the answer) per call."""
    params = StdioServerParameters(
        command=ns.argv(memesh("mcp"))[0],
        args=ns.argv(memesh("mcp"))[1:],
        env=env(home),
        cwd=str(ROOT),
    )
    answers: list[tuple[bool, Any]] = []

    async def session() -> None:
        with anyio.fail_after(PROCESS_DEADLINE):
            async with Client(params, mode="legacy") as client:
                for step in steps:
                    if callable(step):
                        step()
                        continue
                    name, arguments = step
                    result = await client.call_tool(name, arguments)
                    answers.append((bool(result.is_error), json.loads(mcp_checks.text_of(result))))

    anyio.run(session)
    return answers


def names_in(recall_data: dict[str, Any]) -> set[str]:
    return {e["name"] for e in recall_data["entities"]}
