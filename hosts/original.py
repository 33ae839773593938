"""The original MeMesh's entries in an agent host's files: recognised, reported, never edited.

The original MeMesh (4.x, TypeScript; npm `@pcircle/memesh`) wires itself into the same hosts
as memesh, under the same name: its `memesh setup` registers an MCP server called `memesh`
that runs `memesh-mcp` (`claude mcp add -s user memesh memesh-mcp`, and the same for Codex and
Gemini CLI); `memesh install-hooks` adds hook handlers to Claude Code's settings.json, each
marked `"_memesh": true` and running one of its `scripts/hooks/*.js`; and it ships as the Claude
Code plugin `memesh@pcircle-memesh`. memesh's `setup` neither removes nor overwrites any of
them, and `memesh doctor` says when both products are set up in one host
(docs/coming-from-memesh.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from core.errors import MemeshError

# The marketplace the original's Claude Code plugin is installed from (`memesh@pcircle-memesh`).
ORIGINAL_MARKETPLACE = "pcircle-memesh"
ORIGINAL_PACKAGE = "@pcircle/memesh"
# The executables of its MCP server: the npm bin, and the file it points at.
ORIGINAL_SERVER_BINS = frozenset({"memesh-mcp", "memesh-mcp.cmd"})
ORIGINAL_SERVER_SCRIPT = "dist/mcp/server.js"
# The key its install-hooks puts on each handler it adds (Claude Code ignores it).
ORIGINAL_HOOK_MARK = "_memesh"


class OriginalServerInTheWay(MemeshError):
    """The MCP server name memesh registers under is the original MeMesh's in this file."""

    error_code = "setup.original-memesh-server"
    http_status = 409


def _mentions_original(word: object) -> bool:
    if not isinstance(word, str):
        return False
    return (
        PurePath(word).name in ORIGINAL_SERVER_BINS
        or ORIGINAL_PACKAGE in word
        or ORIGINAL_MARKETPLACE in word
        or word.replace("\\", "/").endswith(ORIGINAL_SERVER_SCRIPT)
    )


def is_original_server(entry: object) -> bool:
    """Whether an MCP server entry (JSON's object, or a TOML table unwrapped) runs the
    original MeMesh."""
    if not isinstance(entry, Mapping):
        return False
    args = entry.get("args")
    words = [entry.get("command"), *(args if isinstance(args, list) else [])]
    return any(_mentions_original(word) for word in words)


def is_original_plugin(key: str) -> bool:
    """Whether an `enabledPlugins` key names the original's plugin (`memesh@pcircle-memesh`)."""
    return key.partition("@")[2] == ORIGINAL_MARKETPLACE


def is_original_hook(handler: object) -> bool:
    """Whether a hook handler is one the original's install-hooks added."""
    if not isinstance(handler, Mapping):
        return False
    return handler.get(ORIGINAL_HOOK_MARK) is True or _mentions_original(handler.get("command"))


def found_in(document: Mapping[str, Any], servers_key: str = "mcpServers") -> list[str]:
    """What of the original's a host's JSON document holds, one phrase each (none: [])."""
    found = []
    servers = document.get(servers_key)
    if isinstance(servers, Mapping) and any(is_original_server(s) for s in servers.values()):
        found.append("its MCP server")
    enabled = document.get("enabledPlugins")
    if isinstance(enabled, Mapping):
        found += [f"plugin {k}" for k, on in enabled.items() if on and is_original_plugin(k)]
    hooks = document.get("hooks")
    count = 0
    if isinstance(hooks, Mapping):
        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else []:
                handlers = group.get("hooks") if isinstance(group, Mapping) else None
                count += sum(1 for h in handlers or [] if is_original_hook(h))
    if count:
        found.append(f"{count} hook{'s' if count > 1 else ''}")
    return found


def refuse_replacing(path: Path, entry: object, name: str) -> None:
    """Raise OriginalServerInTheWay when `entry`, the server registered as `name` in `path`,
    is the original's: memesh would have to overwrite it to register its own."""
    if is_original_server(entry):
        raise OriginalServerInTheWay(
            f"{path}: the MCP server {name!r} there is the original MeMesh's, which memesh "
            "does not replace; bring its memories in (`memesh import --from memesh4 PATH`), "
            f"remove that server (the host's `mcp remove {name}`), then run this again"
        )
