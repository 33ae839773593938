"""The Claude Code plugin shipped with memesh, and the `memesh` command hosts are given.

The plugin (integrations/claude-code/: `.claude-plugin/plugin.json`, `.mcp.json`,
`hooks/hooks.json`) is the one definition of what a host runs: `memesh setup` renders every
host's hooks and MCP server from its two files, so a hook added there reaches every host.
The plugin itself says `memesh` (a plugin is copied into Claude Code's cache, so it cannot
know where memesh is installed); what `memesh setup` writes names the entry point by its
absolute path instead (`memesh_command`).

The files are read from hosts/integrations/claude-code/: in a checkout (and an editable
install) hosts/integrations is a symlink to integrations/, and a wheel carries the files
there as package data (pyproject.toml, [tool.setuptools.package-data]).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import MemeshError
from core.hook_hosts import HOST_OPTION

PLUGIN_NAME = "memesh"
SERVER_NAME = "memesh"  # the MCP server's name in every host's configuration
ENTRY_POINT = "memesh.exe" if os.name == "nt" else "memesh"
ENTRY_POINT_NAMES = frozenset({"memesh", "memesh.exe"})


class MemeshCommandNotFound(MemeshError):
    error_code = "setup.no-memesh-command"
    http_status = 400


def plugin_dir() -> Path:
    """The Claude Code plugin's folder."""
    return Path(__file__).resolve().parent.parent / "integrations" / "claude-code"


def _plugin_json(relative: str) -> dict[str, Any]:
    loaded = json.loads((plugin_dir() / relative).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict), relative
    return loaded


@dataclass(frozen=True)
class HookSpec:
    """One hook of the plugin: `memesh hook <subcommand>` on `event` (for tools matching
    `matcher`, on the tool events); with `host`, `--host <host>` after it, which stamps what
    the hook stores as that host's (core/hook_hosts.py; the plugin's own hooks are Claude
    Code's and name none)."""

    event: str
    matcher: str | None
    subcommand: str
    timeout: int | None
    host: str | None = None

    def handler(self, command: str) -> dict[str, Any]:
        """The hook handler as settings files hold it, running `command` (the memesh entry
        point, quoted for the shell the host runs it in)."""
        handler: dict[str, Any] = {
            "type": "command",
            "command": f"{shlex.quote(command)} hook {self.subcommand}",
        }
        if self.host is not None:
            handler["command"] += f" {HOST_OPTION} {self.host}"
        if self.timeout is not None:
            handler["timeout"] = self.timeout
        return handler

    def group(self, command: str) -> dict[str, Any]:
        """A matcher group holding this hook alone (the shape of a settings file's
        `hooks.<event>` list items)."""
        group: dict[str, Any] = {} if self.matcher is None else {"matcher": self.matcher}
        group["hooks"] = [self.handler(command)]
        return group


def hook_specs() -> list[HookSpec]:
    """The plugin's hooks (hooks/hooks.json), in file order."""
    specs = []
    for event, groups in _plugin_json("hooks/hooks.json")["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                argv = shlex.split(handler["command"])
                assert argv[:2] == ["memesh", "hook"] and len(argv) == 3, handler
                specs.append(HookSpec(event, group.get("matcher"), argv[2], handler.get("timeout")))
    return specs


def mcp_server(command: str) -> dict[str, Any]:
    """The plugin's MCP server (.mcp.json), started by `command` instead of a bare `memesh`."""
    server = dict(_plugin_json(".mcp.json")["mcpServers"][SERVER_NAME])
    assert server["command"] == "memesh", server
    server["command"] = command
    return server


def memesh_command() -> str:
    """The absolute path of the `memesh` entry point hosts should run: the one installed beside
    this interpreter (a virtualenv's bin/, pipx's, the system's), else the one on PATH.

    Absolute, not a bare `memesh`: a host started from a desktop launcher does not get the
    shell's PATH, a bare name can find another installation (another version, another
    default database) first, and `memesh doctor` can only check a path it is given."""
    beside = Path(sys.executable).parent / ENTRY_POINT
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("memesh")
    if found:
        return str(Path(found).absolute())
    raise MemeshCommandNotFound(
        f"No `memesh` command beside {sys.executable} nor on PATH: install memesh "
        "(pip install -e . in the checkout) and run `memesh setup` with it"
    )


def memesh_hook_argv(command: object) -> list[str] | None:
    """The words of a hook command that runs `memesh hook ...` (of this installation or any
    other), else None: what marks a hook handler as memesh's."""
    if not isinstance(command, str):
        return None
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if len(argv) >= 2 and Path(argv[0]).name in ENTRY_POINT_NAMES and argv[1] == "hook":
        return argv
    return None


def is_this_memesh(executable: str) -> bool:
    """Whether `executable` (a path, or a bare name looked up on PATH) is the entry point of
    the memesh running now."""
    found = executable if os.sep in executable else shutil.which(executable)
    if not found or not Path(found).is_file():
        return False
    try:
        mine = memesh_command()
    except MemeshCommandNotFound:
        return False
    return os.path.realpath(found) == os.path.realpath(mine)
