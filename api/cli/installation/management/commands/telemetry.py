"""`memesh telemetry [--window N] [--prune N] [--json]`: the per-flow LLM scorecard, through the
same service as GET /v1/telemetry (dream/telemetry.py)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand
from dream import telemetry


class Command(MemeshCommand):
    help = "Render the per-flow LLM telemetry scorecard for the last N days."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--window", default=None, metavar="DAYS", help="Look-back window (1–365, default 30)."
        )
        parser.add_argument(
            "--prune",
            type=int,
            default=None,
            metavar="DAYS",
            help="First delete telemetry older than DAYS days.",
        )
        parser.add_argument("--json", action="store_true", help="Print the scorecard as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        window = telemetry.parse_window(options["window"])
        pruned = None
        if options["prune"] is not None:
            pruned = telemetry.telemetry_prune(older_than_days=options["prune"])
        summary = telemetry.telemetry_summary(window_days=window)
        if pruned is not None:
            line = f"Pruned {pruned} rows older than {options['prune']} days."
            # With --json, stdout carries only the JSON document.
            (self.stderr if options["json"] else self.stdout).write(line)
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False))
            return
        self._render(summary)

    def _render(self, summary: telemetry.TelemetrySummary) -> None:
        days = summary["window_days"]
        if not summary["summaries"]:
            self.stdout.write(f"No LLM calls in the last {days} days.")
            return
        self.stdout.write(f"LLM telemetry, last {days} days")
        for flow in summary["summaries"]:
            calls = flow["total_calls"]
            rate = 100.0 * flow["successes"] / calls if calls else 0.0
            self.stdout.write("")
            self.stdout.write(
                f"{flow['flow']}: {calls} calls ({flow['total_attempts']} attempts), "
                f"{rate:.0f}% success, fallback used {flow['fallback_used']}×, "
                f"median {flow['median_latency_ms']} ms"
            )
            providers = ", ".join(
                f"{name} {c['ok']} ok / {c['fail']} failed"
                for name, c in sorted(flow["by_provider"].items())
            )
            self.stdout.write(f"  providers: {providers}")
            if flow["by_error_class"]:
                chips = " ".join(
                    f"[{name} ×{count}]" for name, count in sorted(flow["by_error_class"].items())
                )
                self.stdout.write(f"  errors: {chips}")
            for sample in flow["sample_errors"]:
                self.stdout.write(f"    {sample['error_class']}: {sample['message']}")
