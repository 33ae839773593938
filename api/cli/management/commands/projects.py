"""`memesh projects`: the projects the memories are filed under (the `projects` operation)."""

from __future__ import annotations

from typing import Any

from api.cli.base import OperationCommand
from graph.ops.projects import PROJECTS


class Command(OperationCommand):
    help = "List the projects of the active memories, with counts and types."
    operation = PROJECTS
    json_help = "Print the list as JSON (GET /v1/projects's data)."

    def render(self, result: Any) -> None:
        if not result:
            self.stdout.write("No memories are filed under a project.")
            return
        for project in result:
            types = ", ".join(project["types"])
            self.stdout.write(
                f"{project['name']}: {project['count']} ({project['source']}) — {types}"
            )
