"""The `briefing` level setting reaches the MCP `briefing` tool: a running `memesh mcp` renders
the configured level when the call names none, follows `memesh config set briefing` without a
restart, and a named `level` still wins."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests import mcp_checks
from tests.e2e.test_mcp_stdio import SESSION_DEADLINE, server_params
from tests.processes import memesh_env, run_python

pytestmark = pytest.mark.slow


def test_a_running_mcp_server_briefs_at_the_configured_level(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = memesh_env(home)
    set_level = ["-m", "memesh_site.cli", "config", "set", "briefing"]
    assert run_python([*set_level, "standard"], env).returncode == 0
    levels: list[str] = []

    async def session() -> None:
        with anyio.fail_after(SESSION_DEADLINE):
            async with Client(server_params(home), client_info=mcp_checks.client_info()) as client:
                for arguments in ({}, {"level": "minimal"}):
                    result = await client.call_tool("briefing", arguments)
                    levels.append(mcp_checks.json_object(result)["level"])
                # Changed from another process while this one runs.
                changed = await anyio.to_thread.run_sync(
                    lambda: run_python([*set_level, "full"], env)
                )
                assert changed.returncode == 0, changed.stderr
                result = await client.call_tool("briefing", {})
                levels.append(mcp_checks.json_object(result)["level"])

    anyio.run(session)

    assert levels == ["standard", "minimal", "full"]
    assert json.loads((home / "config.json").read_text())["briefing"] == "full"
