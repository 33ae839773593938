"""Which files each host reads, and the install or uninstall plan for them (`memesh setup`).

| host | scope | hooks | MCP server |
| --- | --- | --- | --- |
| claude-code | user | `~/.claude/settings.json` | `~/.claude.json` (`claude mcp add -s user`) |
| claude-code | project | `.claude/settings.json` | `.mcp.json` |
| codex | user | `$CODEX_HOME/hooks.json` (`~/.codex`) | `$CODEX_HOME/config.toml` |
| codex | project | `.codex/hooks.json` | `.codex/config.toml` |
| gemini | user / project | `~/.gemini/settings.json` / `.gemini/settings.json` | the same file |
| cursor | user / project | — | `~/.cursor/mcp.json` / `.cursor/mcp.json` |

A project's files are under its repository's top folder. `CLAUDE_CONFIG_DIR` moves Claude
Code's files and `CODEX_HOME` Codex's, as those hosts read them (memesh_site/settings.py).
Codex gets the same hooks as Claude Code: its hooks.json has the same shape, and a matcher
naming a tool Codex does not have never fires. Gemini CLI gets them under its own event and
tool names (hosts/gemini.py), in the settings.json that holds its MCP servers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypedDict

import tomlkit
from django.conf import settings

from hosts import codex_trust, edits, mcp_warmup, original
from hosts.documents import (
    FileChange,
    HostConfigInvalid,
    dump_json,
    parse_json,
    parse_toml,
    read_text,
)
from hosts.gemini import gemini_hook_specs
from hosts.plugin import SERVER_NAME, HookSpec, hook_specs, mcp_server

HOSTS = {
    "claude-code": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "cursor": "Cursor",
}
# The name a host's hooks give themselves (`memesh hook <event> --host <name>`,
# core/hook_hosts.py); Claude Code's name none, as the plugin's hooks do.
HOOK_HOST = {"codex": "codex", "gemini": "gemini-cli"}
Scope = Literal["user", "project"]
Role = Literal["hooks", "mcp", "hooks and mcp"]


@dataclass(frozen=True)
class HostFile:
    path: Path
    role: Role
    format: Literal["json", "toml"] = "json"


def host_files(host: str, scope: Scope, project_dir: Path | None = None) -> list[HostFile]:
    """The files `host` reads memesh's entries from, at `scope` (`project_dir`: the
    repository's top folder, for the project scope)."""
    if scope == "project":
        assert project_dir is not None
        root = project_dir
    if host == "claude-code":
        if scope == "user":
            return [
                HostFile(Path(settings.CLAUDE_CONFIG_DIR) / "settings.json", "hooks"),
                HostFile(Path(settings.CLAUDE_STATE_FILE), "mcp"),
            ]
        return [
            HostFile(root / ".claude" / "settings.json", "hooks"),
            HostFile(root / ".mcp.json", "mcp"),
        ]
    if host == "codex":
        folder = Path(settings.CODEX_HOME) if scope == "user" else root / ".codex"
        return [
            HostFile(folder / "config.toml", "mcp", "toml"),
            HostFile(folder / "hooks.json", "hooks"),
        ]
    if host == "gemini":
        folder = Path(settings.GEMINI_DIR) if scope == "user" else root / ".gemini"
        return [HostFile(folder / "settings.json", "hooks and mcp")]
    if host == "cursor":
        folder = Path(settings.CURSOR_DIR) if scope == "user" else root / ".cursor"
        return [HostFile(folder / "mcp.json", "mcp")]
    raise ValueError(f"unknown host {host!r}")


def host_hook_specs(host: str) -> list[HookSpec]:
    """memesh's hooks as `host` names them, each naming the host that runs it (HOOK_HOST)."""
    specs = gemini_hook_specs() if host == "gemini" else hook_specs()
    hook_host = HOOK_HOST.get(host)
    return specs if hook_host is None else [replace(s, host=hook_host) for s in specs]


def server_entry(host: str, command: str) -> dict[str, Any]:
    """memesh's MCP server as `host` writes its own: `claude mcp add` records the transport."""
    server = mcp_server(command)
    return {"type": "stdio", **server} if host == "claude-code" else server


def codex_env_vars() -> list[str]:
    """The variables Codex is to pass through to memesh's MCP server: MEMESH_HOME always (if
    the user sets it later, the server must see it as the hooks do), and every MEMESH_*
    variable set where `memesh setup` runs."""
    return ["MEMESH_HOME", *(n for n in settings.MEMESH_ENV_NAMES if n != "MEMESH_HOME")]


