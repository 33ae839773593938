"""What bench/peer_compare.py's runs say about memesh against MeMesh 4.6: paired ratios, the
targets of issue 16 with their verdicts, and the section's markdown (pure: no Django, no I/O).

A ratio is always memesh's figure divided by MeMesh 4.6's, taken within one pair of runs (one
round: memesh, then the peer, at the same size, seconds apart) and then the median over the
pairs. The machine's speed drifts by a quarter within minutes, so figures of two runs that were
not paired are never divided. A "worst of 1/3/8 words" row takes each query length's median
ratio and shows the least favourable one: a target "for every query length" holds only if it
holds there.
"""

from __future__ import annotations

import operator
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from bench.report_format import fmt, size_label, table

Run = dict[str, Any]
PEER = "MeMesh 4.6"
WORDS = (1, 3, 8)
PHASES = {"cold": "right after the writes (memesh's backlog draining)", "settled": "settled"}
OPS: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, ">=": operator.ge}
OP_TEXT = {"<=": "≤", ">=": "≥"}


# --- figures of one run --------------------------------------------------------------------------
# A run holds the shared workload's own JSON summary ("workload": remember, then recall right
# after the writes, then export), the second recall pass bench/peer_compare.py makes once the
# server has settled ("settled"), the 4-client throughput level ("throughput") and, for memesh,
# the embedding backlog ("backlog").


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


def remember_rate(run: Run) -> float | None:
    return _num((run.get("workload") or {}).get("remember", {}).get("entities_per_s"))


def recall_block(run: Run, phase: str) -> dict[str, Any]:
    """The recall summary of a phase: 'cold' is the workload's own pass, right after the
    writes; 'settled' is the pass once the server is idle (settled_words says which queries)."""
    source = run.get("workload") if phase == "cold" else run.get("settled")
    return (source or {}).get("recall") or {}


def recall_ms(run: Run, phase: str, words: int, pct: str) -> float | None:
    row = (recall_block(run, phase).get("latency_by_words") or {}).get(f"{words}w") or {}
    return _num(row.get(f"{pct}_ms"))


def recall_value(phase: str, words: int, pct: str) -> Callable[[Run], float | None]:
    """recall_ms of one phase, query length and percentile, as a figure of a run."""
    return lambda run: recall_ms(run, phase, words, pct)


def hit_at_1(run: Run, phase: str) -> float | None:
    return _num((recall_block(run, phase).get("targeted") or {}).get("hit@1"))


def export_ms(run: Run) -> float | None:
    """p50 of exporting every memory (the workload's export with a limit), settled."""
    latency = ((run.get("settled") or {}).get("export_limit") or {}).get("latency") or {}
    return _num(latency.get("p50_ms"))


def export_rate(run: Run) -> float | None:
    ms = export_ms(run)
    return 1000 / ms if ms else None


def throughput(run: Run) -> float | None:
    return _num((run.get("throughput") or {}).get("per_second"))


def drain_s(run: Run) -> float | None:
    """Seconds from the last write to the last vector: None until every memory has one."""
    backlog = run.get("backlog") or {}
    return _num(backlog.get("drain_s")) if backlog.get("drained") else None


def backlog_wait(run: Run) -> float | None:
    """drain_s, or for a backlog that never drained the seconds waited after the last write."""
    backlog = run.get("backlog") or {}
    if backlog.get("drained"):
        return _num(backlog.get("drain_s"))
    return _num(backlog.get("waited_s"))


def draining_over_settled(run: Run) -> tuple[float | None, int | None]:
    """The worst, over query lengths, of recall p50 right after the writes ÷ settled, within
    this run; and the word count it was worst at."""
    worst: tuple[float | None, int | None] = (None, None)
    for words in WORDS:
        cold, settled = (
            recall_ms(run, "cold", words, "p50"),
            recall_ms(run, "settled", words, "p50"),
        )
        if cold is None or not settled:
            return None, None
        ratio = cold / settled
        if worst[0] is None or ratio > worst[0]:
            worst = (ratio, words)
    return worst


# --- pairing -------------------------------------------------------------------------------------


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def runs_of(size: dict[str, Any], system: str) -> dict[int, Run]:
    return {r["round"]: r for r in size.get("runs", []) if r.get("system") == system}


def pair_ratios(size: dict[str, Any], value: Callable[[Run], float | None]) -> list[float]:
    """memesh ÷ peer for each round in which both ran and both figures exist."""
    memesh, peer = runs_of(size, "memesh"), runs_of(size, "peer")
    out = []
    for rnd in sorted(memesh.keys() & peer.keys()):
        m, p = value(memesh[rnd]), value(peer[rnd])
        if m is not None and p:
            out.append(m / p)
    return out


