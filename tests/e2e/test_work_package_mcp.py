"""work_package end to end: `memesh mcp` driven by the official SDK client over stdio, the
client supplying its workspace root (roots/list on the handshake protocol, the input_required
round trip on the 2026 protocol), prepares a package from a fake Claude Code transcript folder
and submits one result; a reviewer logged in to a real `memesh serve` on the same database
then sees it pending at /review/."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests import mcp_checks
from tests.processes import ROOT, free_port, memesh, memesh_env, stop, wait_until_healthy
from tests.transcripts import PASTED_KEY, SESSION_IDS, install

pytestmark = pytest.mark.slow  # a `memesh mcp` and a `memesh serve` process

DEADLINE = 120
REVIEWER, PASSWORD = "rita", "a long enough review password"
LESSON = {
    "type": "lesson_learned",
    "name": "embedder-key-separate",
    "title": "The embedder has its own key",
    "observations": ["The embedder reads MEMESH_EMBEDDER_API_KEY before OPENAI_API_KEY."],
}


def env(home: Path, claude: Path) -> dict[str, str]:
    return memesh_env(
        home, MEMESH_EMBEDDER="none", MEMESH_WORKER="false", CLAUDE_CONFIG_DIR=str(claude)
    )


def mcp_session(
    home: Path, claude: Path, roots: list[Path], mode: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """prepare, submit and an attempt to apply, over one MCP connection."""

    async def list_roots(ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri()) for root in roots])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp"],
        env=env(home, claude),
        cwd=str(ROOT),
    )
    out: list[dict[str, Any]] = []

    async def session() -> None:
        with anyio.fail_after(DEADLINE):
            async with Client(
                params,
                list_roots_callback=list_roots,
                client_info=mcp_checks.client_info(),
                **({"mode": "legacy"} if mode == "legacy" else {}),
            ) as client:
                prepared = await client.call_tool(
                    "work_package", {"action": "prepare", "kind": "transcript"}
                )
                assert not prepared.is_error, mcp_checks.text_of(prepared)
                package = mcp_checks.json_object(prepared)["package"]
                submitted = await client.call_tool(
                    "work_package",
                    {
                        "action": "submit",
                        "package_id": package["package_id"],
                        "source_hash": package["source_hash"],
                        "workspace_hash": package["workspace_hash"],
                        "result": LESSON,
                    },
                )
                assert not submitted.is_error, mcp_checks.text_of(submitted)
                applied = await client.call_tool("work_package", {"action": "apply"})
                assert applied.is_error
                out.extend(
                    [package, mcp_checks.json_object(submitted), mcp_checks.json_object(applied)]
                )

    anyio.run(session)
    return out[0], out[1], out[2]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """A `memesh serve` on a home of its own, with a reviewer; (base URL, home, claude)."""
    home, claude = tmp_path / "home", tmp_path / "claude"
    subprocess.run(
        memesh("createreviewer", REVIEWER, "--password", PASSWORD),
        cwd=ROOT, env=env(home, claude), check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        proc = subprocess.Popen(
            memesh("serve", "--port", str(port), "--no-worker"),
            cwd=ROOT, env=env(home, claude), stdin=subprocess.DEVNULL, stdout=output,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_healthy(proc, base, log)
        yield base, home, claude
    finally:
        stop(proc)


def review_page(base: str, path: str) -> str:
    """`path` as the reviewer sees it after logging in through the login form."""
    with httpx.Client(base_url=base, timeout=30, follow_redirects=True) as web:
        login = web.get("/accounts/login/", params={"next": "/review/"})
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert token is not None, login.text[:500]
        queue = web.post(
            "/accounts/login/?next=/review/",
            data={"username": REVIEWER, "password": PASSWORD, "csrfmiddlewaretoken": token[1]},
        )
        assert queue.url.path == "/review/", queue.text[:500]
        page = web.get(path)
        assert page.status_code == 200
        return page.text


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_an_agent_prepares_a_transcript_package_over_mcp_and_a_person_sees_it_pending(
    serve: tuple[str, Path, Path], tmp_path: Path, mode: str
) -> None:
    base, home, claude = serve
    project = (tmp_path / "project").resolve()
    elsewhere = (tmp_path / "elsewhere").resolve()
    project.mkdir()
    elsewhere.mkdir()  # a root without sessions does not make the choice ambiguous
    install(claude, project, "decisions", "secret")

    package, submitted, applied = mcp_session(home, claude, [project, elsewhere], mode)

    assert package["package_id"] == f"transcript:{SESSION_IDS['secret']}:0-3"
    assert PASTED_KEY not in package["material"]
    proposal = submitted["proposal"]
    assert (proposal["kind"], proposal["status"], proposal["created"]) == (
        "memory",
        "pending",
        True,
    )
    assert applied["errorCode"] == "review.human-only"
    queue = review_page(base, "/review/")
    assert f'id="proposal-{proposal["id"]}"' in queue and "embedder-key-separate" in queue
    detail = review_page(base, proposal["review_path"])
    assert "Submitted by the agent" in detail and mcp_checks.CLIENT_NAME[:10] in detail
    assert "set the embedder key separately" in detail and PASTED_KEY not in detail


def test_a_client_with_two_matching_roots_is_refused(tmp_path: Path) -> None:
    home, claude = tmp_path / "home", tmp_path / "claude"
    one, two = (tmp_path / "one").resolve(), (tmp_path / "two").resolve()
    for root, name in ((one, "decisions"), (two, "secret")):
        root.mkdir()
        install(claude, root, name)

    async def list_roots(ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=r.as_uri()) for r in (one, two)])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memesh_site.cli", "mcp"],
        env=env(home, claude),
        cwd=str(ROOT),
    )
    codes: list[str] = []

    async def session() -> None:
        with anyio.fail_after(DEADLINE):
            async with Client(params, mode="legacy", list_roots_callback=list_roots) as client:
                result = await client.call_tool(
                    "work_package", {"action": "prepare", "kind": "transcript"}
                )
                assert result.is_error
                codes.append(mcp_checks.json_object(result)["errorCode"])
            async with Client(params, mode="legacy") as client:  # no roots capability at all
                result = await client.call_tool(
                    "work_package", {"action": "prepare", "kind": "transcript"}
                )
                codes.append(mcp_checks.json_object(result)["errorCode"])

    anyio.run(session)
    assert codes == ["work_package.ambiguous-workspace-root", "work_package.no-workspace-root"]