def _json_after(host: str, file: HostFile, before: str | None, command: str | None) -> str | None:
    document = parse_json(file.path, before)
    updated = document
    if "hooks" in file.role:
        edits.check_hooks_shape(file.path, document)
        if command is None:
            updated = edits.without_memesh_hooks(updated)
        else:
            updated = edits.with_memesh_hooks(updated, host_hook_specs(host), command)
    if "mcp" in file.role:
        edits.check_servers_shape(file.path, document)
        if command is None:
            updated = edits.without_json_server(updated)
        else:
            servers = document.get("mcpServers") or {}
            original.refuse_replacing(file.path, servers.get(SERVER_NAME), SERVER_NAME)
            updated = edits.with_json_server(updated, server_entry(host, command))
    if updated == document:
        return before  # unchanged in substance: left byte for byte, not reformatted
    if command is None and not updated:
        return None  # nothing but memesh's entries was there: the file goes (its backup stays)
    return dump_json(updated, like=before)


def _toml_after(host: str, file: HostFile, before: str | None, command: str | None) -> str | None:
    document = parse_toml(file.path, before)
    current = edits.toml_server(file.path, document)
    if command is None:
        if current is None:
            return before
        edits.remove_toml_server(file.path, document)
    else:
        wanted = server_entry(host, command)
        # Codex starts an MCP server with a whitelisted environment: without these, the server
        # would keep memories in ~/.memesh while the hooks (which get Codex's whole
        # environment) use $MEMESH_HOME.
        wanted["env_vars"] = edits.with_env_vars(file.path, current, codex_env_vars())
        if current is not None and all(current.get(k) == v for k, v in wanted.items()):
            return before
        edits.set_toml_server(file.path, document, wanted)
    text = tomlkit.dumps(document)
    return text.rstrip("\n") + "\n" if text.strip() else None


def plan(
    host: str, scope: Scope, project_dir: Path | None, command: str | None
) -> list[FileChange]:
    """What setting memesh up for `host` at `scope` changes, file by file: the install when
    `command` (the memesh entry point to run) is given, the uninstall when it is None.

    Every file is read and checked before any is written, so a file memesh refuses stops the
    command with nothing changed."""
    changes = []
    for file in host_files(host, scope, project_dir):
        if scope == "project":
            _refuse_leaving(file.path, project_dir)
        before = read_text(file.path)
        after_of = _toml_after if file.format == "toml" else _json_after
        changes.append(
            FileChange(file.path, file.role, before, after_of(host, file, before, command))
        )
    return changes


def _refuse_leaving(path: Path, project_dir: Path | None) -> None:
    """A project's file must be in the project: a repository's `.claude` could be a symlink
    to any JSON file of the user's, which memesh would then edit."""
    assert project_dir is not None
    if not path.resolve().is_relative_to(project_dir.resolve()):
        raise HostConfigInvalid(
            f"{path} leads outside the project (to {path.resolve()}): memesh does not write "
            "through it"
        )


class SetupFileJson(TypedDict):
    """One file of `memesh setup --json`."""

    path: str
    role: str
    existed: bool
    changed: bool
    written: bool  # False in a dry run, and for a file left as it was
    backup: str | None  # where the file as it was is kept; None: there was none
    diff: str  # unified diff; "" when unchanged


class SetupJson(TypedDict):
    """`memesh setup --json`: what was asked, and each file."""

    host: str
    scope: Scope
    action: Literal["install", "uninstall"]
    dryRun: bool
    changed: bool
    command: str | None
    files: list[SetupFileJson]
    notes: list[str]


@dataclass
class SetupResult:
    host: str
    scope: Scope
    uninstall: bool
    dry_run: bool
    command: str | None
    changes: list[FileChange]
    backups: dict[Path, Path | None] = field(default_factory=dict)  # the files written
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(c.changed for c in self.changes)

    def as_json(self) -> SetupJson:
        return {
            "host": self.host,
            "scope": self.scope,
            "action": "uninstall" if self.uninstall else "install",
            "dryRun": self.dry_run,
            "changed": self.changed,
            "command": self.command,
            "files": [
                {
                    "path": str(c.path),
                    "role": c.role,
                    "existed": c.before is not None,
                    "changed": c.changed,
                    "written": c.path in self.backups,
                    "backup": str(self.backups[c.path]) if self.backups.get(c.path) else None,
                    "diff": c.diff(),
                }
                for c in self.changes
            ],
            "notes": self.notes,
        }


