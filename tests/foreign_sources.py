"""Files written by the real programs memesh imports from: the original MeMesh 4.6 (its own
CLI, tests/original_memesh.py) and the official MCP memory server (npm
`@modelcontextprotocol/server-memory` at a pinned version, installed by tests/hosts.py and
driven over stdio with the official `mcp` client)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.hosts import npm_host_command
from tests.original_memesh import DB_RELATIVE, original_cli

MCP_MEMORY = ("@modelcontextprotocol/server-memory", "2026.8.31")


def memesh4_home(home: Path) -> Path:
    """An original MeMesh home holding titles, tags, a project, relations (supersedes,
    contradicts), an archived memory, a team namespace and a task state; its database."""
    home.mkdir(parents=True, exist_ok=True)
    peer = original_cli
    # fmt: off
    peer(home, "remember", "--name", "auth-old", "--type", "decision", "--title", "Old auth",
         "--obs", "Use sessions", "Cookies stored server-side", "--tags", "project:webapp", "auth")
    peer(home, "remember", "--name", "auth-new", "--type", "decision", "--title", "JWT auth",
         "--obs", "Use JWT tokens", "Rotate keys monthly", "--tags", "project:webapp", "auth",
         "--supersedes", "auth-old")
    peer(home, "remember", "--name", "cache-policy", "--type", "pattern",
         "--obs", "Cache for 5 minutes", "--contradicts", "auth-new", "--namespace", "team")
    peer(home, "remember", "--name", "old-note", "--type", "note", "--obs", "Soon archived")
    peer(home, "forget", "--name", "old-note")
    peer(home, "task", "--project", "webapp", "--goal", "Ship auth", "--next", "Write tests")
    # fmt: on
    return home / DB_RELATIVE


async def _drive_memory_server(command: Path, memory_file: Path, calls: list[Any]) -> None:
    params = StdioServerParameters(
        command=str(command), env={**os.environ, "MEMORY_FILE_PATH": str(memory_file)}
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, arguments in calls:
            result = await session.call_tool(name, arguments)
            assert not getattr(result, "isError", False), result


def mcp_memory_file(memory_file: Path, calls: list[tuple[str, dict[str, Any]]]) -> Path:
    """`memory_file` as the official MCP memory server writes it after `calls` (its tools:
    create_entities, create_relations, add_observations...)."""
    command = npm_host_command(*MCP_MEMORY, "mcp-server-memory")
    asyncio.run(asyncio.wait_for(_drive_memory_server(command, memory_file, calls), 120))
    assert memory_file.exists()
    return memory_file


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
