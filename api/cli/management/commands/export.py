"""`memesh export`: stream a bundle of any size to stdout or a file (graph.ops.bundle.files),
or with `--format mcp-memory` the official MCP memory server's JSON Lines
(graph.ops.bundle.mcp_memory)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from django.core.management.base import CommandParser
from tqdm import tqdm

from api.cli.base import MemeshCommand, cli_context
from core.errors import InvalidParameter
from graph.ops.bundle import EXPORT
from graph.ops.bundle.exporter import ExportInput
from graph.ops.bundle.files import Writer, bundle_write
from graph.ops.bundle.mcp_memory import mcp_memory_write
from graph.ops.kit.scope import ReadScope, read_scope


class Command(MemeshCommand):
    help = "Export active memories to a portable JSON bundle (stdout, or --output FILE)."

    def add_arguments(self, parser: CommandParser) -> None:
        # The flags of the `export` operation's fields; this command streams the bundle
        # itself (graph.ops.bundle.files) instead of calling the operation.
        op = EXPORT
        parser.add_argument(
            "--namespace", choices=op.field_choices("namespace"), help=op.field_help("namespace")
        )
        parser.add_argument("--tag", help=op.field_help("tag"))
        parser.add_argument("--project", help=op.field_help("project"))
        parser.add_argument(
            "--cross-project", action="store_true", help=op.field_help("cross_project")
        )
        # Not the field's limit (default 1000, at most 10000): a stream has no cap of its own.
        parser.add_argument(
            "--limit", type=int, help="At most this many entities (default: all of them)."
        )
        parser.add_argument(
            "--include-expired", action="store_true", help=op.field_help("include_expired")
        )
        parser.add_argument("-o", "--output", help="Write the bundle to this file.")
        parser.add_argument(
            "--format",
            choices=("bundle", "mcp-memory"),
            default="bundle",
            help="bundle: memesh's JSON bundle (default); mcp-memory: the official MCP memory "
            "server's memory.jsonl (names, types, observations and relations only).",
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="Errors as JSON; with --output, a JSON summary instead of a sentence.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        limit = options["limit"]
        if limit is not None and limit < 1:
            raise InvalidParameter("--limit must be at least 1")
        path = Path(options["output"]) if options["output"] else None
        # Validated as every transport validates `project` (ExportInput), then scoped alike.
        data = cast(
            ExportInput,
            EXPORT.parse({k: options[k] for k in ("project", "tag") if options[k] is not None}),
        )
        scope = read_scope(
            project=data.project,
            tag=data.tag,
            cross_project=options["cross_project"],
            ctx=cli_context(),
        )
        bars: list[tqdm[Any]] = []
        show = _show_progress(options["json"])

        def on_count(total: int) -> None:
            if show:  # made once the total is known, inside the export's snapshot
                bars.append(tqdm(total=total, unit="memory", desc="Exporting", file=sys.stderr))

        def progress(n: int) -> None:
            if bars:
                bars[0].update(n)

        try:
            if path is None:
                written = self._write(self.stdout, options, scope, progress, on_count)
            else:
                with path.open("w", encoding="utf-8") as f:
                    written = self._write(f, options, scope, progress, on_count)
        except OSError as exc:
            raise InvalidParameter(f"Cannot write {path}: {exc}") from None
        finally:
            for bar in bars:
                bar.close()
        if path is not None:
            summary = {"exported": written, "path": str(path)}
            self.stdout.write(
                json.dumps(summary) if options["json"] else f"Exported {written} to {path}"
            )
        if show and scope.storage_project is not None:
            # The bundle's `scope` says it too; a person backing up should not have to look.
            self.stderr.write(
                f"Exported project {scope.storage_project}'s memories, with those of no project "
                "and global ones; --cross-project exports every project's."
            )

    def _write(
        self,
        out: Any,
        options: dict[str, Any],
        scope: ReadScope,
        progress: Callable[[int], None],
        on_count: Callable[[int], None],
    ) -> int:
        target: Writer = _Raw(out) if out is self.stdout else out
        write = mcp_memory_write if options["format"] == "mcp-memory" else bundle_write
        return write(
            target,
            namespace=options["namespace"],
            tag=options["tag"],
            limit=options["limit"],
            scope=scope,
            progress=progress,
            on_count=on_count,
            include_expired=options["include_expired"],
        )


class _Raw:
    """Django's OutputWrapper appends a newline to every write; the bundle writes pieces."""

    def __init__(self, wrapper: Any) -> None:
        self._wrapper = wrapper

    def write(self, text: str) -> None:
        self._wrapper.write(text, ending="")


def _show_progress(as_json: bool) -> bool:
    return sys.stderr.isatty() and not as_json
