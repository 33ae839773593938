"""`memesh import FILE`: import a bundle of any size, streamed (graph.ops.bundle.files).
`memesh import --from FORMAT PATH`: import another program's memories (graph.ops.foreign),
a dry run unless --apply.

Exits 1 when any entry or relation was reported in `errors` (the rest is imported).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm

from api.cli.base import MemeshCommand
from core.errors import InvalidParameter
from graph.ops.bundle import IMPORT
from graph.ops.bundle.files import bundle_file_entries, bundle_scan
from graph.ops.bundle.importer import ImportOutput, bundle_import
from graph.ops.foreign.service import FORMATS, ForeignImportOutput, foreign_import
from graph.ops.kit.operation import CallContext
from graph.project import project_id


class Command(MemeshCommand):
    help = (
        "Import a JSON bundle produced by `memesh export` (FILE, or - for stdin), or with "
        "--from FORMAT another program's memories (a dry run unless --apply)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "file",
            nargs="?",
            help="The bundle file; - reads stdin. With --from: the file or folder to read "
            "(claude-code: the project folder, default the current one).",
        )
        parser.add_argument(
            "--from",
            dest="from_format",
            metavar="FORMAT",
            help=f"Read another program's memories: {', '.join(FORMATS)} (docs/import.md).",
        )
        parser.add_argument(
            "--apply",
            action="store_true",
            help="With --from: write the memories (without it, only say what would happen).",
        )
        parser.add_argument(
            "--project",
            help="With --from: file memories the source gives no project under this one.",
        )
        parser.add_argument(
            "--strict",
            action="store_true",
            help="With --from: stop at the first malformed record, writing nothing.",
        )
        # The `import` operation's fields (this command streams the file to bundle_import
        # instead of calling the operation); the field has no default, the flag has `skip`.
        parser.add_argument(
            "--merge",
            choices=IMPORT.field_choices("merge_strategy"),
            default="skip",
            help=f"{IMPORT.field_help('merge_strategy')} Default: skip.",
        )
        parser.add_argument(
            "--namespace",
            choices=IMPORT.field_choices("namespace"),
            help=IMPORT.field_help("namespace"),
        )
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        as_json = options["json"]
        if options["from_format"] is not None:
            self._foreign(options)
            return
        if options["file"] is None:
            raise InvalidParameter("Name the bundle file to import (or - for stdin).")
        ctx = CallContext(source_host="cli", project=project_id())
        with tempfile.TemporaryDirectory(prefix="memesh-import-") as tmp:
            path = Path(options["file"])
            if options["file"] == "-":  # parsed more than once: stdin is spooled to a file
                path = Path(tmp) / "stdin.json"
                with path.open("wb") as f:
                    shutil.copyfileobj(sys.stdin.buffer, f)
            if not path.is_file():
                raise InvalidParameter(f"No such file: {path}")
            total = bundle_scan(path)
            bar = (
                tqdm(total=total, unit="memory", desc="Importing", file=sys.stderr)
                if sys.stderr.isatty() and not as_json
                else None
            )
            try:
                result = bundle_import(
                    entries=bundle_file_entries(path),
                    strategy=options["merge"],
                    namespace=options["namespace"],
                    source_host=ctx.source_host,
                    progress=bar.update if bar is not None else None,
                )
                if bar is not None:  # entries after the last valid one were not counted
                    bar.update(total - bar.n)
            finally:
                if bar is not None:
                    bar.close()
        if as_json:
            self.stdout.write(json.dumps(result.model_dump(mode="json"), indent=2))
        else:
            self.stdout.write(_summary(result))
        if result.errors:
            raise SystemExit(1)

    def _foreign(self, options: dict[str, Any]) -> None:
        as_json = options["json"]
        source = Path(options["file"] if options["file"] is not None else ".")
        bars: dict[str, tqdm[Any]] = {}

        def progress(phase: str, n: int) -> None:
            if phase not in bars:
                for bar in bars.values():
                    bar.close()
                bars[phase] = tqdm(unit="memory", desc=phase.capitalize(), file=sys.stderr)
            bars[phase].update(n)

        show = sys.stderr.isatty() and not as_json
        try:
            result = foreign_import(
                format_name=options["from_format"],
                source=source,
                apply=options["apply"],
                project=options["project"],
                strict=options["strict"],
                source_host="cli",
                progress=progress if show else None,
            )
        finally:
            for bar in bars.values():
                bar.close()
        if as_json:
            self.stdout.write(json.dumps(result.model_dump(mode="json"), indent=2))
        else:
            self.stdout.write(_foreign_summary(result))
        if result.errors:
            raise SystemExit(1)


def _summary(r: ImportOutput) -> str:
    lines = [
        f"Imported {r.imported}, appended {r.appended}, skipped {r.skipped}; "
        f"{r.relations} relations; {len(r.errors)} errors."
    ]
    lines.extend(f"  error: {e}" for e in r.errors)
    return "\n".join(lines)


def _foreign_summary(r: ForeignImportOutput) -> str:
    verb = ("Created", "appended") if r.applied else ("Would create", "append")
    lines = [
        f"{verb[0]} {r.created}, {verb[1]} {r.appended}, unchanged {r.unchanged}, "
        f"skipped {r.skipped}" + (f"; {r.relations} relations." if r.applied else ".")
    ]
    lines.extend(f"  renamed: {x}" for x in r.renamed)
    lines.extend(f"  skipped: {x}" for x in r.problems)
    lines.extend(f"  error: {x}" for x in r.errors)
    if not r.applied:
        lines.append("Nothing was written: run again with --apply to import.")
    return "\n".join(lines)
