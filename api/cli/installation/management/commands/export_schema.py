"""`memesh export-schema`: the agent tools as MCP or OpenAI function-calling definitions,
generated from the operation registry (api/schema_export.py), and the checked-in snapshots
of both under docs/schema/ (`--write` regenerates them, `--check` fails when they drift)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from api.cli.base import MemeshCommand
from api.schema_export import FORMATS, SNAPSHOT_FILES, render


def default_snapshot_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs" / "schema"


class Command(MemeshCommand):
    help = (
        "Print the memesh tools as MCP tool definitions or OpenAI function-calling tools "
        "(names prefixed memesh_), or check/regenerate the snapshots in docs/schema/."
    )
    # Needs no database: the schemas come from the registry alone.
    requires_system_checks: list[str] = []
    migrates = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default=None,
            help="openai (default, as the reference) or mcp. With --check/--write: only that "
            "snapshot.",
        )
        parser.add_argument("--output", "-o", help="Write to this file instead of stdout.")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--check",
            action="store_true",
            help="Exit 1 when a checked-in snapshot differs from the generated schema.",
        )
        mode.add_argument("--write", action="store_true", help="Regenerate the snapshots.")
        parser.add_argument(
            "--snapshot-dir",
            help="Where the snapshots live (default: docs/schema/ of the memesh checkout).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        fmt: str | None = options["format"]
        if not (options["check"] or options["write"]):
            if options["snapshot_dir"]:
                raise CommandError("--snapshot-dir goes with --check or --write")
            text = render(fmt or "openai")  # the reference: openai is the default
            if options["output"]:
                Path(options["output"]).write_text(text, encoding="utf-8")
            else:
                self.stdout.write(text, ending="")
            return
        if options["output"]:
            raise CommandError("--output cannot be combined with --check or --write")
        directory = Path(options["snapshot_dir"] or default_snapshot_dir())
        formats = [fmt] if fmt else list(FORMATS)
        if options["write"]:
            directory.mkdir(parents=True, exist_ok=True)
            for f in formats:
                path = directory / SNAPSHOT_FILES[f]
                path.write_text(render(f), encoding="utf-8")
                self.stdout.write(f"Wrote {path}")
            return
        stale = []
        for f in formats:
            path = directory / SNAPSHOT_FILES[f]
            try:
                current = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                stale.append(f"{path} is missing")
                continue
            if current != render(f):
                stale.append(f"{path} differs from the schema the code generates")
        if stale:
            raise CommandError(
                "; ".join(stale) + ". Run `memesh export-schema --write` and commit the result."
            )
        self.stdout.write(f"Schema snapshots up to date: {', '.join(formats)}.")
