"""`memesh db copy --to postgresql://…`: this home's SQLite database copied into an empty
PostgreSQL database, the team server's (api/cli/installation/db_copy.py).

Run from a home, the command starts the copy in a process of its own whose database is the
target (MEMESH_DATABASE_URL set to `--to`, given there through the environment, never on a
command line); that process reads the home's file through `--from`. Run where
MEMESH_DATABASE_URL is already the target, `--from PATH` names the SQLite file.

    memesh db copy --to postgresql://memesh@db.internal/team --dry-run
    memesh db copy --to postgresql://memesh@db.internal/team
    memesh db copy --to … --reembed          # vectors computed again in the target
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from django.db import connection
from tqdm import tqdm

from api.cli.base import MemeshCommand
from api.cli.installation import db_copy
from core.db.postgres.url import parse, safe_url
from core.db.schema import migrate_if_needed


class Command(MemeshCommand):
    help = "Copy this home's SQLite database into an empty PostgreSQL database (`db copy`)."
    migrates = False  # the source is brought up to date first; the target by the copy

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="copy")
        copy = sub.add_parser(
            "copy",
            help="Copy every memory, proposal, message and vector into an empty PostgreSQL "
            "database; resumes where an interrupted copy stopped.",
        )
        copy.add_argument(
            "--to",
            metavar="URL",
            help="The target: a postgresql:// URL (default: MEMESH_DATABASE_URL when set).",
        )
        copy.add_argument(
            "--from",
            dest="source",
            metavar="PATH",
            help="The SQLite database to copy (default: this home's).",
        )
        copy.add_argument(
            "--dry-run",
            action="store_true",
            help="Say what would be copied, table by table, and write nothing.",
        )
        copy.add_argument(
            "--reembed",
            action="store_true",
            help="Do not copy the vectors: the target's worker embeds every memory again.",
        )
        copy.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor == "postgresql":
            self._copy_here(options)
        else:
            self._start_copy(options)

    def _start_copy(self, options: dict[str, Any]) -> None:
        """From the SQLite home: bring it up to date, then run the copy with the target as the
        process's database."""
        if not options["to"]:
            raise db_copy.SourceNotSqlite("say where to copy to: --to postgresql://…")
        parse(options["to"])  # a URL that cannot be read is refused here, in one sentence
        migrate_if_needed()
        source = options["source"] or str(settings.DATABASES["default"]["NAME"])
        argv = [sys.executable, "-m", "memesh_site.cli", "db", "copy", "--from", source]
        argv += [f"--{k.replace('_', '-')}" for k in ("dry_run", "reembed", "json") if options[k]]
        env = {**os.environ, "MEMESH_DATABASE_URL": options["to"]}
        raise SystemExit(subprocess.run(argv, env=env, check=False).returncode)

    def _copy_here(self, options: dict[str, Any]) -> None:
        if options["to"] and options["to"] != settings.MEMESH_DATABASE_URL:
            raise db_copy.SourceNotSqlite(
                "this process's database is already PostgreSQL (MEMESH_DATABASE_URL): run "
                "memesh db copy without it, from the SQLite home, or give --to the same URL"
            )
        if not options["source"]:
            raise db_copy.SourceNotSqlite(
                "MEMESH_DATABASE_URL is set: name the SQLite database to copy with --from PATH"
            )
        source = Path(options["source"])
        db_copy.open_source(source)
        target = safe_url(parse(settings.MEMESH_DATABASE_URL))
        if options["dry_run"]:
            report = db_copy.plan(str(source), target, dry_run=True, reembed=options["reembed"])
        else:
            migrate_if_needed()
            report = self._copy(str(source), target, options)
        self._print(report, options["json"])

    def _copy(self, source: str, target: str, options: dict[str, Any]) -> db_copy.CopyReport:
        planned = db_copy.plan(source, target, dry_run=False, reembed=options["reembed"])
        show = not options["json"] and sys.stderr.isatty()
        bar = tqdm(
            total=db_copy.total_rows(planned), unit="row", desc="Copying", file=sys.stderr,
            disable=not show,
        )  # fmt: skip
        try:
            return db_copy.copy(source, target, reembed=options["reembed"], advance=bar.update)
        finally:
            bar.close()

    def _print(self, report: db_copy.CopyReport, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(report.as_json()))
            return
        width = max(len(t.table) for t in report.tables)
        lines = [f"{'table'.ljust(width)}  {'source':>9}  {'target':>9}"]
        lines += [f"{t.table.ljust(width)}  {t.source:>9}  {t.target:>9}" for t in report.tables]
        if report.dry_run:
            verb = "would resume" if report.resumed else "would copy"
            lines.append(
                f"Dry run: {verb} {db_copy.total_rows(report)} rows from {report.source} "
                f"into {report.target}; nothing written."
            )
        else:
            lines.append(
                f"Copied {report.copied} rows from {report.source} into {report.target} in "
                f"{report.seconds:.1f} s; keyword index: {report.keyword_indexed} memories; "
                f"vectors {report.vectors}. Verified: every table holds its source's rows."
            )
        self.stdout.write("\n".join(lines))
