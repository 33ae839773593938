"""The fusion's rules checked by five-fold rotation over the LoCoMo dev conversations (not a
test; run by hand).

    .venv/bin/python -m bench.rotation --db rot.db            # seed, embed, measure
    .venv/bin/python -m bench.rotation --db rot.db --reuse --json out.json

Each conversation is one fold. Every tunable rule and weight of the fusion (graph.search.
fusion, graph.search.late_interaction, graph.ops.recall.adjacent, graph.search.scoring) is
switched to its alternative one at a time, and every query of the five conversations is
recalled through the product's own path (bench.quality_eval: forward order, usage acting
between queries). A rule is then judged the way a fitted constant must be: for every fold,
the value that scores best on the other four (mean of hit@1/5/10) is the one "tuned", and the
fifth is measured with it; a rule is kept when it wins on average and loses in no fold by more
than a point (0.01) at any k. Keyword-only recall (no embedder) is measured once, as the
floor hybrid must not go below in any fold.

The alternatives are patched into the modules for the run (module constants, and the keyword
defaults that captured them), so the product's code is measured unchanged.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KS = (1, 5, 10)
MARGIN = 0.01


@dataclass(frozen=True)
class Rule:
    name: str
    current: str
    alternative: str
    patches: tuple[tuple[str, str, object], ...]  # (module, attribute, alternative value)


def _modules() -> dict[str, Any]:
    from graph.ops.recall import adjacent
    from graph.search import fusion, late_interaction, scoring

    return {
        "fusion": fusion,
        "late_interaction": late_interaction,
        "adjacent": adjacent,
        "scoring": scoring,
    }


def _linear_keyword_score(relative: float, covered: float) -> float:
    return relative * covered


RULES: tuple[Rule, ...] = (
    Rule("keyword weight min", "0.3", "0.2", (("fusion", "KEYWORD_WEIGHT_MIN", 0.2),)),
    Rule("keyword weight min", "0.3", "0.4", (("fusion", "KEYWORD_WEIGHT_MIN", 0.4),)),
    Rule("keyword weight max", "0.9", "0.8", (("fusion", "KEYWORD_WEIGHT_MAX", 0.8),)),
    Rule(
        "spread lowers the top (max at spread)",
        "0.6",
        "off (0.9)",
        (("fusion", "KEYWORD_WEIGHT_MAX_SPREAD", 0.9),),
    ),
    Rule("top-match bonus", "0.1", "off (0)", (("fusion", "TOP_MATCH_BONUS", 0.0),)),
    Rule(
        "plausibility (0.2..0.4)",
        "on",
        "off",
        (("fusion", "IMPLAUSIBLE_SIMILARITY", -2.0), ("fusion", "PLAUSIBLE_SIMILARITY", -1.0)),
    ),
    Rule(
        "coverage squared in keyword score",
        "squared",
        "linear",
        (("fusion", "keyword_score", _linear_keyword_score),),
    ),
    Rule(
        "similarity rescale 0.2..0.6",
        "0.2..0.6",
        "0.1..0.7",
        (("fusion", "SIMILARITY_FLOOR", 0.1), ("fusion", "SIMILARITY_CEILING", 0.7)),
    ),
    Rule("semantic cut-off", "0.25", "0.2", (("fusion", "SEMANTIC_CUTOFF", 0.2),)),
    Rule("semantic cut-off", "0.25", "0.3", (("fusion", "SEMANTIC_CUTOFF", 0.3),)),
    Rule(
        "neighbours skipped at coverage",
        "0.7",
        "never skipped",
        (("fusion", "NEIGHBOURS_NOT_NEEDED_COVERAGE", 1.01),),
    ),
    Rule("session context weight", "0.25", "off (0)", (("fusion", "CONTEXT_WEIGHT", 0.0),)),
    Rule("session reach", "2", "1", (("fusion", "SESSION_REACH", 1),)),
    Rule("joined context weight", "0.35", "0.25", (("fusion", "JOINED_CONTEXT_WEIGHT", 0.25),)),
    Rule("adjacent turns joined (sources)", "3", "off (0)", (("adjacent", "SOURCES", 0),)),
    Rule("late-interaction lift", "0.25", "off (0)", (("late_interaction", "LIFT_WEIGHT", 0.0),)),
    Rule("late-interaction re-order", "0.5", "off (1)", (("late_interaction", "WEIGHT", 1.0),)),
    Rule("usage bound", "0.15", "off (0)", (("scoring", "USAGE_BOUND", 0.0),)),
)


# Constants that a function captured as a keyword default when it was defined.
CAPTURED = {
    "SEMANTIC_CUTOFF": (("fuse", "cutoff"),),
    "CONTEXT_WEIGHT": (("with_context", "weight"),),
    "JOINED_CONTEXT_WEIGHT": (("with_context", "joined_weight"),),
}


@contextmanager
def applied(rule: Rule | None) -> Iterator[None]:
    """The modules with `rule`'s alternative in place (and the keyword defaults that captured
    the constant, CAPTURED), restored afterwards."""
    if rule is None:
        yield
        return
    modules = _modules()
    with ExitStack() as undo:
        for module_name, attribute, value in rule.patches:
            module = modules[module_name]
            old = getattr(module, attribute)
            setattr(module, attribute, value)
            undo.callback(setattr, module, attribute, old)
            for function_name, key in CAPTURED.get(attribute, ()):
                defaults = getattr(module, function_name).__kwdefaults__
                defaults[key] = value
                undo.callback(defaults.__setitem__, key, old)
        yield


def hits(ranks: Sequence[int | None], k: int) -> float:
    return sum(r is not None and r <= k for r in ranks) / (len(ranks) or 1)


def per_fold(ranks: Sequence[int | None], folds: list[str]) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for fold in sorted(set(folds)):
        mine = [r for r, f in zip(ranks, folds, strict=True) if f == fold]
        out[fold] = {k: hits(mine, k) for k in KS}
    return out


def judge(
    current: Sequence[int | None], alternative: Sequence[int | None], folds: list[str]
) -> dict[str, Any]:
    """Per fold: the current value minus the alternative at each k, and which one tuning on the
    other four folds picks (mean of hit@1/5/10 over their queries)."""
    names = sorted(set(folds))
    cur, alt = per_fold(current, folds), per_fold(alternative, folds)
    deltas = {f: {k: round(cur[f][k] - alt[f][k], 3) for k in KS} for f in names}
    picks = {}
    for held_out in names:
        train = [f != held_out for f in folds]
        c = [r for r, t in zip(current, train, strict=True) if t]
        a = [r for r, t in zip(alternative, train, strict=True) if t]
        picks[held_out] = (
            "current"
            if sum(hits(c, k) for k in KS) >= sum(hits(a, k) for k in KS)
            else "alternative"
        )
    mean = {k: round(sum(deltas[f][k] for f in names) / len(names), 4) for k in KS}
    worst = min(deltas[f][k] for f in names for k in KS)
    return {
        "deltas": deltas,
        "picks": picks,
        "mean": mean,
        "worst": worst,
        "keep": sum(mean.values()) > 0 and worst >= -MARGIN,
    }


def measure(
    queries: list[dict[str, Any]],
    strategy: str,
    embedder: str,
    features: list[dict[str, Any]] | None = None,
) -> list[int | None]:
    """Rank of the first target of each query (quality_eval.run, forward order). With
    `features`, each query's returned names and what its fusion was given are appended to it:
    enough to replay, per question, a rule that would take the keyword-only order instead of
    the hybrid one, or both in turns (docs/recall.md, "Checked by rotation")."""
    from bench import quality_eval
    from graph.ops.recall.access import flush_accesses
    from graph.search import fusion

    seen: dict[str, Any] = {}
    fuse = fusion.fuse

    # Recall calls fusion.fuse through the module, once per hybrid query: wrapping it reads
    # the keyword candidates' coverage and similarities without a second path to keep in step.
    def recording(
        keyword: Mapping[int, float], similarity: Mapping[int, float], **kw: Any
    ) -> list[fusion.Fused]:
        covered: Mapping[int, float] = kw["covered"]
        top = max(keyword, key=keyword.__getitem__, default=None)
        semantic = [s for i, s in similarity.items() if i not in keyword]
        seen.update(
            coverage=max(covered.values(), default=0.0),
            keyword_top_similarity=similarity.get(top, -1.0) if top is not None else -1.0,
            keyword_best_similarity=max(
                (s for i, s in similarity.items() if i in keyword), default=-1.0
            ),
            semantic_best=max(semantic, default=-1.0),
            searched=float(bool(semantic)),
            keyword_candidates=float(len(keyword)),
            spread=fusion.spread(list(similarity.values())),
            whole_query_holders=float(sum(c >= 1.0 - 1e-9 for c in covered.values())),
            keyword_similarity={i: similarity.get(i) for i in keyword},
            keyword_coverage=dict(covered),
            first_holds_whole=float(covered.get(next(iter(keyword), -1), 0.0) >= 1.0 - 1e-9),
        )
        return fuse(keyword, similarity, **kw)

    ranks: list[int | None] = []
    with quality_eval.configured_for(strategy, embedder):
        quality_eval.reset_usage()
        fusion.fuse = recording  # type: ignore[assignment]
        try:
            for q in queries:
                seen.clear()
                names = quality_eval.recall_names(q["query"], strategy, q.get("tag"))
                flush_accesses()
                seen["names"] = names
                targets = set(q["targets"])
                ranks.append(next((i + 1 for i, n in enumerate(names) if n in targets), None))
                if features is not None:
                    features.append(dict(seen))
        finally:
            fusion.fuse = fuse  # type: ignore[method-assign]
    return ranks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", type=Path, help="database file (default: in a fresh temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse an already-seeded --db")
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--locomo", type=Path, help="LoCoMo conversations (default: locomo-dev)")
    ap.add_argument("--rules", help="comma-separated indexes into RULES (default: all)")
    ap.add_argument("--json", type=Path, help="also write per-query ranks and verdicts here")
    args = ap.parse_args(argv)

    from bench import locomo, quality_eval

    quality_eval.setup(argparse.Namespace(db=args.db, embedder=args.embedder))
    memories, queries = locomo.load(args.locomo or locomo.DEFAULT_DIR)
    quality_eval.seed(memories, args.reuse)
    folds = [q["conversation"] for q in queries]

    features: list[dict[str, Any]] = []
    keyword_features: list[dict[str, Any]] = []
    keyword = measure(queries, "keyword", args.embedder, keyword_features)
    hybrid = measure(queries, "hybrid", args.embedder, features)
    report: dict[str, Any] = {
        "folds": {f: folds.count(f) for f in sorted(set(folds))},
        "keyword": per_fold(keyword, folds),
        "hybrid": per_fold(hybrid, folds),
        "hybrid_vs_keyword": judge(hybrid, keyword, folds),
        "ranks": {"keyword": keyword, "hybrid": hybrid},
        "features": features,
        "keyword_names": [f["names"] for f in keyword_features],
        "queries": [q["query"] for q in queries],
        "conversation": folds,
        "rules": [],
    }
    print_folds(report)
    chosen = [int(i) for i in args.rules.split(",") if i] if args.rules is not None else []
    chosen = chosen if args.rules is not None else list(range(len(RULES)))
    for index in chosen:
        rule = RULES[index]
        with applied(rule):
            ranks = measure(queries, "hybrid", args.embedder)
        verdict = judge(hybrid, ranks, folds)
        report["rules"].append(
            {"rule": rule.name, "current": rule.current, "alternative": rule.alternative, **verdict}
        )
        report["ranks"][f"{index}:{rule.name}->{rule.alternative}"] = ranks
        print_rule(rule, verdict)
        sys.stdout.flush()
    if args.json:
        from graph.models import Entity

        report["names"] = dict(Entity.objects.values_list("id", "name"))
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


def print_folds(report: dict[str, Any]) -> None:
    print("| fold (queries) | hybrid hit@1/5/10 | keyword-only hit@1/5/10 | hybrid − keyword |")
    print("|---|---|---|---|")
    delta = report["hybrid_vs_keyword"]["deltas"]
    for fold, n in report["folds"].items():
        h, k = report["hybrid"][fold], report["keyword"][fold]
        print(
            f"| {fold} ({n}) | {' / '.join(f'{h[x]:.3f}' for x in KS)} | "
            f"{' / '.join(f'{k[x]:.3f}' for x in KS)} | "
            f"{' / '.join(f'{delta[fold][x]:+.3f}' for x in KS)} |"
        )
    print()


def print_rule(rule: Rule, verdict: dict[str, Any]) -> None:
    folds = " ".join(
        f"{f}:{'/'.join(f'{d[k]:+.3f}' for k in KS)}" for f, d in verdict["deltas"].items()
    )
    mean = "/".join(f"{verdict['mean'][k]:+.4f}" for k in KS)
    chosen = sum(p == "current" for p in verdict["picks"].values())
    print(
        f"{rule.name} {rule.current} vs {rule.alternative}: mean {mean}, worst "
        f"{verdict['worst']:+.3f}, tuning picks current in {chosen}/5, "
        f"keep={verdict['keep']} | {folds}"
    )


if __name__ == "__main__":
    sys.exit(main())
