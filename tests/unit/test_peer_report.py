"""bench/peer_report.py and the page it renders into, on synthetic runs: ratios are paired within
a round, targets apply at the sizes the issue names, verdicts follow from the numbers beside
them, and bench/peer_compare.py replaces only its own section of results.json. It measures
nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench import peer_compare, peer_report, report_render

PeerRun = Callable[..., dict[str, Any]]  # the conftest's peer_run fixture


def row(rows: list[peer_report.Row], entities: int | None, starts: str) -> peer_report.Row:
    return next(r for r in rows if r.entities == entities and r.measure.startswith(starts))


def size_of(n: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"entities": n, "runs": runs}


def test_a_ratio_is_the_median_of_the_pairs_not_the_ratio_of_the_medians(
    peer_run: PeerRun,
) -> None:
    # Round 2 ran on a machine three times faster: only within-round ratios are comparable.
    size = size_of(
        1_000,
        [
            peer_run("memesh", 1, remember=100),
            peer_run("peer", 1, remember=50),
            peer_run("memesh", 2, remember=300),
            peer_run("peer", 2, remember=300),
        ],
    )
    rows = peer_report.ratio_rows({"sizes": [size]})
    remember = row(rows, 1_000, "remember")
    assert remember.pairs == [2.0, 1.0]
    assert remember.ratio == 1.5
    assert (remember.memesh, remember.peer) == (200, 175)
    assert remember.verdict == "met"  # ≥ 1.5 at every size


def test_a_round_without_both_runs_gives_no_ratio(peer_run: PeerRun) -> None:
    size = size_of(
        1_000,
        [
            peer_run("memesh", 1, remember=100),
            {"system": "peer", "round": 1, "error": "RuntimeError: it did not start"},
            peer_run("memesh", 2, remember=90),
            peer_run("peer", 2, remember=100),
        ],
    )
    remember = row(peer_report.ratio_rows({"sizes": [size]}), 1_000, "remember")
    assert remember.pairs == [0.9]
    assert remember.verdict == "missed"


def test_recall_shows_the_least_favourable_query_length(peer_run: PeerRun) -> None:
    size = size_of(
        10_000,
        [
            peer_run("memesh", 1, settled=(5.0, 9.0, 6.0)),
            peer_run("peer", 1, settled=(10.0, 10.0, 10.0)),
        ],
    )
    settled = row(peer_report.ratio_rows({"sizes": [size]}), 10_000, "recall p50 ms settled")
    assert "(3-word)" in settled.measure
    assert settled.ratio == pytest.approx(0.9)
    assert settled.verdict == "met"  # ≤ 1 at 10k


@pytest.mark.parametrize(
    ("entities", "memesh_ms", "expected"),
    [
        (1_000, 50.0, ""),  # no target at 1k
        (10_000, 9.0, "met"),  # ≤ 1× MeMesh at 10k
        (50_000, 9.0, "missed"),  # ≤ 0.5× MeMesh at 50k and 100k
        (100_000, 5.0, "met"),
    ],
)
def test_recall_targets_apply_at_the_sizes_the_issue_names(
    peer_run: PeerRun, entities: int, memesh_ms: float, expected: str
) -> None:
    size = size_of(
        entities,
        [
            peer_run("memesh", 1, cold=(memesh_ms,) * 3, settled=(memesh_ms,) * 3),
            peer_run("peer", 1, cold=(10.0,) * 3, settled=(10.0,) * 3),
        ],
    )
    rows = peer_report.ratio_rows({"sizes": [size]})
    for phase in peer_report.PHASES.values():
        assert row(rows, entities, f"recall p50 ms {phase}").verdict == expected


def test_the_backlog_is_checked_on_memesh_alone_and_an_undrained_run_misses(
    peer_run: PeerRun,
) -> None:
    drained = size_of(1_000, [peer_run("memesh", 1, drain_s=100.0), peer_run("peer", 1)])
    stuck = size_of(1_000, [peer_run("memesh", 1, drain_s=None), peer_run("peer", 1)])
    ok = row(peer_report.ratio_rows({"sizes": [drained]}), 1_000, "backlog")
    assert (ok.own, ok.ratio, ok.verdict) == (True, 100.0, "met")
    missed = row(peer_report.ratio_rows({"sizes": [stuck]}), 1_000, "backlog")
    assert "not drained" in missed.measure
    assert (missed.ratio, missed.verdict) == (900.0, "missed")  # the seconds it waited


def test_latency_while_draining_is_divided_by_settled_within_the_run(peer_run: PeerRun) -> None:
    size = size_of(
        1_000,
        [
            peer_run("memesh", 1, cold=(12.0, 10.0, 30.0), settled=(10.0, 10.0, 20.0)),
            peer_run("peer", 1),
        ],
    )
    draining = row(peer_report.ratio_rows({"sizes": [size]}), 1_000, "recall p50 while draining")
    assert draining.ratio == pytest.approx(1.5)  # 8-word: 30 / 20
    assert "(8-word at worst)" in draining.measure
    assert draining.verdict == "missed"  # ≤ 1.25


def test_the_cli_ratio_is_the_median_of_its_interleaved_pairs(
    peer_section: dict[str, Any],
) -> None:
    rows = peer_report.ratio_rows(peer_section["data"])
    remember = row(rows, None, "`remember`")
    assert remember.pairs == [2.0, 2.4]
    assert remember.ratio == pytest.approx(2.2)
    assert remember.verdict == "missed"  # ≤ 2


def test_the_section_renders_every_table_and_names_its_provenance(
    peer_section: dict[str, Any],
) -> None:
    page = report_render.render({"sections": {"peer": peer_section}})
    assert f"## {report_render.SECTION_TITLES['peer']}" in page
    assert ".venv/bin/python -m bench.peer_compare --sizes 1k,10k" in page
    assert "Code: `abc1234`" in page
    assert "| memories | measure | memesh | MeMesh 4.6 | memesh ÷ MeMesh |" in page
    assert "| 10k | 8-word |" in page  # latency by query length
    assert "MeMesh 4.6 settled | targeted queries |" in page  # hit@1
    assert "| `--help` | 1.10 |" in page  # CLI wall times
    assert "stats 5" in page  # the errors the workload counted are shown
    assert "Not run yet: `.venv/bin/python -m bench.run_all --only recall`" in page


def test_the_settled_pass_is_described_as_the_queries_it_asked(
    peer_section: dict[str, Any],
) -> None:
    # Rounds measured before unseen queries replayed the workload's own (cached on memesh).
    assert "*settled* is the same queries again" in report_render.render(
        {"sections": {"peer": peer_section}}
    )
    unseen = copy.deepcopy(peer_section)
    for size in unseen["data"]["sizes"]:
        for run in size["runs"]:
            run["settled_repeat"] = run.get("settled")
    page = report_render.render({"sections": {"peer": unseen}})
    assert "*settled* is as many queries of the same kinds that the server has not seen" in page


def test_without_a_peer_section_the_page_says_how_to_measure_it() -> None:
    page = report_render.render({"sections": {}})
    assert "Not run yet: `.venv/bin/python -m bench.peer_compare`." in page


def test_writing_replaces_the_peer_section_and_keeps_the_others(
    tmp_path: Path, peer_section: dict[str, Any]
) -> None:
    out = tmp_path / "benchmarks.md"
    data_dir = tmp_path / "benchmarks"
    data_dir.mkdir()
    kept = {"date": "2026-11-29", "error": "RuntimeError: kept as it was"}
    (data_dir / "results.json").write_text(
        json.dumps({"sections": {"quality": kept, "peer": {"error": "an older run"}}})
    )
    peer_compare.write_page(peer_section, out)
    results = json.loads((data_dir / "results.json").read_text())
    assert results["sections"]["quality"] == kept
    assert results["sections"]["peer"]["data"] == peer_section["data"]
    assert results["sections"]["peer"]["plots"] == ["peer.png"]
    assert (data_dir / "peer.png").exists()
    page = out.read_text()
    assert "**Failed**: RuntimeError: kept as it was" in page
    assert "an older run" not in page
    assert "![peer.png](benchmarks/peer.png)" in page


def test_sizes_are_read_like_the_issue_writes_them() -> None:
    assert peer_compare.parse_sizes("1k,10k,50k,100k") == (1_000, 10_000, 50_000, 100_000)
    assert peer_compare.parse_sizes("500, 2k") == (500, 2_000)