def system_median(
    size: dict[str, Any], system: str, value: Callable[[Run], float | None]
) -> float | None:
    return median([value(r) for r in runs_of(size, system).values()])


# --- targets -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    item: str  # issue 16's numbered target
    op: str
    limit: float
    sizes: tuple[int, ...] | None = None  # None: every size measured

    def applies(self, entities: int | None) -> bool:
        return self.sizes is None or entities in self.sizes

    def text(self) -> str:
        return f"{OP_TEXT[self.op]} {fmt(self.limit)} (item {self.item})"


def verdict(value: float | None, target: Target | None) -> str:
    if target is None:
        return ""
    if value is None:
        return "not measured"
    return "met" if OPS[target.op](value, target.limit) else "missed"


@dataclass(frozen=True)
class Row:
    entities: int | None  # None: not a size (the CLI)
    measure: str
    memesh: float | None
    peer: float | None
    ratio: float | None  # what the target is checked against
    pairs: list[float]
    target: Target | None
    own: bool = False  # memesh's own figure, checked as it is (no peer to divide by)

    @property
    def verdict(self) -> str:
        return verdict(self.ratio, self.target)


# (key, label, value of a run, targets by size)
RATIO_METRICS: tuple[tuple[str, str, Callable[[Run], float | None], tuple[Target, ...]], ...] = (
    ("remember", "remember, memories/s", remember_rate, (Target("1", ">=", 1.5),)),
    (
        "export",
        "export of every memory, exports/s",
        export_rate,
        (Target("4", ">=", 1, (10_000,)),),
    ),
    ("throughput", "HTTP recall with 4 clients, req/s", throughput, (Target("7", ">=", 3),)),
)
RECALL_TARGETS = {
    "p50": (Target("2", "<=", 1, (10_000,)), Target("3", "<=", 0.5, (50_000, 100_000))),
    "p99": (Target("2", "<=", 1.5, (10_000,)),),
}
BACKLOG_TARGET = Target("5", "<=", 180)
DRAIN_LATENCY_TARGET = Target("5", "<=", 1.25)
CLI_TARGET = Target("8", "<=", 2)
CLI_COMMANDS = ("remember", "recall", "--help")


def _target_for(targets: tuple[Target, ...], entities: int | None) -> Target | None:
    return next((t for t in targets if t.applies(entities)), None)


def _ratio_row(
    size: dict[str, Any],
    label: str,
    value: Callable[[Run], float | None],
    targets: tuple[Target, ...],
) -> Row:
    n = size["entities"]
    pairs = pair_ratios(size, value)
    return Row(
        n,
        label,
        system_median(size, "memesh", value),
        system_median(size, "peer", value),
        median(list(pairs)),
        pairs,
        _target_for(targets, n),
    )


def recall_row(size: dict[str, Any], phase: str, pct: str) -> Row:
    """The query length whose median pair ratio is least favourable to memesh."""
    n = size["entities"]
    worst: Row | None = None
    for words in WORDS:
        row = _ratio_row(
            size,
            f"recall {pct} ms {PHASES[phase]}, worst of 1/3/8 words ({words}-word)",
            recall_value(phase, words, pct),
            RECALL_TARGETS[pct],
        )
        if row.ratio is not None and (
            worst is None or worst.ratio is None or row.ratio > worst.ratio
        ):
            worst = row
    if worst is None:
        label = f"recall {pct} ms {PHASES[phase]}, worst of 1/3/8 words"
        return Row(n, label, None, None, None, [], _target_for(RECALL_TARGETS[pct], n))
    return worst


def own_rows(size: dict[str, Any]) -> list[Row]:
    """memesh's backlog, which the peer (keyword-only) does not have: checked on memesh's own
    figure, the median over its runs. A run whose backlog did not drain before the wait gave up
    counts as the time it waited."""
    n = size["entities"]
    memesh = list(runs_of(size, "memesh").values())
    waits = [backlog_wait(r) for r in memesh]
    undrained = sum(1 for r in memesh if not (r.get("backlog") or {}).get("drained"))
    label = "backlog: every memory embedded, s after the last write"
    if undrained:
        label += f" ({undrained} run(s) not drained when the wait gave up)"
    ratios = [draining_over_settled(r) for r in memesh]
    worst_words = max(
        (r for r in ratios if r[0] is not None), default=(None, None), key=lambda r: r[0] or 0
    )[1]
    where = f" ({worst_words}-word at worst)" if worst_words else ""
    slowdown = median([r[0] for r in ratios])
    return [
        Row(n, label, median(waits), None, median(waits), [], BACKLOG_TARGET, own=True),
        Row(
            n,
            f"recall p50 while draining ÷ settled, worst of 1/3/8 words{where}",
            slowdown,
            None,
            slowdown,
            [],
            DRAIN_LATENCY_TARGET,
            own=True,
        ),
    ]


