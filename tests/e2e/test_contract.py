"""One operation, three transports: every operation's registry examples (and one invalid call
each) run through REST on a real `memesh serve`, MCP over stdio with the official SDK client,
and the `memesh` CLI with --json — each on a fresh database, in the same order — and must give
the same data, and the same errorCode for the failures.

What legitimately differs is normalised away, and nothing else: times, the provenance stamp
each transport writes (http, the MCP client's name, cli), REST's `validation.bad-param` for
bad input on a GET route's query string (the reference's code for parameters), and which
project a read is bound to (`scope.project`, `scope.all_projects`; ping's `agent.project`):
MCP and the CLI run in a git repository whose project is `myapp`, the project every example
files under, while REST binds none — so each sees the same memories and says so differently
(checked on its own below). user_patterns answers MCP in markdown (the reference's MCP form),
so its MCP text is compared with the CLI's markdown.
Each operation runs on the transports it has, and those are compared: operations without a
REST route in the reference (task_state, briefing, pin, unpin) between MCP and the CLI; those
that are no MCP tool (the demo tour's seed and reset) between REST and the CLI; and the
dashboard's data routes, which only REST serves, run there in the same sequence, so their
examples are known to succeed and their invalid call to fail with the parameter code.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from api.operations import OPERATIONS
from graph.project import project_id
from tests import mcp_checks
from tests.postgres import PostgresServer
from tests.processes import ROOT, free_port, memesh, memesh_env, stop, wait_until_healthy

pytestmark = pytest.mark.slow  # three processes' worth of calls

# The order the examples run in: writes the later reads can see, forget last.
ORDER = [
    "remember", "recall", "feedback", "learn", "task_state", "briefing", "export", "import",
    "user_patterns", "stats", "projects", "graph", "graph_evidence", "analytics", "analytics_pm",
    "pin", "unpin", "observe", "memory_list", "ping", "supersede", "work_package", "improvement",
    "forget", "demo_seed", "demo_reset", "message",
]  # fmt: skip
CLI_COMMAND = {
    "task_state": ["task"],
    "user_patterns": ["patterns"],
    "memory_list": ["memories"],
    "demo_seed": ["demo"],
    "demo_reset": ["demo", "--reset"],
    "work_package": ["work-package"],
}
# REST only: the dashboard's data (no MCP tool, no CLI command).
NO_CLI = {"graph", "graph_evidence", "analytics", "analytics_pm"}
VOLATILE = {
    "exported_at", "created_at", "updated_at", "at", "last_accessed_at", "stated_at",
    # The trust block's times (graph/ops/kit/trust/), and the age measured from one of them.
    "last_observed_at", "unconfirmed_since", "expires_at", "observed_age_days",
    # Messages between agents (messaging/): a lease's end, and the random message ids.
    "lease_expires_at", "message_id",
}  # fmt: skip
HOST_STAMP = "<transport>"
BINDING = {"project", "all_projects"}  # of a read's `scope`: the transport's binding
PROJECT = "myapp"  # the project of the MCP and CLI working directory (a repo without origin)
DEADLINE = 180


def test_every_operation_takes_part() -> None:
    assert sorted(ORDER) == sorted(set(OPERATIONS) - {"why"})  # why: tests/e2e/test_why_*


def calls() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in ORDER:
        out += [(name, dict(example)) for example in OPERATIONS[name].examples]
    # One invalid call each: a field no operation has.
    out += [(name, {"no_such_field": 1}) for name in ORDER]
    return out


def normalise(value: Any) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in VOLATILE:
                continue
            if key in ("source_host", "host_kind"):  # a registration's host: the transport
                out[key] = HOST_STAMP
            elif key == "scope" and isinstance(item, dict):
                out[key] = {k: v for k, v in item.items() if k not in BINDING}
            elif key == "agent" and isinstance(item, dict):
                # ping's caller: its project is the transport's binding too.
                out[key] = normalise({k: v for k, v in item.items() if k != "project"})
            else:
                out[key] = normalise(item)
        return out
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def outcome(ok: bool, payload: Any) -> dict[str, Any]:
    """Success data, or just the errorCode: messages may be worded per transport."""
    return {"data": normalise(payload)} if ok else {"errorCode": payload}


class Backend:
    """The database each transport's fresh home runs on: SQLite in the home, or a fresh
    PostgreSQL database of its own (MEMESH_DATABASE_URL), the same one for every process
    of that home."""

    def __init__(self, server: PostgresServer | None) -> None:
        self.server = server
        self.urls: dict[Path, str] = {}

    def env(self, home: Path) -> dict[str, str]:
        extra = {"MEMESH_EMBEDDER": "none", "MEMESH_WORKER": "false"}
        if self.server is not None:
            if home not in self.urls:
                self.urls[home] = self.server.url(self.server.fresh_database())
            extra["MEMESH_DATABASE_URL"] = self.urls[home]
        return memesh_env(home, **extra)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "sqlite":
        return Backend(None)
    return Backend(request.getfixturevalue("postgres_server"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where MCP and the CLI run: a git repository without a remote, so its project is its
    folder's name, PROJECT."""
    repo = tmp_path_factory.mktemp("contract-repo") / PROJECT
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, capture_output=True, timeout=60)
    assert project_id(repo) == PROJECT
    return repo


