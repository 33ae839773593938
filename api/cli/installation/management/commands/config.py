"""`memesh config list | set <key> <value> | unset <key>`: the configuration file, through the
same service as GET/POST /v1/config (core/config_sections.py; `list` adds the capabilities,
dream/capabilities.py). Every key prints as `***`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from core import config_sections, config_store
from dream import capabilities


class Command(MemeshCommand):
    help = (
        "Show or change memesh's configuration (MEMESH_HOME/config.json; memesh-config.json "
        "in a home shared with the original MeMesh)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="list|set|unset")
        list_parser = sub.add_parser("list", help="Print the configuration (keys masked).")
        set_parser = sub.add_parser(
            "set", help="Set KEY to VALUE (JSON when it parses as JSON, else a string)."
        )
        set_parser.add_argument("key", help="A config key, or object.field (llm.model).")
        set_parser.add_argument("value")
        unset_parser = sub.add_parser("unset", help="Remove KEY.")
        unset_parser.add_argument("key")
        for child in (list_parser, set_parser, unset_parser):
            child.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "list":
            result: Mapping[str, Any] = capabilities.config_get()
        else:
            from dream.tasks import config_saved  # imports Celery: only on a write

            if action == "set":
                value = config_sections.parse_cli_value(options["value"])
                change = config_sections.config_set(options["key"], value)
            else:
                change = config_sections.config_unset(options["key"])
            result = {"config": config_saved(change)}
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
            return
        if action == "set":
            self.stdout.write(f"Set {options['key']}.")
        elif action == "unset":
            self.stdout.write(f"Unset {options['key']}.")
        current = result["config"]
        if not current:
            self.stdout.write(f"No configuration set ({config_store.config_path().name} is empty).")
        for key, value in current.items():
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            self.stdout.write(f"{key} = {shown}")
