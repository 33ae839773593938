"""The targets issues set for memesh's speed, as data, and their verdicts on a results dict.

Each target reads a measured value out of the results bench/run_all.py writes and compares it
with the limit an issue set, so a verdict can never disagree with the figure beside it in
docs/benchmarks.md (bench/report_render.py renders the table).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.report_format import fmt

Results = dict[str, Any]


# --- reading figures out of the results -------------------------------------------------------


def section_data(results: Results, name: str) -> dict[str, Any] | None:
    section = results.get("sections", {}).get(name)
    if not section or section.get("error"):
        return None
    data = section.get("data")
    return data if isinstance(data, dict) else None


def recall_size(results: Results, entities: int) -> dict[str, Any] | None:
    data = section_data(results, "recall")
    for size in (data or {}).get("sizes", []):
        if size.get("entities") == entities and size.get("bench"):
            return size
    return None


def worst_recall_p50(results: Results, entities: int, kind: str) -> float | None:
    """The largest p50 over the 1-, 3- and 8-word queries: a target holds only if all do."""
    size = recall_size(results, entities)
    rows = (size or {}).get("bench", {}).get(kind) or []
    values = [row["recall"]["p50"] for row in rows]
    return max(values) if values else None


def remember_rate(results: Results, entities: int) -> float | None:
    size = recall_size(results, entities)
    if not size:
        return None
    remember = size["bench"].get("remember") or (size.get("seeding") or {}).get("remember")
    return remember["per_second"] if remember else None


def http_level(results: Results, kind: str, clients: int) -> dict[str, Any] | None:
    data = section_data(results, "http")
    for row in (data or {}).get(kind, []):
        if row.get("clients") == clients:
            return row
    return None


def writers_level(results: Results, writers: int) -> dict[str, Any] | None:
    data = section_data(results, "writers")
    for row in (data or {}).get("levels", []):
        if row.get("writers") == writers:
            return row
    return None


def _get(row: dict[str, Any] | None, key: str) -> float | None:
    value = (row or {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


# --- targets -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    label: str  # what is measured, e.g. "req/s"
    value: Callable[[Results], float | None]
    op: str  # "<=", "<", ">=", ">"
    limit: float
    unit: str


@dataclass(frozen=True)
class Target:
    name: str
    source: str  # where the target was set
    checks: tuple[Check, ...]


OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
}
OP_TEXT = {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}

TARGETS = (
    Target(
        "hybrid recall p50 at 10k memories (every query size)",
        "semantic-recall issue",
        (Check("worst p50", lambda r: worst_recall_p50(r, 10_000, "hybrid"), "<=", 25, "ms"),),
    ),
    Target(
        "hybrid recall p50 at 100k memories (every query size)",
        "semantic-recall issue",
        (Check("worst p50", lambda r: worst_recall_p50(r, 100_000, "hybrid"), "<=", 40, "ms"),),
    ),
    Target(
        "keyword recall p50 at 10k memories (every query size)",
        "recall issue (keyword)",
        (Check("worst p50", lambda r: worst_recall_p50(r, 10_000, "recall"), "<=", 3, "ms"),),
    ),
    Target(
        "keyword recall p50 at 100k memories (every query size)",
        "recall issue (keyword)",
        (Check("worst p50", lambda r: worst_recall_p50(r, 100_000, "recall"), "<=", 10, "ms"),),
    ),
    Target(
        "remember in process, embedding deferred (seeding 10k)",
        "semantic-recall issue",
        (Check("rate", lambda r: remember_rate(r, 10_000), ">=", 500, "/s"),),
    ),
    Target(
        "HTTP recall with 4 clients",
        "REST issue",
        (
            Check(
                "throughput",
                lambda r: _get(http_level(r, "recall", 4), "per_second"),
                ">=",
                400,
                "req/s",
            ),
            Check("p99", lambda r: _get(http_level(r, "recall", 4), "p99"), "<", 50, "ms"),
        ),
    ),
    Target(
        "8 concurrent writer processes",
        "issue 8",
        (
            Check(
                "throughput",
                lambda r: _get(writers_level(r, 8), "per_second"),
                ">=",
                200,
                "remembers/s",
            ),
            Check("p99", lambda r: _get(writers_level(r, 8), "p99"), "<", 250, "ms"),
        ),
    ),
)


def verdict(target: Target, results: Results) -> tuple[str, str]:
    """("met" | "missed" | "not measured", the measured values as text)."""
    parts: list[str] = []
    outcomes: list[bool | None] = []
    for check in target.checks:
        value = check.value(results)
        if value is None:
            parts.append(f"{check.label}: —")
            outcomes.append(None)
            continue
        parts.append(f"{check.label} {fmt(value)} {check.unit}")
        outcomes.append(OPS[check.op](value, check.limit))
    if any(o is None for o in outcomes):
        return "not measured", "; ".join(parts)
    return ("met" if all(outcomes) else "missed"), "; ".join(parts)


def targets_table(results: Results) -> list[str]:
    lines = ["| target | set by | limit | measured | verdict |", "|---|---|---|---|---|"]
    for target in TARGETS:
        outcome, measured = verdict(target, results)
        limit = "; ".join(
            f"{c.label} {OP_TEXT[c.op]} {fmt(c.limit)} {c.unit}" for c in target.checks
        )
        shown = f"**{outcome}**" if outcome != "not measured" else outcome
        lines.append(f"| {target.name} | {target.source} | {limit} | {measured} | {shown} |")
    return lines
