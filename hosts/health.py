"""Is memesh set up in each host, and would it run: `memesh doctor`'s Integrations section.

For each host and scope (the user's files, and the project's when the doctor is given the
project): which files hold memesh's entries, whether every hook of the plugin is there (Claude
Code, Codex, and Gemini CLI under its own names), whether the MCP server is, and whether each
`memesh` command they name exists and is the memesh running the doctor. A host memesh was
never set up in is reported as such, not as a problem. The Claude Code plugin enabled in a
settings file (`enabledPlugins`) counts as set up, with the `memesh` its files run from PATH.

A hook that names another host than `memesh setup <host>` writes now (`--host codex`:
core/hook_hosts.py), as every hook an earlier setup wrote names none, is reported as out of
date: what it stores would read as Claude Code's.

This reads files only. Codex records which hooks the user trusted in its config.toml, so a
Codex hook it will skip, untrusted or changed since trusted, is reported (hosts/codex_trust.py);
other acceptances (a project MCP server waiting for approval) and what the model was shown
are not in the files.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from core.hook_hosts import DEFAULT_HOOK_HOST, HOST_OPTION, HookArgumentsInvalid, hook_host
from core.redact import redact
from graph.doctor import Check
from hosts import codex_trust, edits, original
from hosts.documents import HostConfigInvalid, parse_json, parse_toml, read_text
from hosts.plugin import is_this_memesh, memesh_hook_argv
from hosts.setup import HOOK_HOST, HOSTS, HostFile, Scope, host_files, host_hook_specs


@dataclass
class HostHealth:
    host: str
    status: str  # ok | warn: a host memesh is not set up in is ok
    detail: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Found:
    """What one scope's files hold of memesh's."""

    files: list[dict[str, Any]] = field(default_factory=list)
    hooks_file: bool = False  # the host takes hooks at this scope
    hook_calls: list[tuple[str, str | None, str, str]] = field(default_factory=list)
    server: dict[str, Any] | None = None
    plugins: list[str] = field(default_factory=list)
    hooks_off: bool = False
    hooks_path: Path | None = None
    hooks_document: dict[str, Any] | None = None
    untrusted_hooks: list[str] = field(default_factory=list)  # Codex: hooks it will skip
    original: list[str] = field(default_factory=list)  # the original MeMesh's entries here
    problems: list[str] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        return bool(self.hook_calls or self.server is not None or self.plugins)


def _read(file: HostFile, found: _Found) -> None:
    row: dict[str, Any] = {"path": str(file.path), "role": file.role, "exists": False}
    found.files.append(row)
    found.hooks_file = found.hooks_file or "hooks" in file.role
    try:
        text = read_text(file.path)
        row["exists"] = text is not None
        if text is None:
            return
        if file.format == "toml":
            toml = parse_toml(file.path, text)
            found.original += original.found_in(toml.unwrap(), "mcp_servers")
            found.server = edits.toml_server(file.path, toml)
            found.hooks_off = edits.codex_hooks_off(toml)
        else:
            document = parse_json(file.path, text)
            found.original += original.found_in(document)
            if "hooks" in file.role:
                edits.check_hooks_shape(file.path, document)
                found.hook_calls = edits.memesh_hook_calls(document)
                found.hooks_path, found.hooks_document = file.path, document
                found.plugins = edits.enabled_plugins(document)
            if "mcp" in file.role:
                edits.check_servers_shape(file.path, document)
                found.server = edits.json_server(document)
        row["valid"] = True
    except HostConfigInvalid as exc:
        row["valid"] = False
        # A file memesh cannot parse is the host's own business unless it names memesh
        # (Gemini CLI reads comments in its settings.json, say; memesh does not).
        if row["exists"] and "memesh" in (read_text(file.path) or ""):
            found.problems.append(f"{exc.message.split(';')[0]}: memesh's entries go unchecked")


def _codex_untrusted(found: _Found) -> list[str]:
    """memesh's hooks in the scope's hooks.json that Codex holds as untrusted or modified."""
    if found.hooks_path is None or found.hooks_document is None or not found.hook_calls:
        return []
    user_config = Path(settings.CODEX_HOME) / "config.toml"
    try:
        config = parse_toml(user_config, read_text(user_config))
    except HostConfigInvalid:
        config = parse_toml(user_config, None)  # reported as the user scope's own problem
    return codex_trust.untrusted_memesh_hooks(found.hooks_path, found.hooks_document, config)


def _hooks_naming_another_host(host: str, found: _Found) -> list[str]:
    """memesh's hooks in the scope's hooks file whose host (`--host`, none: Claude Code) is
    not the one `memesh setup <host>` names, as `<Event> <matcher> <subcommand>`."""
    if found.hooks_document is None:
        return []
    wanted = HOOK_HOST.get(host, DEFAULT_HOOK_HOST)
    stale = []
    for event, groups in (found.hooks_document.get("hooks") or {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                argv = memesh_hook_argv(handler.get("command"))
                if argv is None:
                    continue
                try:
                    named: str | None = hook_host(argv[3:])
                except HookArgumentsInvalid:  # the hook itself fails: out of date as well
                    named = None
                if named != wanted:
                    subcommand = argv[2] if len(argv) > 2 else ""
                    stale.append(f"{event} {group.get('matcher') or '*'} {subcommand}")
    return stale


def _command(executable: str) -> dict[str, Any]:
    found = executable if os.sep in executable else shutil.which(executable)
    return {
        "path": executable,
        "exists": found is not None and Path(found).is_file(),
        "thisMemesh": is_this_memesh(executable),
    }


def _scope_report(host: str, scope: Scope, found: _Found) -> dict[str, Any]:
    """The scope's report; what is wrong lands in `found.problems`."""
    problems = found.problems
    report: dict[str, Any] = {"scope": scope, "files": found.files}
    executables = {call[2] for call in found.hook_calls}
    if found.hooks_file:
        wanted = {(s.event, s.matcher, s.subcommand) for s in host_hook_specs(host)}
        present = {(event, matcher, sub) for event, matcher, _, sub in found.hook_calls}
        missing = sorted(f"{e} {m or '*'} {s}" for e, m, s in wanted - present)
        report["hooks"] = {
            "expected": len(wanted),
            "present": len(wanted & present),
            "missing": missing,
        }
        # The MCP server alone (`claude mcp add`) is a setup of its own, not a problem: the
        # line says "MCP server" without hooks.
        if found.hook_calls and missing:
            problems.append(f"{len(missing)} of memesh's {len(wanted)} hooks are missing")
        if found.hooks_off and found.hook_calls:
            problems.append("config.toml turns hooks off ([features] hooks = false)")
        stale = _hooks_naming_another_host(host, found)
        if stale:
            report["hooks"]["outOfDate"] = stale
            # Codex holds the rewritten hooks as changed: trusted again before they run.
            again = f", then {codex_trust.TRUST_STEP}" if host == "codex" else ""
            named = f"`{HOST_OPTION} {HOOK_HOST[host]}`" if host in HOOK_HOST else "no host"
            problems.append(
                f"{len(stale)} of memesh's hooks are out of date (they should name {named}, "
                f"or what they store reads as another host's): run `memesh setup {host}` "
                f"again{again}"
            )
        if found.untrusted_hooks:
            report["hooks"]["untrusted"] = found.untrusted_hooks
            problems.append(
                f"Codex skips {len(found.untrusted_hooks)} of memesh's hooks until you trust "
                f"them: {codex_trust.TRUST_STEP}"
            )
    report["mcpServer"] = found.server is not None
    if found.server is not None:
        command = found.server.get("command")
        if isinstance(command, str):
            executables.add(command)
        else:
            problems.append("memesh's MCP server entry names no command")
    if found.plugins:
        report["plugins"] = found.plugins
        executables.add("memesh")  # the plugin's files run `memesh` from PATH
        if found.hook_calls:
            problems.append("memesh's hooks are in the settings and in the plugin: each runs twice")
    report["commands"] = [_command(e) for e in sorted(executables)]
    for command_row in report["commands"]:
        if not command_row["exists"]:
            problems.append(f"{command_row['path']} does not exist")
        elif not command_row["thisMemesh"]:
            problems.append(f"{command_row['path']} is another memesh installation than this one")
    report["installed"] = found.installed
    report["problems"] = problems
    return report


