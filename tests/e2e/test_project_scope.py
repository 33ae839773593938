"""Two projects end to end: two real git repositories (`git init`, different `origin` remotes)
sharing one MEMESH_HOME, each worked in through the real transports — `memesh mcp` over stdio
with the official SDK client started in each repository, the `memesh` CLI run from each, and
one `memesh serve` on loopback. Each project's reads see its own memories, those with no
project and global ones, never the other's; `cross_project` sees all; over MCP a name the
other project holds is refused and a plain-name project tag is retagged; the briefing and
export follow the same scope."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from graph.project import project_id
from tests import mcp_checks
from tests.processes import memesh, memesh_env, serving

pytestmark = pytest.mark.slow  # two MCP servers, three CLI runs and a server

DEADLINE = 120
ALPHA = "acme/alpha"
BETA = "acme/beta"


def git_repo(path: Path, origin: str) -> Path:
    path.mkdir()
    for args in (["init", "-q"], ["remote", "add", "origin", origin]):
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, timeout=60)
    return path


SETTINGS = {"MEMESH_EMBEDDER": "none", "MEMESH_WORKER": "false"}


def env(home: Path) -> dict[str, str]:
    return memesh_env(home, **SETTINGS)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, the JSON answer) of one tool call."""
    result = await client.call_tool(tool, arguments)
    return bool(result.is_error), json.loads(mcp_checks.text_of(result))


