"""`memesh kg backfill-relations` and `memesh kg rename-project`: knowledge-graph maintenance.

Both are dry runs until `--apply`: they say what would change and change nothing.
`backfill-relations` calls graph/maintenance/relations_backfill.py (the reference's five rules; its
`--dry-run` is accepted and is the default). `rename-project` lists the project tags with no
names given, and takes the names as `--from OLD --to NEW` (the reference's form) or as
`OLD NEW`; applied, it backs the database up first and prints the command that restores it
(graph/maintenance/project_rename.py). Exit 0 when the command did what was asked (a dry
run, nothing to do); 1 for a bad value or a failure (the envelope on stderr with --json); 2
for argparse's usage errors.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import CommandParser
from tqdm import tqdm

from api.cli.base import MemeshCommand, model_field_help
from core.errors import InvalidInput, InvalidParameter
from graph.maintenance.project_rename import (
    ProjectListOutput,
    ProjectRenameInput,
    ProjectRenameOutput,
    project_list,
    project_rename,
)
from graph.maintenance.relations_backfill import BackfillInput, BackfillOutput, relations_backfill
from graph.ops.kit.fields import Output
from graph.ops.kit.operation import validated

SHOWN = 20  # candidates / names listed without --json


class Command(MemeshCommand):
    help = "Knowledge-graph maintenance: backfill-relations, rename-project."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        back: CommandParser = sub.add_parser(
            "backfill-relations",
            help="Connect orphan entities and evidence with heuristic relations (no LLM).",
        )

        # The flags of BackfillInput's fields, with their descriptions; a default is argparse's
        # own (%(default)s). --dry-run and --all-rules are the command's own spellings, and
        # --no-evidence-links sets `evidence_links` to false.
        def back_help(name: str) -> str:
            return model_field_help(BackfillInput, name)

        back.add_argument("--project", help=back_help("project"))
        mode = back.add_mutually_exclusive_group()
        mode.add_argument(
            "--dry-run", action="store_true", help="List what would be created (the default)."
        )
        mode.add_argument("--apply", action="store_true", help=back_help("apply"))
        back.add_argument(
            "--max-per-source",
            type=int,
            default=3,
            help=f"{back_help('max_per_source')} Default %(default)s.",
        )
        back.add_argument(
            "--min-shared-tags",
            type=int,
            default=2,
            help=f"{back_help('min_shared_tags')} Default %(default)s.",
        )
        back.add_argument(
            "--session-cooccurrence",
            action="store_true",
            help=f"{back_help('session_cooccurrence')} Relation: co-created.",
        )
        back.add_argument(
            "--name-tokens",
            action="store_true",
            help=f"{back_help('name_tokens')} Relation: shares-name-tokens.",
        )
        back.add_argument(
            "--min-jaccard",
            type=float,
            default=0.5,
            help=f"{back_help('min_jaccard')} Default %(default)s.",
        )
        back.add_argument("--all-rules", action="store_true", help="Enable all five rules.")
        back.add_argument(
            "--no-evidence-links", action="store_true", help="Disable rule 5 (evidences)."
        )
        back.add_argument(
            "--include-archived", action="store_true", help=back_help("include_archived")
        )
        back.add_argument(
            "--reset-idempotency", action="store_true", help=back_help("reset_idempotency")
        )
        back.add_argument("--json", action="store_true", help="Print the result as JSON.")

        ren: CommandParser = sub.add_parser(
            "rename-project",
            help="List project tags, or rename/merge one project:<id> tag into another.",
        )
        ren.add_argument("names", nargs="*", metavar="OLD NEW", help="Same as --from OLD --to NEW.")

        # ProjectRenameInput's fields; OLD NEW is the command's shorter spelling of the two.
        def rename_help(name: str) -> str:
            return model_field_help(ProjectRenameInput, name)

        ren.add_argument("--from", dest="from_project", help=rename_help("from_project"))
        ren.add_argument("--to", dest="to_project", help=rename_help("to_project"))
        ren.add_argument(
            "--apply",
            action="store_true",
            help=f"{rename_help('apply')} The database is backed up first.",
        )
        ren.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["action"] == "backfill-relations":
            self._backfill(options)
        else:
            self._rename(options)

    def _out(self, options: dict[str, Any], result: Output, text: list[str]) -> None:
        if options["json"]:
            data = result.model_dump(mode="json", by_alias=True)
            self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(text))

    # --- backfill-relations -------------------------------------------------------------------

    def _backfill(self, o: dict[str, Any]) -> None:
        payload: dict[str, Any] = {
            "apply": o["apply"],
            "max_per_source": o["max_per_source"],
            "min_shared_tags": o["min_shared_tags"],
            "session_cooccurrence": o["session_cooccurrence"] or o["all_rules"],
            "name_tokens": o["name_tokens"] or o["all_rules"],
            "min_jaccard": o["min_jaccard"],
            "evidence_links": not o["no_evidence_links"],
            "include_archived": o["include_archived"],
            "reset_idempotency": o["reset_idempotency"],
        }
        if o["project"] is not None:
            payload["project"] = o["project"]
        data = validated(BackfillInput, payload)
        bar: tqdm[Any] | None = None

        def on_total(total: int) -> None:
            nonlocal bar
            if sys.stderr.isatty() and not o["json"] and total:
                bar = tqdm(total=total, unit="source", desc="Backfilling", file=sys.stderr)

        def progress(n: int) -> None:
            if bar is not None:
                bar.update(n)

        try:
            result = relations_backfill(data=data, on_total=on_total, progress=progress)
        finally:
            if bar is not None:
                bar.close()
        self._out(o, result, _backfill_text(result))

    # --- rename-project -----------------------------------------------------------------------

    def _rename(self, o: dict[str, Any]) -> None:
        names: list[str] = o["names"]
        if len(names) not in (0, 2):
            raise InvalidParameter("give both OLD and NEW (or --from and --to), or neither")
        if names and (o["from_project"] is not None or o["to_project"] is not None):
            raise InvalidParameter("give the names either as OLD NEW or with --from/--to")
        old, new = names if names else (o["from_project"], o["to_project"])
        if old is None and new is None:
            if o["apply"]:
                raise InvalidParameter("--apply needs --from and --to")
            listing = project_list()
            self._out(o, listing, _list_text(listing))
            return
        if old is None or new is None:
            raise InvalidParameter("give both --from and --to (or neither, to list)")
        payload = {"from_project": old, "to_project": new, "apply": o["apply"]}
        try:
            data = validated(ProjectRenameInput, payload)
        except InvalidInput as exc:  # the flags' names, not the model's
            flags = {"from_project": "--from", "to_project": "--to"}
            message = exc.message
            for name, flag in flags.items():
                message = message.replace(name, flag)
            field = flags.get(exc.field or "", exc.field)
            raise InvalidParameter(message, field=field) from None
        result = project_rename(data=data)
        self._out(o, result, _rename_text(result))


def _backfill_text(r: BackfillOutput) -> list[str]:
    n = r.candidatesProposed
    plural = "" if n == 1 else "s"
    if r.dryRun:
        out = [f"Proposed {n} relation{plural} (dry run: nothing written; --apply creates them)."]
    else:
        out = [f"Proposed {n} relation{plural}, created {r.edgesWritten}."]
    for c in r.candidates[:SHOWN]:
        out.append(f"  {c.from_}  --[{c.type}]-->  {c.to}   ({c.reason})")
    if n > SHOWN:
        out.append(f"  … {n - SHOWN} more (--json lists them all)")
    out.append("By rule:")
    out.extend(f"  {rule}: {count}" for rule, count in r.byRule.items())
    out.append(f"Orphans considered: {r.orphansConsidered}; evidence: {r.evidenceConsidered}.")
    if r.orphansSkippedIdempotent:
        out.append(
            f"idempotency: skipped {r.orphansSkippedIdempotent} orphans already attempted in a "
            "prior run (--reset-idempotency reconsiders them)."
        )
    if r.orphansMarkedProcessed:
        out.append(f"idempotency: marked {r.orphansMarkedProcessed} orphans as attempted.")
    return out


def _list_text(r: ProjectListOutput) -> list[str]:
    if not r.projects:
        return ["No project:* tags found."]
    out = ["Project tags (entity count):"]
    out.extend(f"  {p.count:>5}  {p.project}" for p in r.projects)
    if r.similar:
        out.append("")
        out.append("Possibly one project under several spellings:")
        out.extend(f"  {'  '.join(group)}" for group in r.similar)
    out.append("")
    out.append("Rewrite one with:  memesh kg rename-project --from OLD --to NEW   (--apply writes)")
    return out


def _rename_text(r: ProjectRenameOutput) -> list[str]:
    n = r.affectedEntities
    entities = "entity carries" if n == 1 else "entities carry"
    head = f"{r.fromTag} → {r.toTag}"
    if n == 0:
        return [f"{head}: no entity carries {r.fromTag}; nothing to do."]
    if r.dryRun:
        out = [f"Dry run: {head}", f"  {n} {entities} {r.fromTag}"]
        out.append(
            f"  {r.renamed} would be renamed, {r.merged} already carry {r.toTag} (their "
            f"{r.fromTag} would be removed)"
        )
    else:
        out = [f"Renamed {head}: {r.renamed} renamed, {r.merged} merged ({n} entities)"]
    out.extend(f"    {name}" for name in r.affectedNames[:SHOWN])
    if n > SHOWN:
        out.append(f"    … {n - SHOWN} more (--json lists them all)")
    if r.dryRun:
        out.append("Nothing written. Add --apply to write (the database is backed up first).")
    else:
        out.append(f"  Backup: {r.backupPath}")
        if r.restoreCommand:
            out.append("  To restore it, stop every memesh process (serve, mcp, worker), then run:")
            out.append(f"    {r.restoreCommand}")
    return out