def cli_rows(cli: dict[str, Any] | None) -> list[Row]:
    rows = []
    for command in CLI_COMMANDS:
        entry = ((cli or {}).get("commands") or {}).get(command) or {}
        m = _num((entry.get("memesh") or {}).get("median_s"))
        p = _num((entry.get("peer") or {}).get("median_s"))
        pairs = [a / b for a, b in entry.get("pairs", []) if a is not None and b]
        rows.append(
            Row(
                None,
                f"`{command}` as a process, wall s",
                m,
                p,
                median(list(pairs)),
                pairs,
                CLI_TARGET,
            )
        )
    return rows


def ratio_rows(data: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    for size in data.get("sizes", []):
        for _, label, value, targets in RATIO_METRICS[:1]:
            rows.append(_ratio_row(size, label, value, targets))
        for pct in ("p50", "p99"):
            for phase in PHASES:
                rows.append(recall_row(size, phase, pct))
        for _, label, value, targets in RATIO_METRICS[1:]:
            rows.append(_ratio_row(size, label, value, targets))
        rows += own_rows(size)
    if data.get("cli"):
        rows += cli_rows(data["cli"])
    return rows


# --- markdown ------------------------------------------------------------------------------------


def _x(value: float | None) -> str:
    return "—" if value is None else f"{fmt(value)}×"


def ratios_table(rows: list[Row]) -> list[str]:
    body = []
    for row in rows:
        verdict_text = row.verdict
        body.append(
            [
                size_label(row.entities) if row.entities else "CLI",
                row.measure,
                row.memesh,
                row.peer,
                "(memesh alone)" if row.own else _x(row.ratio),
                ", ".join(f"{fmt(p)}×" for p in row.pairs) or "—",
                row.target.text() if row.target else "—",
                f"**{verdict_text}**" if verdict_text in ("met", "missed") else verdict_text or "—",
            ]
        )
    return table(
        [
            "memories",
            "measure",
            "memesh",
            PEER,
            "memesh ÷ MeMesh",
            "each pair",
            "target (on the ratio)",
            "verdict",
        ],
        body,
    )


def latency_table(data: dict[str, Any]) -> list[str]:
    rows = []
    for size in data.get("sizes", []):
        for words in WORDS:
            cells: list[Any] = [size_label(size["entities"]), f"{words}-word"]
            for system in ("memesh", "peer"):
                for phase in PHASES:
                    for pct in ("p50", "p99"):
                        value = recall_value(phase, words, pct)
                        cells.append(system_median(size, system, value))
            rows.append(cells)
    header = ["memories", "query"]
    for system in ("memesh", PEER):
        for phase in ("after the writes", "settled"):
            header += [f"{system} {phase} p50 ms", "p99 ms"]
    return table(header, rows)


def hits_table(data: dict[str, Any]) -> list[str]:
    rows = []
    for size in data.get("sizes", []):
        cells: list[Any] = [size_label(size["entities"])]
        for system in ("memesh", "peer"):
            for phase in PHASES:
                cells.append(system_median(size, system, partial(hit_at_1, phase=phase)))
        runs = size.get("runs") or [{}]
        cells.append((recall_block(runs[0], "cold").get("targeted") or {}).get("n"))
        rows.append(cells)
    return table(
        [
            "memories",
            "memesh after the writes",
            "memesh settled",
            f"{PEER} after the writes",
            f"{PEER} settled",
            "targeted queries",
        ],
        rows,
    )


def _errors(run: Run) -> str:
    """Every non-success the workload or the settled pass counted, by kind."""
    found = []
    for source, block in (("", run.get("workload") or {}), ("settled ", run.get("settled") or {})):
        for kind in (
            "remember",
            "recall",
            "list_recent",
            "stats",
            "export_default",
            "export_limit",
        ):
            errors = (block.get(kind) or {}).get("errors")
            if errors:
                found.append(f"{source}{kind} {errors}")
    http = (run.get("workload") or {}).get("http") or {}
    if http.get("status_429"):
        found.append(f"HTTP 429 {http['status_429']}")
    if (run.get("throughput") or {}).get("non_200"):
        found.append(f"throughput non-200 {run['throughput']['non_200']}")
    return ", ".join(found) or "none"


def runs_table(data: dict[str, Any]) -> list[str]:
    rows = []
    for size in data.get("sizes", []):
        for run in sorted(
            size.get("runs", []), key=lambda r: (r["round"], r["system"] != "memesh")
        ):
            backlog = run.get("backlog") or {}
            rows.append(
                [
                    size_label(size["entities"]),
                    run["round"],
                    "memesh" if run["system"] == "memesh" else PEER,
                    remember_rate(run),
                    export_ms(run),
                    throughput(run),
                    backlog.get("pending_after_workload"),
                    drain_s(run) if run["system"] == "memesh" else None,
                    _num(run.get("db_mb")),
                    _num((run.get("peak_rss") or {}).get("sum_mb")),
                    " ".join(fmt(x, 1) for x in run.get("load_average_start") or []) or "—",
                    _errors(run),
                ]
            )
    return table(
        [
            "memories",
            "round",
            "system",
            "remember/s",
            "export ms (p50, settled)",
            "4-client recall req/s",
            "vectors pending when the workload ended",
            "every vector, s after the last write",
            "database MB",
            "server peak RSS MB (all processes)",
            "load average at start",
            "errors counted",
        ],
        rows,
    )


def cli_table(cli: dict[str, Any]) -> list[str]:
    rows = []
    for command in CLI_COMMANDS:
        entry = (cli.get("commands") or {}).get(command) or {}
        m, a, p = (entry.get(s) or {} for s in ("memesh", "memesh_alone", "peer"))
        rows.append(
            [
                f"`{command}`",
                m.get("median_s"),
                f"{fmt(m.get('min_s'))}–{fmt(m.get('max_s'))}",
                a.get("median_s"),
                p.get("median_s"),
                f"{fmt(p.get('min_s'))}–{fmt(p.get('max_s'))}",
                entry.get("failures", 0),
            ]
        )
    return table(
        [
            "command",
            "memesh median s (serve running)",
            "memesh range",
            "memesh alone median s",
            f"{PEER} median s",
            f"{PEER} range",
            "non-zero exits",
        ],
        rows,
    )


def settled_words(data: dict[str, Any]) -> str:
    """What the settled pass asked: queries the server had not seen (runs that also record
    `settled_repeat`), or, in rounds measured before, the workload's own queries again —
    which memesh answers from its query-vector cache, so their ratio to the pass after the
    writes also counts each query's first embedding."""
    runs = [run for size in data.get("sizes", []) for run in size.get("runs", [])]
    if runs and all("settled_repeat" in run for run in runs):
        return "as many queries of the same kinds that the server has not seen"
    return "the same queries again"


def render_peer(data: dict[str, Any]) -> list[str]:
    versions = data.get("versions") or {}
    load = data.get("load_average") or {}
    out = [
        f"memesh {versions.get('memesh', '—')} against {PEER} ({versions.get('peer', '—')}); "
        f"{fmt(data.get('rounds'))} round(s) at each size, each round memesh then {PEER}, "
        f"{fmt(data.get('queries'))} queries a recall pass, workload seed "
        f"{fmt(data.get('seed'))}. Working tree "
        + ("**with uncommitted changes**" if data.get("tree_dirty") else "clean")
        + "; load average (1, 5, 15 min) at the start "
        + (" ".join(fmt(x, 1) for x in load.get("start", [])) or "—")
        + ", at the end "
        + (" ".join(fmt(x, 1) for x in load.get("end", [])) or "—")
        + ".",
        "",
        "Ratios are memesh ÷ MeMesh 4.6 within each pair of runs, then their median; the "
        "memesh and MeMesh columns are each system's median over its runs. A target without "
        "sizes in the issue is checked at every size.",
        "",
        *ratios_table(ratio_rows(data)),
        "",
        "Recall latency by query length, median of the runs' percentiles. *After the writes* "
        "is the workload's own recall pass, started as soon as its last write was answered "
        f"(for memesh, while the worker embeds the backlog); *settled* is {settled_words(data)} "
        "once memesh has every vector and MeMesh's process is idle:",
        "",
        *latency_table(data),
        "",
        "hit@1 of the workload's targeted queries (its rare-token queries with a known answer):",
        "",
        *hits_table(data),
        "",
        "Each run:",
        "",
        *runs_table(data),
    ]
    if data.get("cli"):
        cli = data["cli"]
        out += [
            "",
            f"The CLI as processes, {fmt(cli.get('runs'))} runs of each command, interleaved "
            "(memesh, memesh alone, MeMesh, memesh, …), against a home holding "
            f"{fmt(cli.get('seeded'))} memories (memesh's embedded). memesh as installed runs "
            "with `memesh serve` on its home, which runs short commands for the CLI process "
            "(docs/operations.md); *alone* is the same command with MEMESH_CLI_LOCAL=1, all of "
            "it in its own process, as when no server runs. The ratios use the first:",
            "",
            *cli_table(cli),
        ]
    return out
