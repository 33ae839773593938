"""Unit tests: pure Python, no database (pytest-django refuses database access to a test
without the django_db mark). Tokenizer, scoring, schema export, project parsing, the embedder
and LLM wire formats against fake loopback servers; the benchmark pages' renderers on synthetic
figures (the peer fixtures below)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from graph.embedding.local import LocalMiniLM

PeerRun = Callable[..., dict[str, Any]]


def _by_words(p50: tuple[float, float, float], p99: float) -> dict[str, Any]:
    return {
        f"{w}w": {"n": 10, "p50_ms": ms, "p99_ms": p99}
        for w, ms in zip((1, 3, 8), p50, strict=True)
    }


@pytest.fixture(scope="module")
def model() -> LocalMiniLM:
    """The bundled local model (onnxruntime), loaded once for each module that asks for it;
    imported here only then, so the other unit tests do not load onnxruntime."""
    from graph.embedding.local import LocalMiniLM

    return LocalMiniLM()


@pytest.fixture
def peer_run() -> PeerRun:
    """One run of bench/peer_compare.py as it stores it, with the figures the report reads."""

    def make(
        system: str,
        rnd: int,
        *,
        remember: float = 100.0,
        cold: tuple[float, float, float] = (10.0, 10.0, 10.0),
        settled: tuple[float, float, float] = (10.0, 10.0, 10.0),
        p99: float = 30.0,
        export_ms: float = 50.0,
        per_second: float = 100.0,
        drain_s: float | None = 60.0,
    ) -> dict[str, Any]:
        run: dict[str, Any] = {
            "system": system,
            "round": rnd,
            "workload": {
                "health_before": {"version": "1.0"},
                "remember": {"entities_per_s": remember, "errors": 0},
                "recall": {
                    "errors": 0,
                    "latency_by_words": _by_words(cold, p99),
                    "targeted": {"n": 150, "hit@1": 0.9, "hit@10": 1.0},
                },
                "stats": {"errors": 5 if system == "memesh" else 0},
                "http": {"status_429": 0},
            },
            "settled": {
                "recall": {
                    "errors": 0,
                    "latency_by_words": _by_words(settled, p99),
                    "targeted": {"n": 150, "hit@1": 0.95, "hit@10": 1.0},
                },
                "export_limit": {"errors": 0, "latency": {"p50_ms": export_ms}},
            },
            "throughput": {"per_second": per_second, "non_200": 0},
            "peak_rss": {"sum_mb": 300.0},
            "db_mb": 10.0,
            "load_average_start": [1.0, 1.0, 1.0],
        }
        if system == "memesh":
            run["backlog"] = (
                {"drained": True, "drain_s": drain_s, "pending_after_workload": 500}
                if drain_s is not None
                else {"drained": False, "waited_s": 900.0, "pending_after_workload": 500}
            )
        return run

    return make


@pytest.fixture
def peer_section(peer_run: PeerRun) -> dict[str, Any]:
    """A whole peer section: two sizes of two rounds each, and the CLI."""
    sizes = [
        {
            "entities": n,
            "runs": [peer_run(s, r) for r in (1, 2) for s in ("memesh", "peer")],
        }
        for n in (1_000, 10_000)
    ]
    cli = {
        "runs": 2,
        "seeded": 5,
        "commands": {
            c: {
                "failures": 0,
                "pairs": [[1.0, 0.5], [1.2, 0.5]],
                "memesh": {"median_s": 1.1, "min_s": 1.0, "max_s": 1.2},
                "peer": {"median_s": 0.5, "min_s": 0.5, "max_s": 0.5},
            }
            for c in ("remember", "recall", "--help")
        },
    }
    return {
        "date": "2026-11-30",
        "machine": {"cpu_model": "Test CPU", "cores": 2, "python": "3.11.7"},
        "commit": "abc1234",
        "command": ".venv/bin/python -m bench.peer_compare --sizes 1k,10k",
        "seconds": 1.0,
        "steps": [],
        "data": {
            "rounds": 2,
            "queries": 300,
            "seed": 42,
            "tree_dirty": False,
            "versions": {"memesh": "0.1.0", "peer": "4.6.0"},
            "load_average": {"start": [1.0, 1.0, 1.0], "end": [2.0, 2.0, 2.0]},
            "sizes": sizes,
            "cli": cli,
        },
    }
