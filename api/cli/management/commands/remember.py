"""`memesh remember`: store a memory from the shell (the `remember` operation)."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import ProvenanceCommand, flag_help, given
from graph.ops.remember import REMEMBER
from graph.search.citations import handle


class Command(ProvenanceCommand):
    help = REMEMBER.summary
    operation = REMEMBER

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument("--name", help=op.field_help("name"))
        parser.add_argument("--type", help=op.field_help("type"))
        parser.add_argument("--title", help=op.field_help("title"))
        parser.add_argument(
            "--obs",
            action="append",
            dest="observations",
            help=flag_help(op, "observations", repeatable=True),
        )
        parser.add_argument(
            "--tag", action="append", dest="tags", help=flag_help(op, "tags", repeatable=True)
        )
        parser.add_argument(
            "--namespace", choices=op.field_choices("namespace"), help=op.field_help("namespace")
        )
        # No field of their own: each name becomes a `relations` item of that type, the two
        # types that act (RelationInput.type says what they do); other relations: --input.
        parser.add_argument(
            "--supersedes", nargs="+", default=[], help="Archive these entities at once."
        )
        parser.add_argument(
            "--contradicts", nargs="+", default=[], help="Report a conflict with these on recall."
        )
        parser.add_argument("--note", help=op.field_help("note"))
        parser.add_argument("--replace", action="store_true", help=op.field_help("replace"))
        parser.add_argument("--why", help=op.field_help("why"))
        # The flag takes a project id only (`--project false` names a project "false"); the
        # field's `false`, a memory of no project, is reached with --input.
        parser.add_argument(
            "--project",
            help=f"{op.field_help('project')} This flag takes an id only; for no project, "
            'pass --input with `"project": false`.',
        )
        parser.add_argument("--session", dest="session_id", help=op.field_help("session_id"))
        parser.add_argument(
            "--parent-id", dest="parent_id", type=int, help=op.field_help("parent_id")
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(
            options,
            "name", "type", "title", "observations", "tags", "namespace", "note", "why",
            "project", "session_id", "parent_id",
        )  # fmt: skip
        if options["replace"]:
            payload["replace"] = True
        relations = [{"to": n, "type": "supersedes"} for n in options["supersedes"]]
        relations += [{"to": n, "type": "contradicts"} for n in options["contradicts"]]
        if relations:
            payload["relations"] = relations
        return payload

    def render(self, result: dict[str, Any]) -> None:
        verb = "Stored" if result.get("created") else "Updated"
        self.stdout.write(f"{verb}: {result['name']} ({result['trust']['status']})")
        for name in result.get("superseded") or []:
            self.stdout.write(f"archived as superseded: {name}")
        if result.get("cited"):
            cited = ", ".join(handle(i) for i in result["cited"])
            self.stdout.write(f"cited (counted as helpful): {cited}")
        errors = result.get("relationErrors") or []
        for error in errors:
            self.stderr.write(f"relation not created: {error}")
        if errors:
            # The consequence asked for did not happen: the command does not claim it did.
            sys.exit(1)
