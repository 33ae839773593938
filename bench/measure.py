"""What the benchmarks compute from their samples: latency percentiles and summaries, and the
database's size on disk."""

from __future__ import annotations

import statistics
from pathlib import Path


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    data = sorted(values)
    k = (len(data) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (k - lo)


def summary_ms(samples: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples]
    return {
        "p50": round(percentile(ms, 50), 3),
        "p95": round(percentile(ms, 95), 3),
        "mean": round(statistics.fmean(ms), 3) if ms else float("nan"),
        "n": len(ms),
    }


def file_sizes(db: Path) -> dict[str, float]:
    """The database file and its -wal, in MB."""
    mb = {}
    for suffix in ("", "-wal"):
        p = Path(str(db) + suffix)
        mb["db" + suffix.replace("-", "_")] = p.stat().st_size / 1e6 if p.exists() else 0.0
    mb["total"] = mb["db"] + mb["db_wal"]
    return {k: round(v, 1) for k, v in mb.items()}