def host_setup(
    host: str,
    scope: Scope,
    project_dir: Path | None,
    *,
    command: str | None,
    dry_run: bool,
) -> SetupResult:
    """Install memesh into `host` (`command`: the entry point to run) or, with None, remove
    it; with `dry_run`, only plan. Files are written only when their content changes."""
    changes = plan(host, scope, project_dir, command)
    result = SetupResult(host, scope, command is None, dry_run, command, changes)
    if not dry_run:
        for change in changes:
            if change.changed:
                result.backups[change.path] = change.write()
        if host == "codex" and command is not None:
            mcp_warmup.store_tool_list(command)  # Codex's first step sees memesh's tools
    result.notes = notes(host, scope, changes, installing=command is not None)
    return result


def notes(host: str, scope: Scope, changes: list[FileChange], *, installing: bool) -> list[str]:
    """What the user should know besides the files: how the host picks the change up, and
    what would keep memesh's entries from working as written."""
    out = []
    name = HOSTS[host]
    changed = any(c.changed for c in changes)
    if changed:
        out.append(f"Restart {name} (or start a new session) for the change to take effect.")
    if not installing:
        return out
    if changed and host == "claude-code" and scope == "project":
        out.append(
            "Claude Code asks once whether to use the project's .mcp.json server: approve it."
        )
    if host == "claude-code" and _plugin_enabled(changes):
        out.append(
            "The memesh plugin is enabled in these settings too: its hooks run beside these. "
            "Keep one: `/plugin disable memesh`, or `memesh setup claude-code --uninstall`."
        )
    untrusted = codex_untrusted_hooks(changes) if host == "codex" else []
    if untrusted:
        out.append(
            f"Codex will not run {len(untrusted)} of memesh's hooks until you trust them, and "
            f"skips them without a word: {codex_trust.TRUST_STEP}. `memesh doctor` says when "
            "they are."
        )
    if changed and host == "codex":
        out.append(
            "Codex runs the SessionStart hook (the memory block) and the Bash ones; its edit "
            "tool is apply_patch, which the Edit|Write|MultiEdit matcher misses."
        )
    if host == "codex":
        config = next(c for c in changes if c.role == "mcp")
        if edits.codex_hooks_off(parse_toml(config.path, config.after)):
            out.append(
                f"{config.path} turns hooks off ([features] hooks = false): Codex will not run "
                "memesh's hooks until you remove that line."
            )
    if changed and host == "gemini":
        out.append(
            "Gemini CLI runs the SessionStart hook (the memory block), BeforeAgent, AfterTool "
            "after shell commands and AfterAgent; it has no hook that shows the model memesh's "
            "notes before an edit or a command (docs/platforms/gemini-cli.md)."
        )
    if changed and host == "cursor":
        out.append(
            f"{name} runs no memesh hooks: the agent calls the briefing tool at the start of a "
            "session and remembers by hand (docs/integrations.md)."
        )
    if Path(settings.MEMESH_HOME) != Path.home() / ".memesh" and host == "codex":
        out.append(
            f"This memesh uses MEMESH_HOME={settings.MEMESH_HOME}; Codex passes it on to memesh "
            "(env_vars) from its own environment: start Codex where MEMESH_HOME is set too, or "
            "it uses ~/.memesh."
        )
    elif Path(settings.MEMESH_HOME) != Path.home() / ".memesh":
        out.append(
            f"This memesh uses MEMESH_HOME={settings.MEMESH_HOME}; {name} runs memesh with its "
            "own environment: set MEMESH_HOME there too, or it uses ~/.memesh."
        )
    return out


def codex_untrusted_hooks(changes: list[FileChange]) -> list[str]:
    """memesh's hooks, as written by `changes`, that Codex will skip until they are trusted;
    the trust is in the user's config.toml whichever scope the hooks are at."""
    hooks = next(c for c in changes if c.role == "hooks")
    user_config = Path(settings.CODEX_HOME) / "config.toml"
    written = next((c for c in changes if c.path == user_config), None)
    try:
        text = written.after if written is not None else read_text(user_config)
        config = parse_toml(user_config, text)
    except HostConfigInvalid:
        config = parse_toml(user_config, None)  # unreadable: nothing in it is trusted
    document = parse_json(hooks.path, hooks.after)
    return codex_trust.untrusted_memesh_hooks(hooks.path, document, config)


def _plugin_enabled(changes: list[FileChange]) -> bool:
    """Whether a Claude Code settings file being written also enables the memesh plugin."""
    return any(
        change.role == "hooks" and edits.enabled_plugins(parse_json(change.path, change.after))
        for change in changes
    )
