"""`memesh remember`: store a memory from the shell (the `remember` operation)."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import (
    PROJECT_HELP,
    PROVENANCE_OPTIONS,
    OperationCommand,
    add_provenance_arguments,
    given,
)
from graph.ops.remember import REMEMBER
from graph.search.citations import handle


class Command(OperationCommand):
    help = REMEMBER.summary
    operation = REMEMBER

    def add_operation_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", help="Entity name (1-255 characters).")
        parser.add_argument("--type", help="Entity type, e.g. decision, lesson_learned, note.")
        parser.add_argument("--title", help="Human-readable label (at most 200 characters).")
        parser.add_argument(
            "--obs", action="append", dest="observations", help="An observation (repeatable)."
        )
        parser.add_argument("--tag", action="append", dest="tags", help="A tag (repeatable).")
        parser.add_argument("--namespace", choices=["personal", "team", "global"])
        parser.add_argument(
            "--supersedes", nargs="+", default=[], help="Archive these entities at once."
        )
        parser.add_argument(
            "--contradicts", nargs="+", default=[], help="Report a conflict with these on recall."
        )
        parser.add_argument("--note", help="Free text: first line title, paragraphs observations.")
        parser.add_argument("--replace", action="store_true", help="Rewrite the observations.")
        parser.add_argument("--why", help="The reason for a decision.")
        parser.add_argument("--project", help=PROJECT_HELP)
        parser.add_argument(
            "--session",
            dest="session_id",
            help="Session id: a memory this text cites as [mem:ID] counts once per session.",
        )
        add_provenance_arguments(parser, self.operation)
        parser.add_argument(
            "--parent-id",
            dest="parent_id",
            type=int,
            help=self.operation.field_help("parent_id"),
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(
            options,
            "name", "type", "title", "observations", "tags", "namespace", "note", "why",
            "project", "session_id", "parent_id", *PROVENANCE_OPTIONS,
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
