"""`memesh ping`: who memesh takes the caller to be, the embedder and the backend."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import OperationCommand, given
from graph.ops.ping import PING


class Command(OperationCommand):
    help = PING.summary
    operation = PING

    def add_operation_arguments(self, parser: CommandParser) -> None:
        op = self.operation
        parser.add_argument("--message", help=op.field_help("message"))
        parser.add_argument("--probe", action="store_true", help=op.field_help("probe"))

    def payload(self, options: dict[str, Any]) -> dict[str, Any]:
        payload = given(options, "message")
        if options["probe"]:
            payload["probe"] = True
        return payload

    def render(self, result: dict[str, Any]) -> None:
        embedder = result["embedder"]
        reach = {True: "reachable", False: "unreachable", None: "not probed"}[embedder["reachable"]]
        backend = result["backend"]
        self.stdout.write(result["message"])
        self.stdout.write(f"agent: {result['agent']['source_host']}")
        self.stdout.write(f"embedder: {embedder['identity'] or embedder['provider']} ({reach})")
        if embedder["error"]:
            self.stdout.write(f"  {embedder['error']}")
        self.stdout.write(
            f"backend: {backend['engine']} {backend['version']}, vectors "
            f"{'on' if backend['vectors'] else 'off'}, {backend['memories']} memories"
        )
