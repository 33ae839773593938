"""The table bench/recall_bench.py prints (without --json) from its report dict."""

from __future__ import annotations

from typing import Any


def render(report: dict[str, Any]) -> str:
    m = report["machine"]
    rem = report["remember"]
    lines = [
        f"memesh recall bench — {report['entities']:,} memories, "
        f"{report['queries_per_size']} queries per size, seed {report['seed']}",
        f"machine: {m['cpu_count']} CPUs, Python {m['python']}, SQLite {m['sqlite']} "
        f"({m['driver']}), {m['platform']}",
        f"code: {m['commit']}, {m['date']}",
        "",
    ]
    if rem:
        lines.append(
            f"remember: {rem['per_second']:,.0f}/s over {rem['count']:,} calls "
            f"(p50 {rem['p50']:.2f} ms, p95 {rem['p95']:.2f} ms, {rem['seconds']:.0f} s)"
        )
    else:
        lines.append("remember: (reused database, not measured)")
    lines += [
        "",
        "recall through OPERATIONS['recall'] vs bare FTS5 MATCH on the selected terms (ms)",
        f"{'query':<9}{'recall p50':>11}{'p95':>9}{'MATCH p50':>11}{'p95':>9}"
        f"{'ratio':>8}{'guard p50':>11}{'terms':>7}{'rows':>8}{'hits':>6}",
    ]
    for r in report["recall"]:
        lines.append(
            f"{r['words']}-word   {r['recall']['p50']:>11.2f}{r['recall']['p95']:>9.2f}"
            f"{r['bare_match']['p50']:>11.2f}{r['bare_match']['p95']:>9.2f}"
            f"{r['ratio_p50']:>7.1f}x{r['guard']['p50']:>11.2f}"
            f"{r['mean_terms']:>7.1f}{r['median_postings']:>8,.0f}{r['hit_rate'] * 100:>5.0f}%"
        )
    e = report["empty_query"]
    lines += [
        f"{'empty':<9}{e['p50']:>11.2f}{e['p95']:>9.2f}   (recent listing)",
        "",
        "ratio = recall p50 / bare MATCH p50; guard = fts5vocab df lookups + live row count;",
        "terms = mean terms sent to MATCH; rows = median summed document frequency of those",
        "terms (about the rows bm25 scores); hits = queries returning at least one memory.",
        f"database: {report['db_mb']['total']:.1f} MB "
        f"({report['db_mb']['db']:.1f} MB + {report['db_mb']['db_wal']:.1f} MB -wal)",
    ]
    if report["hybrid"]:
        b = report["backfill"]
        lines += [
            "",
            f"hybrid recall, embedder {report['embedder']} (query embedding included, cache "
            "cleared per query; ms)",
            f"{'query':<9}{'recall p50':>11}{'p95':>9}{'embed p50':>11}{'vector p50':>12}"
            f"{'p95':>8}",
        ]
        for r in report["hybrid"]:
            lines.append(
                f"{r['words']}-word   {r['recall']['p50']:>11.2f}{r['recall']['p95']:>9.2f}"
                f"{r['embed_query']['p50']:>11.2f}{r['vector_search']['p50']:>12.2f}"
                f"{r['vector_search']['p95']:>8.2f}"
            )
        if b and b["embedded"]:
            lines.append(
                f"embedding backfill: {b['embedded']:,} memories in {b['seconds']:.0f} s "
                f"({b['per_second']:.1f}/s)"
            )
        if b and b["synthesised"]:
            lines.append(
                f"vectors of {b['synthesised']:,} memories synthesised from the embedded ones "
                "(latency only; quality is measured on real vectors by quality_eval.py)"
            )
    if report["code_changed_during_run"]:
        lines.append("WARNING: graph/ or memesh_site/ changed during the run (mixed versions?)")
    return "\n".join(lines)
