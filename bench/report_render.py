"""Render docs/benchmarks.md from the results bench/run_all.py writes (pure: no Django, no I/O).

Every figure in the page comes from the results dict; the prose around the tables names no
number of its own. The targets table and its verdicts come from bench/targets.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench import host_hooks, peer_report
from bench.report_format import fmt, size_label, table
from bench.targets import Results, section_data, targets_table

# The sections bench/run_all.py runs; the page also shows the comparison with MeMesh 4.6,
# which bench/peer_compare.py alone measures (it needs the peer and takes far longer).
SECTION_ORDER = ("recall", "http", "mcp", "import", "reindex", "writers", "quality", "hosts")
PAGE_ORDER = (*SECTION_ORDER, "peer")
RERUN = {name: f".venv/bin/python -m bench.run_all --only {name}" for name in SECTION_ORDER}
RERUN["peer"] = ".venv/bin/python -m bench.peer_compare"
SECTION_TITLES = {
    "recall": "Recall latency at 1k / 10k / 100k memories",
    "http": "HTTP throughput and latency (`memesh serve`)",
    "mcp": "MCP tool-call latency (`memesh mcp` over stdio)",
    "import": "Bulk import (`memesh import`)",
    "reindex": "Reindex (`memesh reindex`)",
    "writers": "Multi-process write throughput",
    "quality": "Retrieval quality",
    "hosts": "Hooks inside the agent hosts",
    "peer": "Compared with MeMesh 4.6",
}
QUERY_SIZES = (1, 3, 8)


def provenance(section: dict[str, Any]) -> list[str]:
    m = section.get("machine", {})
    lines = [
        f"*Ran {section.get('date', '—')}"
        + (
            " — **quick run** (small sizes, a smoke test; not for comparison)"
            if section.get("quick")
            else ""
        )
        + f", in {fmt(section.get('seconds'), 0)} s. Machine: {m.get('cpu_model', '—')}, "
        f"{m.get('cores', '—')} cores, {fmt(m.get('ram_gb'), 1)} GB RAM, {m.get('os', '—')}; "
        f"Python {m.get('python', '—')}, SQLite {m.get('sqlite', '—')} ({m.get('driver', '—')}), "
        f"sqlite-vec {m.get('sqlite_vec', '—')}. Code: `{section.get('commit', '—')}`.*",
        "",
        "Reproduce:",
        "",
        "```sh",
        section.get("command", ""),
        "```",
    ]
    steps = section.get("steps") or []
    if steps:
        lines += ["", "which runs:", "", "```sh", *steps, "```"]
    return lines


def plot_line(section: dict[str, Any], plot_dir: str) -> list[str]:
    return [f"![{name}]({plot_dir}/{name})" for name in section.get("plots", [])]


# --- sections ----------------------------------------------------------------------------------


def render_recall(data: dict[str, Any]) -> list[str]:
    rows = []
    for size in data["sizes"]:
        bench = size["bench"]
        hybrid = {r["words"]: r for r in bench.get("hybrid") or []}
        for r in bench["recall"]:
            h = hybrid.get(r["words"], {})
            rows.append(
                [
                    size_label(size["entities"]),
                    f"{r['words']}-word",
                    r["recall"]["p50"],
                    r["recall"]["p95"],
                    h.get("recall", {}).get("p50"),
                    h.get("recall", {}).get("p95"),
                    h.get("embed_query", {}).get("p50"),
                    h.get("vector_search", {}).get("p50"),
                ]
            )
    out = table(
        [
            "memories",
            "query",
            "keyword p50 ms",
            "keyword p95 ms",
            "hybrid p50 ms",
            "hybrid p95 ms",
            "query embedding p50 ms",
            "vector search p50 ms",
        ],
        rows,
    )
    facts = []
    for size in data["sizes"]:
        bench = size["bench"]
        remember = bench.get("remember")
        seeding = size.get("seeding") or {}
        if remember is None and seeding.get("remember"):
            remember = seeding["remember"]
        backfill = bench.get("backfill") or {}
        if not backfill.get("embedded") and (seeding.get("backfill") or {}).get("embedded"):
            backfill = {**seeding["backfill"], "synthesised": backfill.get("synthesised")}
        synthesised = (seeding.get("backfill") or {}).get("synthesised") or backfill.get(
            "synthesised"
        )
        facts.append(
            [
                size_label(size["entities"]),
                remember["per_second"] if remember else None,
                remember["p50"] if remember else None,
                backfill.get("per_second"),
                backfill.get("embedded"),
                synthesised,
                bench["empty_query"]["p50"],
                bench["db_mb"]["total"],
                "yes" if size.get("cached") else "no",
            ]
        )
    out += [
        "",
        *table(
            [
                "memories",
                "remember/s (in process)",
                "remember p50 ms",
                "embedding backfill memories/s",
                "memories embedded by the model",
                "vectors synthesised",
                "empty-query p50 ms",
                "database MB",
                "database from cache",
            ],
            facts,
        ),
    ]
    cached = [s for s in data["sizes"] if s.get("cached") and s.get("seeding")]
    if cached:
        out += [
            "",
            "Seeding (remember, embedding) of a cached database was measured when it was "
            "seeded: "
            + "; ".join(
                f"{size_label(s['entities'])} at code `{s['seeding'].get('commit', '—')}` on "
                f"{s['seeding'].get('date', '—')}"
                for s in cached
            )
            + ".",
        ]
    if any(
        (s["bench"].get("backfill") or {}).get("synthesised")
        or ((s.get("seeding") or {}).get("backfill") or {}).get("synthesised")
        for s in data["sizes"]
    ):
        out += [
            "",
            "Where vectors were synthesised (a real vector plus noise), hybrid latency is "
            "representative — the vector search's cost does not depend on the values — but "
            "quality is measured on real vectors only (below).",
        ]
    return out


def render_http(data: dict[str, Any]) -> list[str]:
    rows = [
        [
            kind,
            r["clients"],
            r["requests"],
            r["per_second"],
            r["p50"],
            r["p95"],
            r["p99"],
            r["non_200"],
            r.get("server_cpu_ms", "—"),
            r.get("client_cpu_ms", "—"),
        ]
        for kind in ("recall", "remember")
        for r in data.get(kind, [])
    ]
    out = [
        f"{fmt(data.get('entities'))} memories seeded, embedder `{data.get('embedder')}`; each "
        "client a process with one keep-alive connection (the standard library's http.client). "
        "CPU per request is user + system time over the level, of the server's processes and of "
        "the clients. Both come out of the same cores: on N cores, requests/s cannot exceed "
        "N × 1,000 ms divided by their sum.",
        "",
    ]
    out += table(
        [
            "kind",
            "clients",
            "requests",
            "requests/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "non-200",
            "server CPU ms/req",
            "client CPU ms/req",
        ],
        rows,
    )
    return out


def render_mcp(data: dict[str, Any]) -> list[str]:
    calls = data.get("tool_calls") or {}
    out = []
    if calls:
        out += [
            f"Embedder `{calls.get('embedder')}`; one session, calls awaited one after another. "
            f"Connect and initialize handshake: {fmt(calls.get('connect_ms'), 0)} ms.",
            "",
        ]
        out += table(
            ["tool", "calls", "calls/s", "p50 ms", "p95 ms", "p99 ms", "errors"],
            [
                [
                    t,
                    calls[t]["calls"],
                    calls[t]["per_second"],
                    calls[t]["p50"],
                    calls[t]["p95"],
                    calls[t]["p99"],
                    calls[t]["errors"],
                ]
                for t in ("remember", "recall")
                if t in calls
            ],
        )
    cold = data.get("cold_start") or {}
    if cold:
        out += [
            "",
            f"Cold start (`bench/mcp_initialize.py`, {fmt(cold.get('runs'))} runs, embedder "
            f"`{cold.get('embedder')}`, a fresh database each):",
            "",
        ]
        out += table(
            ["from process spawn to", "median ms", "min ms", "max ms"],
            [
                [label, cold[key]["median_ms"], cold[key]["min_ms"], cold[key]["max_ms"]]
                for key, label in (
                    ("initialize", "`initialize` answer"),
                    ("tools_list", "`tools/list` answer"),
                    ("first_recall", "first recall answer"),
                )
                if key in cold
            ],
        )
    return out


def render_import(data: dict[str, Any]) -> list[str]:
    rows = [
        [
            step,
            f["seconds"],
            data["entities"] / f["seconds"] if f["seconds"] else None,
            f["peak_rss_mb"],
        ]
        for step, f in data.get("steps", {}).items()
    ]
    out = [
        f"A synthetic bundle of {fmt(data.get('entities'))} entities "
        f"({fmt(data.get('bundle_mb'), 1)} MB exported); each step is a whole `memesh` process "
        "(start-up included), embedder `none`. Round trip identical: "
        f"{fmt(data.get('round_trip_identical'))}.",
        "",
    ]
    return out + table(["step", "seconds", "entities/s", "peak RSS MB"], rows)


def render_reindex(data: dict[str, Any]) -> list[str]:
    rows = []
    for r in data.get("runs", []):
        n, net = r["entities"], r["seconds"] - r.get("startup_seconds", 0)
        rows.append(
            [
                r["embedder"],
                n,
                r["seconds"],
                n / r["seconds"] if r["seconds"] else None,
                r.get("startup_seconds"),
                n / net if net > 0 else None,
                r["peak_rss_mb"],
            ]
        )
    out = [
        "`memesh reindex` over imported memories (a new vector generation, swapped in when "
        "complete), timed as a whole process. Its start-up is timed on its own by `memesh "
        "reindex --discard-generation` in the same home; the last rate leaves it out (it keeps "
        "the model's load for `local`). The `deterministic` embedder (word hashing, no model) "
        "shows the cost of the pipeline itself.",
        "",
    ]
    return out + table(
        [
            "embedder",
            "memories",
            "seconds",
            "memories/s",
            "start-up seconds",
            "memories/s after start-up",
            "peak RSS MB",
        ],
        rows,
    )


def render_writers(data: dict[str, Any]) -> list[str]:
    levels = data.get("levels") or []
    if not levels:
        return [data.get("note") or "Not measured."]
    rows = [
        [
            r["writers"],
            r.get("operations"),
            r.get("per_second"),
            r.get("p50"),
            r.get("p95"),
            r.get("p99"),
        ]
        for r in levels
    ]
    intro = [
        f"Each writer process makes {fmt(data.get('count_per_writer'))} remember calls through "
        f"the operation layer (embedder `{data.get('embedder')}`: embedding queued, no worker), "
        "all released at once on a fresh database; latency is over every call of every writer.",
        "",
    ]
    return intro + table(
        ["writer processes", "remembers", "remembers/s (total)", "p50 ms", "p95 ms", "p99 ms"],
        rows,
    )


def render_quality(data: dict[str, Any]) -> list[str]:
    out = [
        f"{fmt(data.get('memories'))} memories, {fmt(data.get('queries'))} queries "
        f"({', '.join(f'{g} {fmt(n)}' for g, n in data.get('groups', {}).items())}). Every "
        "strategy runs all queries in sequence on one database (hybrid through recall itself, "
        "keyword through recall with no embedder configured, vector through recall's vector "
        "calls alone), then in reverse order from the same starting state; orders agree within "
        f"the tolerance over all queries: {fmt(data.get('orders_agree'))}.",
        "",
    ]
    rows = []
    for strategy, result in data.get("results", {}).items():
        for group, pair in result["groups"].items():
            f, b = pair["forward"], pair["reverse"]
            rows.append(
                [
                    strategy,
                    group,
                    f"{f['hit@1']:.3f}",
                    f"{f['hit@5']:.3f}",
                    f"{f['hit@10']:.3f}",
                    f"{f['mrr']:.3f}",
                    f"{b['hit@1']:.3f} / {b['hit@5']:.3f} / {b['hit@10']:.3f} / {b['mrr']:.3f}",
                ]
            )
    out += table(
        [
            "strategy",
            "queries",
            "hit@1",
            "hit@5",
            "hit@10",
            "MRR",
            "reverse order hit@1 / @5 / @10 / MRR",
        ],
        rows,
    )
    speed = [f"{s} {fmt(r.get('ms_per_query'))} ms" for s, r in data.get("results", {}).items()]
    if speed:
        out += ["", "Time per query: " + ", ".join(speed) + "."]
    return out


def render_resources(results: Results) -> list[str]:
    rows: list[list[Any]] = []
    recall = section_data(results, "recall")
    for size in (recall or {}).get("sizes", []):
        rows.append(
            [
                f"recall bench process, {size_label(size['entities'])} memories",
                size.get("peak_rss_mb"),
            ]
        )
    http = section_data(results, "http")
    if http and http.get("server_peak_rss"):
        rss = http["server_peak_rss"]
        rows.append(
            [
                f"`memesh serve` under the HTTP bench ({rss['processes']} process(es), "
                "sum of each one's peak)",
                rss["sum_mb"],
            ]
        )
    imp = section_data(results, "import") or {}
    for step, f in imp.get("steps", {}).items():
        if step.startswith("seed import"):
            rows.append([f"`memesh import` of {fmt(imp['entities'])} entities", f["peak_rss_mb"]])
    reindex = section_data(results, "reindex")
    for r in (reindex or {}).get("runs", []):
        rows.append([f"`memesh reindex`, embedder `{r['embedder']}`", r["peak_rss_mb"]])
    out = table(["process", "peak RSS MB"], rows) if rows else ["Not measured."]
    sizes = []
    for size in (recall or {}).get("sizes", []):
        mb, n = size["bench"]["db_mb"]["total"], size["entities"]
        sizes.append([size_label(n), mb, mb / n * 10_000 if n else None])
    if sizes:
        out += [
            "",
            "Database size (file + `-wal`, keyword and vector indexes included) after "
            "the recall bench:",
            "",
        ]
        out += table(["memories", "database MB", "MB per 10k memories"], sizes)
    return out


RENDERERS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "recall": render_recall,
    "http": render_http,
    "mcp": render_mcp,
    "import": render_import,
    "reindex": render_reindex,
    "writers": render_writers,
    "quality": render_quality,
    "hosts": host_hooks.render_section,
    "peer": peer_report.render_peer,
}
INTROS = {
    "recall": '`bench/recall_bench.py` seeds memories through `OPERATIONS["remember"]` (a '
    "deterministic, deliberately dense corpus of software-engineering notes), embeds them with "
    'the local model, and times `OPERATIONS["recall"]` in process for 1-, 3- and 8-word '
    "queries: keyword-only first, then hybrid with the query embedding included (its cache "
    "cleared before each query). Its module docstring has the details.",
    "http": "`bench/http_bench.py` starts `memesh serve --no-worker` on a free loopback port and "
    "sends recall (1-, 3- and 8-word queries mixed), then remember requests, at each client "
    "count.",
    "mcp": "`bench/mcp_bench.py` drives `memesh mcp` with the official SDK client over stdio: "
    "remember calls first (they fill a fresh database), then recall calls.",
    "import": "`bench/bundle_roundtrip.py`: import a synthetic bundle into an empty home, export "
    "it, import the export into a second home, export again, and compare.",
    "reindex": "",
    "writers": "`bench/multiprocess_writers.py`: concurrent writer processes remembering into one "
    "database file; throughput is the total over all writers.",
    "quality": "`bench/quality_eval.py` over the data set in `bench/data/quality/` (see its "
    "README).",
    "hosts": "`bench/host_hooks.py` runs the real hosts the suite pins, set up by `memesh setup`, "
    "through sessions a scripted model on loopback drives (a prompt asking to remember, a commit "
    "through the shell, a long last reply), and reads each hook's wall time from the host's own "
    "log: `fresh` is the first session on a new home, `warm` the ones after it, `served` with "
    "`memesh serve` running on the home, `mcp` without it. Its module docstring has the details.",
    "peer": "`bench/peer_compare.py` runs the shared HTTP workload (`../shared/tools/"
    "http_workload.py`) against memesh's default install (`memesh serve` with its worker) and "
    "against MeMesh 4.6 (`../shared/tools/peer-memesh serve`), interleaved — memesh, MeMesh, "
    "memesh, MeMesh — on fresh servers, then times both CLIs as processes. Every figure in the "
    "README or docs/ that compares memesh with MeMesh comes from this section; its module "
    "docstring has the details.",
}


NOTES_TITLE = "Measured by other bench scripts"
NOTES_INTRO = (
    "Figures from bench scripts that `bench/run_all.py` does not run (they drive the agent "
    "hosts' own programs, or compare models and importers): each note is kept in "
    "`docs/benchmarks/notes/` by whoever ran the script, with the command, the machine and "
    "the load it ran under, and is copied here as written."
)


def render(results: Results, plot_dir: str = "benchmarks", notes: Sequence[str] = ()) -> str:
    """The whole page; `plot_dir` is the plots' directory relative to the page; `notes` are
    the kept notes' Markdown (`### ` sections), in order."""
    sections = results.get("sections", {})
    lines = [
        "# Benchmarks",
        "",
        "<!-- Generated by bench/run_all.py from docs/benchmarks/results.json: do not edit by "
        "hand. -->",
        "",
        "Generated by `bench/run_all.py`: every figure below was measured by that command (or "
        "by the benchmark script it names; the comparison with MeMesh 4.6 by "
        "`bench/peer_compare.py`, which renders the page the same way) and is kept in "
        "`docs/benchmarks/results.json`. "
        "Speed is measured by these scripts, never by timing assertions in tests. Sections can "
        "be re-run one at a time (`--only SECTION`); each names the machine, code and command "
        "it ran with.",
        "",
    ]
    if any(s.get("quick") for s in sections.values()):
        lines += [
            "> **Quick run**: some sections below ran with `--quick` (small sizes, a smoke "
            "test). Their figures are not comparable with full runs.",
            "",
        ]
    lines += ["## Targets", "", *targets_table(results), ""]
    for name in PAGE_ORDER:
        lines += [f"## {SECTION_TITLES[name]}", ""]
        if INTROS[name]:
            lines += [INTROS[name], ""]
        section = sections.get(name)
        if section is None:
            lines += [f"Not run yet: `{RERUN[name]}`.", ""]
            continue
        lines += [*provenance(section), ""]
        if section.get("error"):
            lines += [f"**Failed**: {section['error']}", ""]
            continue
        lines += [*RENDERERS[name](section["data"]), ""]
        if plots := plot_line(section, plot_dir):
            lines += [*plots, ""]
    lines += ["## Peak memory and database size", "", *render_resources(results), ""]
    if notes:
        lines += [f"## {NOTES_TITLE}", "", NOTES_INTRO, ""]
        lines += [note.strip() + "\n" for note in notes]
    return "\n".join(lines).rstrip() + "\n"