def mcp_session(repo: Path, home: Path, steps: Any) -> Any:
    """Run `steps(client)` against `memesh mcp` started in `repo`; its return value."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp"],
        env=env(home),
        cwd=str(repo),
    )
    out: list[Any] = []

    async def session() -> None:
        with anyio.fail_after(DEADLINE):
            async with Client(params, client_info=mcp_checks.client_info()) as client:
                out.append(await steps(client))

    anyio.run(session)
    return out[0]


def cli(repo: Path, home: Path, *args: str) -> Any:
    done = subprocess.run(
        memesh(*args), cwd=repo, env=env(home), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def names(answer: dict[str, Any]) -> list[str]:
    return sorted(e["name"] for e in answer["entities"])


def test_two_repositories_keep_their_memories_apart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    alpha = git_repo(tmp_path / "alpha", "git@github.com:acme/alpha.git")
    beta = git_repo(tmp_path / "beta", "https://github.com/acme/beta.git")
    assert (project_id(alpha), project_id(beta)) == (ALPHA, BETA)

    # --- alpha's agent, over MCP --------------------------------------------------------------
    async def in_alpha(client: Client) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        _, seen["filed"] = await call(
            client,
            "remember",
            {"name": "alpha-deploy", "type": "note", "observations": ["deploy alpha by tag"]},
        )
        await call(
            client,
            "remember",
            {
                "name": "deploy-habits",
                "type": "note",
                "observations": ["deploy on weekdays only"],
                "project": False,
            },
        )
        await call(
            client,
            "remember",
            {
                "name": "deploy-policy",
                "type": "note",
                "observations": ["every deploy needs a rollback plan"],
                "namespace": "global",
            },
        )
        _, seen["retagged"] = await call(
            client,
            "remember",
            {
                "name": "alpha-ci",
                "type": "note",
                "observations": ["deploy jobs run on CI"],
                "tags": ["project:alpha"],
            },
        )
        _, seen["learned"] = await call(
            client, "learn", {"error": "deploy timed out", "fix": "raised the timeout"}
        )
        return seen

    seen = mcp_session(alpha, home, in_alpha)
    assert seen["filed"]["project"] == ALPHA
    assert seen["retagged"]["retagged"] == [{"from": "project:alpha", "to": f"project:{ALPHA}"}]
    alpha_own = ["alpha-ci", "alpha-deploy", seen["learned"]["name"]]
    shared = ["deploy-habits", "deploy-policy"]  # no project; global (filed under alpha)

    # --- beta's agent, over MCP ---------------------------------------------------------------
    async def in_beta(client: Client) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        await call(
            client,
            "remember",
            {"name": "beta-deploy", "type": "note", "observations": ["deploy beta with helm"]},
        )
        seen["clash"] = await call(
            client,
            "remember",
            {"name": "alpha-deploy", "type": "note", "observations": ["beta's own steps"]},
        )
        _, seen["recall"] = await call(client, "recall", {"query": "deploy"})
        _, seen["listing"] = await call(client, "recall", {})
        _, seen["all"] = await call(client, "recall", {"query": "deploy", "cross_project": True})
        _, seen["briefing"] = await call(client, "briefing", {})
        _, seen["export"] = await call(client, "export", {})
        _, seen["export_all"] = await call(client, "export", {"cross_project": True})
        return seen

    seen = mcp_session(beta, home, in_beta)
    is_error, clash = seen["clash"]
    assert is_error and clash["errorCode"] == "resource.name-in-other-project"
    assert names(seen["recall"]) == sorted(["beta-deploy", *shared])
    assert names(seen["listing"]) == sorted(["beta-deploy", *shared])
    assert seen["recall"]["scope"] == {
        "project": BETA,
        "all_projects": False,
        "no_project": True,
        "global": True,
    }
    assert names(seen["all"]) == sorted([*alpha_own, "beta-deploy", *shared])
    assert seen["all"]["scope"]["all_projects"] is True
    briefing = seen["briefing"]
    assert briefing["project"] == BETA and briefing["scope"]["project"] == BETA
    assert "deploy beta with helm" in briefing["text"] or "beta-deploy" in briefing["text"]
    assert "alpha" not in briefing["text"]
    assert names(seen["export"]) == sorted(["beta-deploy", *shared])
    assert seen["export"]["scope"]["project"] == BETA
    assert names(seen["export_all"]) == sorted([*alpha_own, "beta-deploy", *shared])
    # alpha's memory was not appended to by beta's refused call.
    assert "beta's own steps" not in json.dumps(seen["export_all"])

    # --- the CLI in each repository ----------------------------------------------------------
    in_alpha_cli = cli(alpha, home, "recall", "deploy", "--json")
    assert names(in_alpha_cli) == sorted([*alpha_own, *shared])
    assert in_alpha_cli["scope"]["project"] == ALPHA
    assert names(cli(beta, home, "recall", "deploy", "--cross-project", "--json")) == names(
        seen["all"]
    )
    bundle = cli(alpha, home, "export")
    assert names(bundle) == sorted([*alpha_own, *shared]) and bundle["scope"]["project"] == ALPHA
    assert "beta" not in cli(alpha, home, "briefing", "--json")["text"]

    # --- REST: one server for every repository ------------------------------------------------
    with serving(home, tmp_path / "serve.log", "--no-worker", **SETTINGS) as base:

        def post(route: str, body: dict[str, Any]) -> Any:
            answer = httpx.post(f"{base}/v1/{route}", json=body, timeout=30).json()
            assert answer["success"], answer
            return answer["data"]

        unbound = post("recall", {"query": "deploy"})
        assert names(unbound) == names(seen["all"])
        assert unbound["scope"]["project"] is None and unbound["scope"]["all_projects"]
        in_beta_rest = post("recall", {"query": "deploy", "project": BETA})
        assert names(in_beta_rest) == sorted(["beta-deploy", *shared])
        tagged = post("recall", {"query": "deploy", "tag": f"project:{ALPHA}"})
        assert names(tagged) == sorted([*alpha_own, "deploy-policy"])
        assert names(post("export", {"project": ALPHA})) == sorted([*alpha_own, *shared])
        patterns = httpx.get(
            f"{base}/v1/patterns",
            params={"project": BETA, "categories": "focusAreas"},
            timeout=30,
        ).json()["data"]
        assert patterns["scope"]["project"] == BETA
        assert patterns["focusAreas"] == [{"type": "note", "count": 3}]
        everything = httpx.get(
            f"{base}/v1/patterns",
            params={"project": BETA, "cross_project": "true", "categories": "focusAreas"},
            timeout=30,
        ).json()["data"]
        assert everything["scope"]["all_projects"] is True
