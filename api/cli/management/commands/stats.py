"""`memesh stats`: aggregate counts of the memory graph (the `stats` operation)."""

from __future__ import annotations

from typing import Any

from api.cli.base import OperationCommand
from graph.ops.stats import STATS


class Command(OperationCommand):
    help = "Show totals and the type, tag and status distributions of the memory graph."
    operation = STATS
    json_help = "Print the counts as JSON (GET /v1/stats's data)."

    def render(self, result: dict[str, Any]) -> None:
        lines = [
            f"Entities:     {result['totalEntities']}",
            f"Observations: {result['totalObservations']}",
            f"Relations:    {result['totalRelations']}",
            f"Tags:         {result['totalTags']} distinct",
        ]
        for title, key, label in (
            ("Statuses", "statusDistribution", "status"),
            ("Types", "typeDistribution", "type"),
            ("Tags", "tagDistribution", "tag"),
        ):
            if result[key]:
                lines += ["", f"{title}:"]
                lines += [f"  {row['count']:>6}  {row[label]}" for row in result[key]]
        self.stdout.write("\n".join(lines))
