"""The benchmark page's renderer (bench/report_render.py) on a small synthetic results dict:
every section appears, and each target's verdict follows from the numbers beside it. This
tests the renderer's logic; it measures nothing."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from bench import report_render, run_all, targets

MACHINE = {
    "cpu_model": "Test CPU",
    "cores": 2,
    "ram_gb": 4.0,
    "os": "Linux-test",
    "python": "3.11.7",
    "sqlite": "3.51.1",
    "driver": "pysqlite3",
    "sqlite_vec": "0.1.9",
}


def latency(p50: float) -> dict[str, float]:
    return {"p50": p50, "p95": p50 * 2, "mean": p50, "n": 10}


def recall_size(entities: int, keyword_p50: float, hybrid_p50: float) -> dict[str, Any]:
    return {
        "entities": entities,
        "peak_rss_mb": 300.0,
        "cached": False,
        "seeding": None,
        "bench": {
            "remember": {"count": entities, "per_second": 800.0, "p50": 0.9, "p95": 1.5},
            "recall": [
                {"words": w, "recall": latency(keyword_p50 + w / 10), "bare_match": latency(1)}
                for w in (1, 3, 8)
            ],
            "hybrid": [
                {
                    "words": w,
                    "recall": latency(hybrid_p50 + w / 10),
                    "embed_query": latency(4),
                    "vector_search": latency(5),
                }
                for w in (1, 3, 8)
            ],
            "backfill": {"embedded": 100, "per_second": 40.0, "synthesised": 0},
            "empty_query": latency(0.7),
            "db_mb": {"db": 40.0, "db_wal": 5.0, "total": 45.0},
        },
    }


def http_rows(recall_per_second: float, recall_p99: float) -> list[dict[str, Any]]:
    return [
        {
            "clients": c,
            "requests": 100,
            "per_second": recall_per_second,
            "p50": 5.0,
            "p95": 10.0,
            "p99": recall_p99,
            "non_200": 0,
        }
        for c in (1, 4, 16)
    ]


def section(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "quick": False,
        "date": "2026-11-30",
        "machine": MACHINE,
        "commit": "abc1234",
        "command": ".venv/bin/python -m bench.run_all --only x",
        "seconds": 1.0,
        "steps": [],
        "data": data,
    }


def quality() -> dict[str, Any]:
    m = {"hit@1": 0.5, "hit@5": 0.75, "hit@10": 0.8, "mrr": 0.6}
    groups = {"all": {"forward": m, "reverse": m}}
    return {
        "memories": 10,
        "queries": 4,
        "groups": {"all": 4},
        "results": {"keyword": {"groups": groups, "ms_per_query": 2.0}},
        "orders_agree": True,
    }


@pytest.fixture
def results(peer_section: dict[str, Any]) -> dict[str, Any]:
    return {
        "sections": {
            "peer": peer_section,
            "recall": section(
                {
                    "sizes": [
                        recall_size(1_000, 1.0, 10.0),
                        recall_size(10_000, 2.0, 20.0),  # hybrid worst 20.8 ms <= 25: met
                        recall_size(100_000, 20.0, 45.0),  # hybrid worst 45.8 ms > 40: missed
                    ]
                }
            ),
            "http": section(
                {
                    "entities": 1000,
                    "embedder": "none",
                    "recall": http_rows(450.0, 40.0),
                    "remember": http_rows(300.0, 60.0),
                    "server_peak_rss": {"processes": 1, "sum_mb": 120.0, "max_mb": 120.0},
                }
            ),
            "mcp": section(
                {
                    "tool_calls": {
                        "embedder": "none",
                        "connect_ms": 900.0,
                        "remember": {
                            **latency(2),
                            "p99": 8.0,
                            "calls": 10,
                            "per_second": 300.0,
                            "errors": 0,
                        },
                        "recall": {
                            **latency(3),
                            "p99": 9.0,
                            "calls": 10,
                            "per_second": 250.0,
                            "errors": 0,
                        },
                    },
                    "cold_start": {
                        "runs": 2,
                        "embedder": "local",
                        "initialize": {"median_ms": 900.0, "min_ms": 800.0, "max_ms": 1000.0},
                        "first_recall": {"median_ms": 1200.0, "min_ms": 1100.0, "max_ms": 1300.0},
                    },
                }
            ),
            "import": section(
                {
                    "entities": 1000,
                    "bundle_mb": 0.6,
                    "round_trip_identical": True,
                    "steps": {"seed import (A)": {"seconds": 2.0, "peak_rss_mb": 99.0}},
                }
            ),
            "reindex": section(
                {
                    "runs": [
                        {
                            "embedder": "local",
                            "entities": 100,
                            "seconds": 5.0,
                            "startup_seconds": 1.0,
                            "peak_rss_mb": 330.0,
                            "result": {},
                        },
                    ],
                }
            ),
            "writers": section(
                {
                    "levels": [
                        {
                            "writers": n,
                            "operations": 500,
                            "per_second": 150.0 + 10 * n,
                            "p50": 10.0,
                            "p95": 50.0,
                            "p99": 300.0,
                            "errors": 0,
                        }
                        for n in (1, 2, 4, 8)
                    ]
                }
            ),
            "quality": section(quality()),
            "hosts": section(
                {
                    "codex": {
                        "session-start": {
                            way: {"runs": 3, "median_s": 0.3, "max_s": 0.4}
                            for way in ("fresh served", "warm served")
                        }
                    }
                }
            ),
        }
    }


def verdicts(markdown: str) -> dict[str, str]:
    """Target name -> verdict, read back from the rendered targets table."""
    out = {}
    for target in targets.TARGETS:
        row = next(line for line in markdown.splitlines() if line.startswith(f"| {target.name} |"))
        out[target.name] = row.rstrip(" |").rsplit("|", 1)[1].strip().strip("*")
    return out


def test_the_page_has_every_section_with_its_provenance(results: dict[str, Any]) -> None:
    page = report_render.render(results)
    for name in report_render.PAGE_ORDER:
        assert f"## {report_render.SECTION_TITLES[name]}" in page
    assert "## Targets" in page
    assert "## Peak memory and database size" in page
    assert page.count("Test CPU, 2 cores") == len(report_render.PAGE_ORDER)
    assert "Not run yet" not in page
    assert "quick run" not in page.lower()


def test_kept_notes_are_copied_after_the_measured_sections_and_a_page_without_them_has_none(
    results: dict[str, Any], tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "20-second.md").write_text("### Second note\n\n| a |\n")
    (notes / "10-first.md").write_text("### First note\n\nfigures\n")
    page = report_render.render(results, "benchmarks", run_all.kept_notes(tmp_path))
    tail = page.split(f"## {report_render.NOTES_TITLE}", 1)[1]
    assert tail.index("### First note") < tail.index("### Second note")
    assert page.index("## Peak memory and database size") < page.index(report_render.NOTES_TITLE)
    assert report_render.NOTES_TITLE not in report_render.render(results)


def test_verdicts_are_computed_from_the_numbers(results: dict[str, Any]) -> None:
    got = verdicts(report_render.render(results))
    assert got["hybrid recall p50 at 10k memories (every query size)"] == "met"
    assert got["hybrid recall p50 at 100k memories (every query size)"] == "missed"
    assert got["keyword recall p50 at 10k memories (every query size)"] == "met"
    assert got["keyword recall p50 at 100k memories (every query size)"] == "missed"
    assert got["remember in process, embedding deferred (seeding 10k)"] == "met"
    assert got["HTTP recall with 4 clients"] == "met"  # 450/s and p99 40 ms
    assert got["8 concurrent writer processes"] == "missed"  # 230/s but p99 300 ms


def test_a_verdict_flips_when_its_figure_crosses_the_limit(results: dict[str, Any]) -> None:
    slower = copy.deepcopy(results)
    for row in slower["sections"]["http"]["data"]["recall"]:
        row["p99"] = 50.0  # the limit is p99 < 50 ms: equal misses
    for row in slower["sections"]["writers"]["data"]["levels"]:
        row["p99"] = 249.0
    got = verdicts(report_render.render(slower))
    assert got["HTTP recall with 4 clients"] == "missed"
    assert got["8 concurrent writer processes"] == "met"


def test_missing_sections_are_not_measured_and_named(results: dict[str, Any]) -> None:
    del results["sections"]["writers"]
    results["sections"]["recall"]["data"]["sizes"].pop()  # no 100k row
    results["sections"]["quality"]["quick"] = True
    page = report_render.render(results)
    got = verdicts(page)
    assert got["8 concurrent writer processes"] == "not measured"
    assert got["hybrid recall p50 at 100k memories (every query size)"] == "not measured"
    assert "Not run yet: `.venv/bin/python -m bench.run_all --only writers`" in page
    assert "Quick run" in page


def test_a_failed_section_shows_its_error_and_no_verdict(results: dict[str, Any]) -> None:
    results["sections"]["http"]["error"] = "RuntimeError: the server did not start"
    page = report_render.render(results)
    assert "**Failed**: RuntimeError: the server did not start" in page
    assert verdicts(page)["HTTP recall with 4 clients"] == "not measured"
