"""`memesh setup <host> [--user|--project] [--dry-run] [--uninstall] [--json]`: write memesh's
hooks and MCP server into an agent host's configuration, merged with what is there
(hosts/, docs/integrations.md).

Exit 0 when the files are as asked (written, or already so: a second run changes nothing);
1 on a memesh error — a file that is not valid JSON or TOML (`setup.invalid-config`, nothing
written), no `memesh` entry point to name (`setup.no-memesh-command`), a file that cannot be
written (`setup.cannot-write`) or changed meanwhile (`setup.config-changed`); 2 for a wrong
command line.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from graph.project import project_root
from hosts.plugin import memesh_command
from hosts.setup import HOSTS, SetupResult, host_hook_specs, host_setup


class Command(MemeshCommand):
    help = (
        "Set memesh up in an agent host: Claude Code (hooks and MCP server), Codex CLI (MCP "
        "server and hooks), Gemini CLI or Cursor (MCP server). Merges with the host's files; "
        "idempotent."
    )
    migrates = False  # host files only: no database

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("host", choices=list(HOSTS), help="The agent host.")
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument(
            "--user",
            dest="scope",
            action="store_const",
            const="user",
            help="For every project: the host's files in your home directory (the default).",
        )
        scope.add_argument(
            "--project",
            dest="scope",
            action="store_const",
            const="project",
            help="For this project only: the host's files in this repository's top folder.",
        )
        parser.set_defaults(scope="user")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Print what would change as a unified diff, and write nothing.",
        )
        parser.add_argument(
            "--uninstall", action="store_true", help="Remove memesh's entries, and only those."
        )
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        scope = options["scope"]
        project_dir = project_root() if scope == "project" else None
        result = host_setup(
            options["host"],
            scope,
            project_dir,
            command=None if options["uninstall"] else memesh_command(),
            dry_run=options["dry_run"],
        )
        if options["json"]:
            self.stdout.write(json.dumps(result.as_json(), indent=2, ensure_ascii=False))
        else:
            self.render(result)

    def render(self, result: SetupResult) -> None:
        for change in result.changes:
            if result.dry_run:
                self.stdout.write(change.diff() or f"{change.path}: unchanged", ending="")
                if not change.changed:
                    self.stdout.write("")
            elif change.path in result.backups:
                backup = result.backups[change.path]
                verb = "Created" if not backup else "Removed" if change.after is None else "Updated"
                self.stdout.write(f"{verb} {change.path}" + (f" (was: {backup})" if backup else ""))
            else:
                self.stdout.write(f"{change.path}: unchanged")
        self.stdout.write(self.summary(result))
        for note in result.notes:
            self.stdout.write(f"- {note}")

    def summary(self, result: SetupResult) -> str:
        where = f"{HOSTS[result.host]} ({result.scope} scope)"
        if result.dry_run:
            return "Dry run: nothing was written." if result.changed else "Nothing would change."
        if result.uninstall:
            if result.changed:
                return f"memesh's entries are removed from {where}."
            return f"memesh was not set up in {where}; nothing changed."
        if not result.changed:
            return f"memesh is already set up in {where}; nothing changed."
        hooks = any("hooks" in c.role for c in result.changes)
        count = len(host_hook_specs(result.host))
        what = f"{count} hooks and the MCP server run" if hooks else "the MCP server runs"
        return f"memesh is set up in {where}: {what} {result.command}."
