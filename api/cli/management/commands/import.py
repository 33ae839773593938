"""`memesh import FILE`: import a bundle of any size, streamed (graph.ops.bundle.files).

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
from graph.ops.kit.operation import CallContext
from graph.project import project_id


class Command(MemeshCommand):
    help = "Import a JSON bundle produced by `memesh export` (FILE, or - for stdin)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The bundle file; - reads stdin.")
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


def _summary(r: ImportOutput) -> str:
    lines = [
        f"Imported {r.imported}, appended {r.appended}, skipped {r.skipped}; "
        f"{r.relations} relations; {len(r.errors)} errors."
    ]
    lines.extend(f"  error: {e}" for e in r.errors)
    return "\n".join(lines)