def _describe(report: dict[str, Any], found: _Found) -> str:
    """One line: `user: 8/8 hooks + MCP server in <files> → <command> (this memesh)`."""
    parts = []
    if found.hook_calls:
        parts.append(f"{report['hooks']['present']}/{report['hooks']['expected']} hooks")
    if found.server is not None:
        parts.append("MCP server")
    if found.plugins:
        parts.append(f"plugin {', '.join(found.plugins)}")
    where = ", ".join(f["path"] for f in found.files if f["exists"])
    text = f"{report['scope']}: {' + '.join(parts) or 'nothing readable'} in {where}"
    commands = [f"{c['path']} ({_verdict(c)})" for c in report["commands"]]
    if commands:
        text += " → " + ", ".join(commands)
    if found.problems:
        text += ": " + "; ".join(found.problems)
    return text


def _verdict(command: dict[str, Any]) -> str:
    if command["thisMemesh"]:
        return "this memesh"
    return "another memesh" if command["exists"] else "missing"


def host_health(project_dir: Path | None = None) -> list[HostHealth]:
    """One report per host (the module docstring says what is checked); `project_dir`: the
    repository whose project-scope files are checked too."""
    scopes: list[tuple[Scope, Path | None]] = [("user", None)]
    if project_dir is not None:
        scopes.append(("project", project_dir))
    out = []
    for host, name in HOSTS.items():
        reports, lines, problems = [], [], []
        originals: list[str] = []
        seen: set[Path] = set()
        for scope, root in scopes:
            # Run from the home directory, the project's settings file is the user's.
            files = [f for f in host_files(host, scope, root) if f.path not in seen]
            seen.update(f.path for f in files)
            found = _Found()
            for file in files:
                _read(file, found)
            if found.original:
                originals.append(f"{', '.join(found.original)} in the {scope} files")
            if host == "codex":
                found.untrusted_hooks = _codex_untrusted(found)
            if not found.installed and not found.problems:
                continue
            report = _scope_report(host, scope, found)
            reports.append(report)
            lines.append(_describe(report, found))
            problems.extend(found.problems)
        # The original MeMesh set up in the same host (hosts/original.py): said, never touched.
        beside = f"the original MeMesh is set up too ({'; '.join(originals)})" if originals else ""
        if not reports:
            detail = f"not set up (`memesh setup {host}` sets up {name})"
            detail += f"; {beside}" if beside else ""
            absent: dict[str, Any] = {"installed": False, "scopes": []}
            absent.update({"original": originals} if originals else {})
            out.append(HostHealth(host, "ok", detail, absent))
            continue
        if beside:
            problems.append(beside)
            lines.append(f"{beside}: both products capture and recall in every session")
        installed = any(r["installed"] for r in reports)
        data = {"installed": installed, "scopes": reports}
        data.update({"original": originals} if originals else {})
        out.append(HostHealth(host, "warn" if problems else "ok", "; ".join(lines), data))
    return out


def integration_checks(project_dir: Path | None = None) -> list[Check]:
    """One check per agent host; `project_dir`: the repository whose own host files
    (`memesh setup --project`) are checked too (the CLI passes its directory's)."""
    return [
        Check(h.host, h.status, redact(h.detail), redact(h.data)) for h in host_health(project_dir)
    ]