# --- REST ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest_base(tmp_path_factory: pytest.TempPathFactory, backend: Backend) -> Iterator[str]:
    home = tmp_path_factory.mktemp("contract-rest")
    log = home / "serve.log"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker"),
            cwd=ROOT, env=backend.env(home), stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_healthy(proc, base, log)
        yield base
    finally:
        stop(proc)


def rest_call(base: str, name: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    op = OPERATIONS[name]
    if not op.rest:
        return None
    url = f"{base}/v1/{op.rest_route}"
    if op.method == "GET":
        params = {k: ",".join(v) if isinstance(v, list) else v for k, v in payload.items()}
        response = httpx.get(url, params=params, timeout=30)
    else:
        response = httpx.post(url, json=payload, timeout=30)
    body = response.json()
    if not body["success"] and op.method == "GET" and body["errorCode"] == "validation.bad-param":
        # The reference's one transport-specific code: input from a query string is a bad
        # parameter, not a bad body. The same failure, so compared as the body's code.
        return outcome(False, "validation.bad-body")
    return outcome(body["success"], body["data"] if body["success"] else body["errorCode"])


# --- MCP -------------------------------------------------------------------------------------


def mcp_outcomes(backend: Backend, home: Path, workdir: Path) -> list[dict[str, Any] | None]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp"],
        env=backend.env(home),
        cwd=str(workdir),
    )
    results: list[dict[str, Any] | None] = []

    async def session() -> None:
        with anyio.fail_after(DEADLINE):
            async with Client(params, client_info=mcp_checks.client_info()) as client:
                for name, payload in calls():
                    if not OPERATIONS[name].tool:
                        results.append(None)
                        continue
                    result = await client.call_tool(name, payload)
                    text = mcp_checks.text_of(result)
                    if result.is_error:
                        results.append(outcome(False, json.loads(text)["errorCode"]))
                    elif name == "user_patterns":
                        results.append(outcome(True, {"markdown": text}))
                    else:
                        results.append(outcome(True, json.loads(text)))

    anyio.run(session)
    return results


# --- CLI -------------------------------------------------------------------------------------


def cli_call(
    backend: Backend, home: Path, workdir: Path, name: str, payload: dict[str, Any]
) -> dict[str, Any] | None:
    if name in NO_CLI:
        return None
    if name == "export":
        args = ["export", *(a for k, v in payload.items() for a in ("--" + k, str(v)))]
    elif name == "import":
        bundle = home / "bundle.json"
        bundle.write_text(json.dumps(payload.get("data", {})))
        args = ["import", str(bundle), "--json"]
        if "merge_strategy" in payload:
            args += ["--merge", payload["merge_strategy"]]
        if "namespace" in payload:
            args += ["--namespace", payload["namespace"]]
        if set(payload) - {"data", "merge_strategy", "namespace"}:
            args += ["--no-such-field"]  # the invalid call: an unknown flag
    else:
        args = [*CLI_COMMAND.get(name, [name]), "--input", json.dumps(payload), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "memesh_site.cli", *args],
        cwd=workdir, env=backend.env(home), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if done.returncode == 0:
        data = json.loads(done.stdout)
        return outcome(True, data)
    try:
        # --json failures: the envelope as the last line of stderr; stdout stays empty.
        error = json.loads(done.stderr.strip().splitlines()[-1])
        assert done.stdout == "", done.stdout
        return outcome(False, error["errorCode"])
    except (json.JSONDecodeError, KeyError, IndexError):
        # argparse refuses an unknown flag before any operation runs: a bad request too.
        assert done.returncode in (1, 2), done.stderr
        return outcome(False, "validation.bad-body")


