"""`memesh work-package prepare|submit|defer` (POST /v1/work_package;
dream/work_package/operation.py): prepare one bounded package for an agent, submit its one result
for human review, or defer. The workspace root of a transcript package is --workspace-root, else
this directory; a person reviews what is submitted with `memesh dream accept|reject` or at /review/.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, cli_context, given
from core.errors import InvalidInput
from core.invocation import caller_directory
from dream.work_package.operation import WORK_PACKAGE
from graph.ops.kit.operation import CallContext


class Command(OperationCommand):
    help = WORK_PACKAGE.summary
    operation = WORK_PACKAGE

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        # Not argparse choices: `apply` must reach the operation and be refused with its code.
        parser.add_argument("action", nargs="?", help=op.field_help("action"))
        parser.add_argument("--kind", choices=op.field_choices("kind"), help=op.field_help("kind"))
        parser.add_argument("--project", help=op.field_help("project"))
        parser.add_argument(
            "--workspace-root", dest="workspace_root", help=op.field_help("workspace_root")
        )
        parser.add_argument("--package-id", dest="package_id", help=op.field_help("package_id"))
        parser.add_argument("--source-hash", dest="source_hash", help=op.field_help("source_hash"))
        parser.add_argument(
            "--workspace-hash", dest="workspace_hash", help=op.field_help("workspace_hash")
        )
        parser.add_argument("--result", metavar="JSON", help=op.field_help("result"))

    def call_context(self) -> CallContext:
        # The CLI's workspace root is the directory it runs in (a --workspace-root wins).
        return replace(cli_context(), workspace_roots=(caller_directory(),))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(
            options,
            "action",
            "kind",
            "project",
            "workspace_root",
            "package_id",
            "source_hash",
            "workspace_hash",
        )
        if options["result"] is not None:
            try:
                payload["result"] = json.loads(options["result"])
            except ValueError as exc:
                raise InvalidInput(f"--result is not JSON: {exc}", field="result") from None
        return payload

    def render(self, result: dict[str, Any]) -> None:
        if result["action"] == "defer":
            self.stdout.write("Deferred: nothing was written.")
        elif result["action"] == "submit":
            proposal = result["proposal"]
            verb = "Staged" if proposal["created"] else "Already there:"
            self.stdout.write(
                f"{verb} proposal #{proposal['id']} ({proposal['kind']}, {proposal['status']}); "
                f"a person reviews it at {proposal['review_path']} or with "
                f"`memesh dream accept|reject {proposal['id']}`."
            )
        elif not result["available"]:
            self.stdout.write(f"No package: {result['reason']}")
        else:
            package = result["package"]
            self.stdout.write(
                f"Package {package['package_id']} ({package['kind']}, {package['items']} items)\n"
                f"source_hash: {package['source_hash']}\n"
                f"workspace_hash: {package['workspace_hash']}\n\n"
                f"{package['instructions']}\n\n{package['material']}\n\n{package['next']}"
            )
