"""Adding and removing memesh's entries in a host's parsed configuration; everything else in
the document stays as it was, in its order.

What is memesh's:
- a hook handler whose command runs `memesh hook ...`, whichever memesh installation it names
  (a stale path left by a moved virtualenv is replaced, not run beside the new one). The
  command is the marker because the settings files take no key of memesh's own: Claude Code
  validates its settings and reports unknown fields;
- the MCP server named `memesh`.

Hooks live as Claude Code documents them, and Codex's hooks.json has the same shape:
`{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", ...}]}]}}`. memesh
adds one matcher group per hook, at the end of its event's list, so the user's groups are
never edited; removing memesh drops the groups and lists that only memesh's hooks filled.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table
from tomlkit.toml_document import TOMLDocument

from hosts import original
from hosts.documents import HostConfigInvalid
from hosts.plugin import PLUGIN_NAME, SERVER_NAME, HookSpec, memesh_hook_argv

HookEntry = tuple[str, str | None, str]  # (event, matcher, the handler as canonical JSON)


def _entry(event: str, group: dict[str, Any], handler: dict[str, Any]) -> HookEntry:
    return event, group.get("matcher"), json.dumps(handler, sort_keys=True)


def check_hooks_shape(path: Path, document: dict[str, Any]) -> None:
    """Refuse a `hooks` value memesh cannot edit without guessing."""
    hooks = document.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise HostConfigInvalid(f'{path}: "hooks" is not an object')
    for event, groups in hooks.items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise HostConfigInvalid(f'{path}: "hooks.{event}" is not a list of objects')
        for group in groups:
            handlers = group.get("hooks", [])
            if not isinstance(handlers, list) or not all(isinstance(h, dict) for h in handlers):
                raise HostConfigInvalid(
                    f'{path}: a "hooks.{event}" group\'s "hooks" is not a list of objects'
                )


def is_memesh_handler(handler: object) -> bool:
    return isinstance(handler, dict) and memesh_hook_argv(handler.get("command")) is not None


def memesh_hooks(document: dict[str, Any]) -> list[HookEntry]:
    """memesh's hook handlers in `document` (of a shape `check_hooks_shape` accepted)."""
    found = []
    for event, groups in (document.get("hooks") or {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                if is_memesh_handler(handler):
                    found.append(_entry(event, group, handler))
    return found


def memesh_hook_calls(document: dict[str, Any]) -> list[tuple[str, str | None, str, str]]:
    """(event, matcher, executable, subcommand) of each of memesh's hook handlers."""
    calls = []
    for event, groups in (document.get("hooks") or {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                argv = memesh_hook_argv(handler.get("command"))
                if argv is not None:
                    subcommand = argv[2] if len(argv) > 2 else ""
                    calls.append((event, group.get("matcher"), argv[0], subcommand))
    return calls


def wanted_hooks(specs: list[HookSpec], command: str) -> list[HookEntry]:
    entries = []
    for spec in specs:
        group = spec.group(command)
        entries.append(_entry(spec.event, group, group["hooks"][0]))
    return entries


def without_memesh_hooks(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of `document` without memesh's hook handlers; a group, an event's list or the
    `hooks` object that only memesh's handlers filled goes too."""
    result = copy.deepcopy(document)
    hooks = result.get("hooks")
    if not hooks:
        return result
    removed_any = False
    for event in list(hooks):
        groups = hooks[event]
        kept_groups = []
        removed_here = False
        for group in groups:
            handlers = group.get("hooks", [])
            kept = [h for h in handlers if not is_memesh_handler(h)]
            if len(kept) == len(handlers):
                kept_groups.append(group)
                continue
            removed_here = True
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if removed_here:
            removed_any = True
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
    if removed_any and not hooks:
        del result["hooks"]
    return result


def with_memesh_hooks(
    document: dict[str, Any], specs: list[HookSpec], command: str
) -> dict[str, Any]:
    """`document` with exactly memesh's hooks, running `command`: unchanged (the same object)
    when they are all there already, else with any stale memesh handler replaced."""
    if sorted(memesh_hooks(document)) == sorted(wanted_hooks(specs, command)):
        return document
    result = without_memesh_hooks(document)
    hooks = result.setdefault("hooks", {})
    for spec in specs:
        hooks.setdefault(spec.event, []).append(spec.group(command))
    return result


def enabled_plugins(settings: dict[str, Any]) -> list[str]:
    """The memesh plugins a Claude Code settings file enables (`"memesh@<marketplace>": true`
    under `enabledPlugins`): their hooks run beside any in the settings."""
    enabled = settings.get("enabledPlugins")
    if not isinstance(enabled, dict):
        return []
    return [
        key
        for key, on in enabled.items()
        # The original MeMesh's plugin shares the name: it is not memesh's (hosts/original.py).
        if on is True and key.split("@")[0] == PLUGIN_NAME and not original.is_original_plugin(key)
    ]


# --- the MCP server in a JSON file: {"mcpServers": {"memesh": {...}}} ------------------------


def check_servers_shape(path: Path, document: dict[str, Any]) -> None:
    servers = document.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise HostConfigInvalid(f'{path}: "mcpServers" is not an object')


def json_server(document: dict[str, Any]) -> dict[str, Any] | None:
    """memesh's MCP server entry, if the document has one."""
    entry = (document.get("mcpServers") or {}).get(SERVER_NAME)
    # The original MeMesh registers its server under the same name (hosts/original.py).
    return entry if isinstance(entry, dict) and not original.is_original_server(entry) else None


def with_json_server(document: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """`document` with memesh's server set to `server`; keys the user added to that entry
    (an `env`, a timeout) stay. The same object when nothing changes."""
    existing = json_server(document)
    merged = {**(existing or {}), **server}
    if merged == existing:
        return document
    result = copy.deepcopy(document)
    result.setdefault("mcpServers", {})[SERVER_NAME] = merged
    return result


def without_json_server(document: dict[str, Any]) -> dict[str, Any]:
    if json_server(document) is None:  # none, or the original MeMesh's: not memesh's to remove
        return document
    result = copy.deepcopy(document)
    del result["mcpServers"][SERVER_NAME]
    if not result["mcpServers"]:
        del result["mcpServers"]
    return result


# --- the MCP server in Codex's config.toml: [mcp_servers.memesh] ------------------------------


def _toml_servers(path: Path, document: TOMLDocument) -> Table | None:
    servers = document.get("mcp_servers")
    if servers is not None and not isinstance(servers, Table):
        raise HostConfigInvalid(f"{path}: mcp_servers is not a table")
    return servers


def toml_server(path: Path, document: TOMLDocument) -> dict[str, Any] | None:
    servers = _toml_servers(path, document)
    entry = servers.get(SERVER_NAME) if servers is not None else None
    if entry is not None and not isinstance(entry, Table):
        raise HostConfigInvalid(f"{path}: mcp_servers.{SERVER_NAME} is not a table")
    unwrapped = entry.unwrap() if entry is not None else None
    # The original MeMesh's server under the same name is not memesh's (hosts/original.py).
    return None if original.is_original_server(unwrapped) else unwrapped


def set_toml_server(path: Path, document: TOMLDocument, server: dict[str, Any]) -> None:
    """Set memesh's server's keys to `server` in place; its other keys stay."""
    servers = _toml_servers(path, document)
    if servers is None:
        # A super table: the file gains `[mcp_servers.memesh]`, not an empty `[mcp_servers]`.
        servers = tomlkit.table(is_super_table=True)
        document["mcp_servers"] = servers
    entry = servers.get(SERVER_NAME)
    original.refuse_replacing(path, entry.unwrap() if entry is not None else None, SERVER_NAME)
    if entry is not None:
        for key, value in server.items():
            entry[key] = value
        return
    entry = tomlkit.table()
    for key, value in server.items():
        entry[key] = value
    entry.add(tomlkit.nl())  # a blank line before whatever table follows
    servers[SERVER_NAME] = entry


def with_env_vars(path: Path, current: dict[str, Any] | None, names: list[str]) -> list[str]:
    """Codex's `env_vars` for memesh's server (the variables Codex passes through from its own
    environment, beside its whitelist): the names already there, the user's own included, then
    those of `names` not among them — so a second setup changes nothing."""
    existing = (current or {}).get("env_vars", [])
    if not isinstance(existing, list) or not all(isinstance(n, str) for n in existing):
        raise HostConfigInvalid(
            f"{path}: mcp_servers.{SERVER_NAME}.env_vars is not a list of names"
        )
    return existing + [name for name in names if name not in existing]


def remove_toml_server(path: Path, document: TOMLDocument) -> None:
    servers = _toml_servers(path, document)
    if servers is None or toml_server(path, document) is None:
        return  # none, or the original MeMesh's: not memesh's to remove
    del servers[SERVER_NAME]
    if not servers:
        del document["mcp_servers"]


def codex_hooks_off(document: TOMLDocument) -> bool:
    """Whether Codex's config.toml switches hooks off: `[features] hooks = false`, or its
    older name `codex_hooks`."""
    features = document.get("features")
    if not isinstance(features, dict):
        return False
    return features.get("hooks") is False or features.get("codex_hooks") is False
