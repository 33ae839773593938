"""`memesh recall`: search memories from the shell, rendered as the reference describes: a
warning when degraded, a note when truncated, conflicts, and semantic-only results labelled."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from graph.ops.recall import RECALL

# Observations longer than this are capped on display (storage and --json keep them whole).
DISPLAY_CAP = 500


def scope_text(scope: dict[str, Any]) -> str:
    """Which memories were searched, as the CLI says it."""
    if scope["all_projects"]:
        return "every project"
    if not scope["no_project"]:
        return f"project {scope['project']} only"
    return f"project {scope['project']}, memories with no project and global ones"


def _cap(text: str) -> str:
    if len(text) <= DISPLAY_CAP:
        return text
    return f"{text[:DISPLAY_CAP]}… (+{len(text) - DISPLAY_CAP} more chars)"


class Command(OperationCommand):
    help = RECALL.summary
    operation = RECALL

    def add_operation_arguments(self, parser: CommandParser) -> None:
        # Help, limits and choices come from RecallInput's fields (one definition for every
        # transport); the CLI's own choice is only that words are positional.
        op = self.operation
        parser.add_argument("query", nargs="*", help=op.field_help("query"))
        parser.add_argument("--tag", help=op.field_help("tag"))
        parser.add_argument("--limit", type=int, help=op.field_help("limit"))
        parser.add_argument(
            "--namespace", choices=op.field_choices("namespace"), help=op.field_help("namespace")
        )
        parser.add_argument(
            "--include-archived", action="store_true", help=op.field_help("include_archived")
        )
        parser.add_argument("--project", help=op.field_help("project"))
        parser.add_argument(
            "--cross-project", action="store_true", help=op.field_help("cross_project")
        )
        parser.add_argument("--session", dest="session_id", help=op.field_help("session_id"))
        parser.add_argument(
            "--status", choices=op.field_choices("status"), help=op.field_help("status")
        )
        parser.add_argument(
            "--include-expired", action="store_true", help=op.field_help("include_expired")
        )

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(options, "tag", "limit", "namespace", "project", "session_id", "status")
        if options["query"]:
            payload["query"] = " ".join(options["query"])
        for flag in ("include_archived", "cross_project", "include_expired"):
            if options[flag]:
                payload[flag] = True
        return payload

    def render(self, result: dict[str, Any]) -> None:
        retrieval = result["retrieval"]
        if retrieval["degraded"]:
            self.stderr.write(
                "Warning: semantic search is configured but could not run; keyword results "
                "only (memesh doctor says why)."
            )
        for conflict in result.get("conflicts") or []:
            self.stdout.write(f"Warning: Conflicts detected: {conflict}")
        entities = result["entities"]
        if not entities:
            self.stdout.write(f"No memories found in {scope_text(result['scope'])}.")
            return
        matches = [e.get("match") for e in entities]
        if all(m and m["source"] == "semantic" for m in matches):
            self.stdout.write("No keyword matches. Closest memories by meaning — may be unrelated:")
        for entity, match in zip(entities, matches, strict=True):
            badge = ""
            if match and match["source"] == "semantic":
                badge = f" ~{round(match['relevance'] * 100)}% semantic"
            title = f" — {entity['title']}" if entity.get("title") else ""
            self.stdout.write(f"[{entity['type']}] {entity['name']}{title}{badge}")
            for observation in entity["observations"]:
                self.stdout.write(f"  - {_cap(observation)}")
        if retrieval["truncated"]:
            self.stdout.write("(limit reached — more may exist)")
        if not result["scope"]["all_projects"]:
            self.stdout.write(f"(searched {scope_text(result['scope'])}; --cross-project: all)")
