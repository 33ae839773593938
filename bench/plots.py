"""The PNG plots of docs/benchmarks.md, drawn from bench/run_all.py's results (matplotlib, Agg)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench import peer_report, report_render
from bench.report_format import size_label


def make_plots(
    results: dict[str, Any], plot_dir: Path, only: tuple[str, ...] | None = None
) -> None:
    """One PNG per section that has figures to draw (of `only` these sections, when given);
    names stored in the section."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    makers = {
        "recall": plot_recall,
        "http": plot_http,
        "writers": plot_writers,
        "quality": plot_quality,
        "peer": plot_peer,
    }
    for name, maker in makers.items():
        if only is not None and name not in only:
            continue
        section = results["sections"].get(name)
        if not section or section.get("error"):
            continue
        fig = maker(plt, section["data"])
        if fig is None:
            section["plots"] = []
            continue
        filename = f"{name}.png"
        fig.savefig(plot_dir / filename, dpi=110, bbox_inches="tight")
        plt.close(fig)
        section["plots"] = [filename]


def plot_recall(plt: Any, data: dict[str, Any]) -> Any:
    sizes = data["sizes"]
    if not sizes:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    xs = [s["entities"] for s in sizes]
    for ax, kind, title in ((axes[0], "recall", "keyword"), (axes[1], "hybrid", "hybrid")):
        for colour, words in enumerate(report_render.QUERY_SIZES):
            for pct, style in (("p50", "-o"), ("p95", ":")):
                ys = []
                for s in sizes:
                    rows = {r["words"]: r for r in s["bench"].get(kind) or []}
                    ys.append(rows[words]["recall"][pct] if words in rows else float("nan"))
                ax.plot(xs, ys, style, color=f"C{colour}", label=f"{words}-word {pct}")
        ax.set_xscale("log")
        ax.set_xticks(xs, [size_label(x) for x in xs])
        ax.minorticks_off()
        ax.set_xlabel("memories")
        ax.set_title(f"{title} recall latency")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("ms")
    axes[1].legend(fontsize=7)
    return fig


def plot_http(plt: Any, data: dict[str, Any]) -> Any:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for kind in ("recall", "remember"):
        rows = data.get(kind, [])
        clients = [r["clients"] for r in rows]
        axes[0].plot(clients, [r["per_second"] for r in rows], "-o", label=kind)
        axes[1].plot(clients, [r["p99"] for r in rows], "-o", label=f"{kind} p99")
        axes[1].plot(clients, [r["p50"] for r in rows], ":", label=f"{kind} p50")
    axes[0].set_title("requests/s")
    axes[1].set_title("latency (ms)")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(clients, [str(c) for c in clients])
        ax.minorticks_off()
        ax.set_xlabel("concurrent clients")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def plot_writers(plt: Any, data: dict[str, Any]) -> Any:
    levels = [r for r in data.get("levels", []) if r.get("per_second") is not None]
    if not levels:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    xs = [r["writers"] for r in levels]
    axes[0].plot(xs, [r["per_second"] for r in levels], "-o")
    axes[0].set_title("remembers/s, all writers")
    axes[1].plot(xs, [r.get("p99") or float("nan") for r in levels], "-o", label="p99")
    axes[1].plot(xs, [r.get("p50") or float("nan") for r in levels], ":", label="p50")
    axes[1].set_title("write latency (ms)")
    axes[1].legend(fontsize=8)
    for ax in axes:
        ax.set_xlabel("writer processes")
        ax.grid(alpha=0.3)
    return fig


def plot_quality(plt: Any, data: dict[str, Any]) -> Any:
    results = data.get("results", {})
    if not results:
        return None
    groups = list(next(iter(results.values()))["groups"])
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(results)
    for i, (strategy, result) in enumerate(results.items()):
        values = [result["groups"][g]["forward"]["hit@5"] for g in groups]
        ax.bar([x + i * width for x in range(len(groups))], values, width, label=strategy)
    ax.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(groups))], groups)
    ax.set_ylabel("hit@5")
    ax.set_ylim(0, 1.05)
    ax.set_title("retrieval quality by query kind")
    ax.legend(fontsize=8)
    return fig


def plot_peer(plt: Any, data: dict[str, Any]) -> Any:
    """Recall p50 against the number of memories, memesh (solid) and MeMesh 4.6 (dashed), one
    colour per query length; right after the writes and settled side by side."""
    sizes = [s for s in data.get("sizes", []) if s.get("runs")]
    if not sizes:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    xs = [s["entities"] for s in sizes]
    titles = {"cold": "right after the writes", "settled": "settled"}
    for ax, (phase, title) in zip(axes, titles.items(), strict=True):
        for colour, words in enumerate(peer_report.WORDS):
            for system, style, name in (("memesh", "-o", "memesh"), ("peer", "--s", "MeMesh 4.6")):
                value = peer_report.recall_value(phase, words, "p50")
                ys = [peer_report.system_median(s, system, value) for s in sizes]
                ax.plot(
                    xs,
                    [float("nan") if y is None else y for y in ys],
                    style,
                    color=f"C{colour}",
                    label=f"{name}, {words}-word",
                )
        ax.set_xscale("log")
        ax.set_xticks(xs, [size_label(x) for x in xs])
        ax.minorticks_off()
        ax.set_xlabel("memories")
        ax.set_title(f"recall p50 over HTTP, {title}")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("ms")
    axes[1].legend(fontsize=7)
    return fig
