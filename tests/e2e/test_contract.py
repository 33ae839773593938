"""One operation, three transports: every operation's registry examples (and one invalid call
each) run through REST on a real `memesh serve`, MCP over stdio with the official SDK client,
and the `memesh` CLI with --json — each on a fresh database, in the same order — and must give
the same data, and the same errorCode for the failures.

What legitimately differs is normalised away, and nothing else: times, the provenance stamp
each transport writes (http, the MCP client's name, cli), and REST's `validation.bad-param` for
bad input on a GET route's query string (the reference's code for parameters). user_patterns
answers MCP in markdown (the reference's MCP form), so its MCP text is compared with the CLI's
markdown.
Operations without a REST route in the reference (task_state, briefing, pin, unpin) are
compared between MCP and the CLI.
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

from graph.ops.registry import OPERATIONS
from tests import mcp_checks
from tests.processes import ROOT, free_port, memesh, memesh_env, stop, wait_until_healthy

pytestmark = pytest.mark.slow  # three processes' worth of calls

# The order the examples run in: writes the later reads can see, forget last.
ORDER = [
    "remember", "recall", "feedback", "learn", "task_state", "briefing", "export", "import",
    "user_patterns", "pin", "unpin", "observe", "memory_list", "ping", "supersede", "forget",
]  # fmt: skip
CLI_COMMAND = {"task_state": "task", "user_patterns": "patterns", "memory_list": "memories"}
VOLATILE = {
    "exported_at", "created_at", "updated_at", "at", "last_accessed_at", "stated_at",
    # The trust block's times (graph/ops/trust/), and the age measured from one of them.
    "last_observed_at", "unconfirmed_since", "expires_at", "observed_age_days",
}  # fmt: skip
HOST_STAMP = "<transport>"
DEADLINE = 180


def calls() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name in ORDER:
        out += [(name, dict(example)) for example in OPERATIONS[name].examples]
    # One invalid call each: a field no operation has.
    out += [(name, {"no_such_field": 1}) for name in ORDER]
    return out


def normalise(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in VOLATILE:
                continue
            if key == "source_host":
                out[key] = HOST_STAMP
            else:
                out[key] = normalise(item)
        return out
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def outcome(ok: bool, payload: Any) -> dict[str, Any]:
    """Success data, or just the errorCode: messages may be worded per transport."""
    return {"data": normalise(payload)} if ok else {"errorCode": payload}


def env(home: Path) -> dict[str, str]:
    return memesh_env(home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false")


# --- REST ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rest_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("contract-rest")
    log = home / "serve.log"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker"),
            cwd=ROOT, env=env(home), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
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


def mcp_outcomes(home: Path) -> list[dict[str, Any]]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memesh_site.cli", "mcp"], env=env(home), cwd=str(ROOT)
    )
    results: list[dict[str, Any]] = []

    async def session() -> None:
        with anyio.fail_after(DEADLINE):
            async with Client(params, client_info=mcp_checks.client_info()) as client:
                for name, payload in calls():
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


def cli_call(home: Path, name: str, payload: dict[str, Any]) -> dict[str, Any]:
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
        args = [CLI_COMMAND.get(name, name), "--input", json.dumps(payload), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "memesh_site.cli", *args],
        cwd=ROOT, env=env(home), capture_output=True, text=True, timeout=120,
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


def cli_outcomes(home: Path) -> list[dict[str, Any]]:
    subprocess.run(
        [sys.executable, "-m", "memesh_site.cli", "migrate", "-v", "0"],
        cwd=ROOT, env=env(home), check=True, timeout=120,
    )  # fmt: skip
    return [cli_call(home, name, payload) for name, payload in calls()]


# --- the contract ---------------------------------------------------------------------------


def test_rest_mcp_and_cli_give_the_same_data_and_error_codes(
    rest_base: str, tmp_path: Path
) -> None:
    rest = [rest_call(rest_base, name, payload) for name, payload in calls()]
    mcp = mcp_outcomes(tmp_path / "mcp")
    cli = cli_outcomes(tmp_path / "cli")

    for (name, payload), via_rest, via_mcp, via_cli in zip(calls(), rest, mcp, cli, strict=True):
        where = f"{name} {json.dumps(payload)[:80]}"
        if name == "user_patterns" and "data" in via_cli:
            # MCP's markdown is the CLI's rendering of the same JSON.
            from graph.ops.patterns import UserPatternsOutput, render_markdown

            rendered = render_markdown(UserPatternsOutput.model_validate(via_cli["data"]))
            assert via_mcp == {"data": {"markdown": rendered}}, where
        else:
            assert via_mcp == via_cli, where
        if via_rest is not None:
            assert via_rest == via_cli, where
    # The invalid calls really failed everywhere, with the schema's code.
    assert all(r == {"errorCode": "validation.bad-body"} for r in cli[-len(ORDER) :])
