"""The CLI half of api/retired.py: `memesh consolidate` and `memesh verify` print the pointer
and exit 1, taking whatever arguments a script written before the retirement passes."""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand, fail
from api.retired import RETIRED


class _AnyArguments(CommandParser):
    """Takes whatever a script written before the retirement passes (`--name X`), so it gets
    the pointer rather than a usage error."""

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        options, _ = self.parse_known_args(args, namespace)
        return options


class RetiredCommand(MemeshCommand):
    """`memesh consolidate`, `memesh verify`: the pointer, exit 1."""

    feature: ClassVar[str]  # the key of RETIRED
    migrates = False  # never opens the database

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.__class__ = _AnyArguments
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--json", action="store_true", help="Print the failure envelope as JSON on stderr."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        fail(self, RETIRED[self.feature].cli_failure(), as_json=bool(options["json"]))