def cli_outcomes(backend: Backend, home: Path, workdir: Path) -> list[dict[str, Any] | None]:
    subprocess.run(
        [sys.executable, "-m", "memesh_site.cli", "migrate", "-v", "0"],
        cwd=ROOT, env=backend.env(home), check=True, timeout=120,
    )  # fmt: skip
    return [cli_call(backend, home, workdir, name, payload) for name, payload in calls()]


# --- the contract ---------------------------------------------------------------------------


def test_rest_mcp_and_cli_give_the_same_data_and_error_codes(
    rest_base: str, backend: Backend, workdir: Path, tmp_path: Path
) -> None:
    rest = [rest_call(rest_base, name, payload) for name, payload in calls()]
    mcp = mcp_outcomes(backend, tmp_path / "mcp", workdir)
    cli = cli_outcomes(backend, tmp_path / "cli", workdir)

    for (name, payload), via_rest, via_mcp, via_cli in zip(calls(), rest, mcp, cli, strict=True):
        where = f"{name} {json.dumps(payload)[:80]}"
        if name == "user_patterns" and via_cli is not None and "data" in via_cli:
            # MCP's markdown is the CLI's rendering of the same JSON.
            from graph.ops.user_patterns import UserPatternsOutput, render_markdown

            # Both are bound to PROJECT: put back the binding the normalisation took out.
            bound = {"project": PROJECT, "all_projects": False}
            data = {**via_cli["data"], "scope": {**via_cli["data"]["scope"], **bound}}
            rendered = render_markdown(UserPatternsOutput.model_validate(data))
            assert via_mcp == {"data": {"markdown": rendered}}, where
            via_mcp = via_cli
        if name == "projects" and via_mcp is not None and "data" in via_mcp:
            # MCP wraps REST's bare list: a tool's result is an object.
            via_mcp = {"data": via_mcp["data"]["projects"]}
        answers = [a for a in (via_rest, via_mcp, via_cli) if a is not None]
        assert answers, where
        assert all(a == answers[0] for a in answers), (where, via_rest, via_mcp, via_cli)
        if payload != {"no_such_field": 1}:
            assert "data" in answers[0], (where, answers[0])
    # The invalid calls really failed everywhere, with the schema's code.
    for outcomes in (rest, mcp, cli):
        invalid = [o for o in outcomes[-len(ORDER) :] if o is not None]
        assert invalid and all(o == {"errorCode": "validation.bad-body"} for o in invalid)
    # The binding normalised away above: REST names no project, MCP and the CLI are in one.
    query = {"query": "vitest"}  # the second learn example's lesson, filed under PROJECT
    rest_scope = httpx.post(f"{rest_base}/v1/recall", json=query, timeout=30).json()["data"]
    cli_scope = json.loads(
        subprocess.run(
            [sys.executable, "-m", "memesh_site.cli", "recall", "--input", json.dumps(query),
             "--json"],
            cwd=workdir, env=backend.env(tmp_path / "cli"), capture_output=True, text=True,
            timeout=120,
        ).stdout
    )  # fmt: skip
    assert {k: rest_scope["scope"][k] for k in BINDING} == {"project": None, "all_projects": True}
    assert {k: cli_scope["scope"][k] for k in BINDING} == {
        "project": PROJECT,
        "all_projects": False,
    }
    assert [e["name"] for e in rest_scope["entities"]] == [e["name"] for e in cli_scope["entities"]]
    rest_ping = httpx.post(f"{rest_base}/v1/ping", json={}, timeout=30).json()["data"]
    cli_ping = json.loads(
        subprocess.run(
            [sys.executable, "-m", "memesh_site.cli", "ping", "--json"],
            cwd=workdir, env=backend.env(tmp_path / "cli"), capture_output=True, text=True,
            timeout=120,
        ).stdout
    )  # fmt: skip
    # ping's agent.project is where the caller's writes go: REST's, the server's directory's.
    assert (rest_ping["agent"]["project"], cli_ping["agent"]["project"]) == (
        project_id(ROOT),
        PROJECT,
    )
