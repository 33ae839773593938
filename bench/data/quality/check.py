"""Validate the retrieval-quality data set; exit 1 on any violation.

    .venv/bin/python -m bench.data.quality.check            # from the repository root
    .venv/bin/python -m bench.data.quality.check --verbose  # also list warnings one by one

Content terms are memesh's own: `graph.search.text.query_terms` for a query and
`graph.search.text.index_text` for a memory's name, observations and tags (what the keyword index
stores for it). A query's shared terms with a memory are
`set(query_terms(query)) & set(index_text(memory_text).split())`.

Rules checked (errors):
- at least 2,000 memories, 150 English queries, 50 English queries of each kind, 18 others;
- every memory: unique kebab-case name (1-255 chars), a type, 1-4 observations of 10-60
  words (Han/Kana/Hangul text: 10-200 characters), a list of tags;
- every query: unique id, a known kind and a lang, 2-12 words (CJK: 2-40 characters), every
  target an existing memory;
- paraphrase: no shared term with any target; keyword: every query term in every target;
  mixed: with each target, some but not all query terms shared;
- memories.jsonl starts with memories_handwritten.jsonl, in order (hand-written first);
- no generated memory holds every term of a keyword query (a generated note must not be an
  exact-keyword answer that competes with the hand-written target).

Warnings (printed as counts; listed with --verbose): a non-target memory holding every term
of a keyword or mixed query, i.e. an exact-keyword rival the ranking has to beat.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

from graph.search.text import index_text, query_terms

HERE = Path(__file__).resolve().parent

MIN_MEMORIES = 2000
MIN_EN_QUERIES = 150
MIN_PER_KIND = 50
MIN_OTHER_LANG = 18
KINDS = ("paraphrase", "keyword", "mixed")
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def memory_text(m: dict) -> str:
    return "\n".join([m["name"], *m["observations"], *m["tags"]])


def is_cjk(text: str) -> bool:
    return any(
        unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL"))
        for ch in text
    )


def load(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    sys.exit(f"{path.name}:{n}: bad JSON: {exc}")
    return rows


def main() -> int:
    verbose = "--verbose" in sys.argv
    errors: list[str] = []
    warnings: list[str] = []

    memories = load(HERE / "memories.jsonl")
    handwritten = load(HERE / "memories_handwritten.jsonl")
    queries = load(HERE / "queries.jsonl")

    # --- memories ---------------------------------------------------------------------------
    if memories[: len(handwritten)] != handwritten:
        errors.append("memories.jsonl does not start with memories_handwritten.jsonl")
    hand_names = {m["name"] for m in handwritten}
    by_name: dict[str, dict] = {}
    terms_of: dict[str, set[str]] = {}
    for m in memories:
        name = m.get("name", "")
        where = f"memory {name!r}"
        if not isinstance(name, str) or not NAME_RE.match(name) or not 1 <= len(name) <= 255:
            errors.append(f"{where}: name is not 1-255 chars of kebab-case")
        if name in by_name:
            errors.append(f"{where}: duplicate name")
        if not isinstance(m.get("type"), str) or not m["type"]:
            errors.append(f"{where}: missing type")
        obs = m.get("observations")
        if not isinstance(obs, list) or not 1 <= len(obs) <= 4:
            errors.append(f"{where}: needs 1-4 observations")
            obs = []
        for o in obs:
            size = len(o) if is_cjk(o) else len(o.split())
            if not (10 <= size <= (200 if is_cjk(o) else 60)):
                errors.append(f"{where}: observation length out of range: {o[:60]!r}")
        if not isinstance(m.get("tags"), list):
            errors.append(f"{where}: tags must be a list")
            m["tags"] = []
        by_name[name] = m
        terms_of[name] = set(index_text(memory_text(m)).split())

    # --- queries ----------------------------------------------------------------------------
    seen_ids: set[str] = set()
    table: Counter[tuple[Any, Any]] = Counter()  # (lang, kind) as the file gives them
    rivals: Counter[str] = Counter()
    for q in queries:
        qid = q.get("id", "?")
        where = f"query {qid}"
        if qid in seen_ids:
            errors.append(f"{where}: duplicate id")
        seen_ids.add(qid)
        kind, lang, text = q.get("kind"), q.get("lang"), q.get("query", "")
        if kind not in KINDS:
            errors.append(f"{where}: unknown kind {kind!r}")
        if not isinstance(lang, str) or not lang:
            errors.append(f"{where}: missing lang")
        size = len(text.replace(" ", "")) if is_cjk(text) else len(text.split())
        if not (2 <= size <= (40 if is_cjk(text) else 12)):
            errors.append(f"{where}: query length out of range: {text!r}")
        targets = q.get("targets") or []
        if not targets:
            errors.append(f"{where}: no targets")
        qterms = set(query_terms(text))
        for t in targets:
            if t not in by_name:
                errors.append(f"{where}: unknown target {t!r}")
                continue
            shared = qterms & terms_of[t]
            if kind == "paraphrase" and shared:
                errors.append(f"{where} (paraphrase): shares {sorted(shared)} with {t}")
            elif kind == "keyword" and shared != qterms:
                errors.append(f"{where} (keyword): {sorted(qterms - shared)} not in {t}")
            elif kind == "mixed" and not shared:
                errors.append(f"{where} (mixed): shares nothing with {t}")
            elif kind == "mixed" and shared == qterms:
                errors.append(f"{where} (mixed): shares every term with {t}")
        if kind in ("keyword", "mixed") and qterms:
            for name, terms in terms_of.items():
                if name in targets or not qterms <= terms:
                    continue
                if kind == "keyword" and name not in hand_names:
                    errors.append(f"{where} (keyword): generated memory {name} holds every term")
                else:
                    rivals[kind] += 1
                    warnings.append(f"{where} ({kind}): {name} holds every query term")
        table[(lang, kind)] += 1

    en = [q for q in queries if q.get("lang") == "en"]
    other = [q for q in queries if q.get("lang") != "en"]
    en_kinds = Counter(q.get("kind") for q in en)
    if len(memories) < MIN_MEMORIES:
        errors.append(f"{len(memories)} memories, need {MIN_MEMORIES}")
    if len(en) < MIN_EN_QUERIES:
        errors.append(f"{len(en)} English queries, need {MIN_EN_QUERIES}")
    for kind in KINDS:
        if en_kinds[kind] < MIN_PER_KIND:
            errors.append(f"{en_kinds[kind]} English {kind} queries, need {MIN_PER_KIND}")
    if len(other) < MIN_OTHER_LANG:
        errors.append(f"{len(other)} non-English queries, need {MIN_OTHER_LANG}")

    # --- summary ----------------------------------------------------------------------------
    types = Counter(m.get("type") for m in memories)
    print(
        f"memories: {len(memories)} ({len(handwritten)} hand-written, "
        f"{len(memories) - len(handwritten)} generated); "
        f"types: {', '.join(f'{t} {n}' for t, n in types.most_common())}"
    )
    langs = sorted({lang for lang, _ in table}, key=lambda x: (x != "en", x))
    print(f"\n{'lang':<6}" + "".join(f"{k:>12}" for k in KINDS) + f"{'total':>8}")
    for lang in langs:
        row = [table[(lang, k)] for k in KINDS]
        print(f"{lang:<6}" + "".join(f"{n:>12}" for n in row) + f"{sum(row):>8}")
    col = [sum(table[(lang, k)] for lang in langs) for k in KINDS]
    print(f"{'all':<6}" + "".join(f"{n:>12}" for n in col) + f"{sum(col):>8}")
    multi = sum(1 for q in queries if len(q.get("targets") or []) > 1)
    print(f"\nqueries with more than one target: {multi}")
    print(
        f"warnings: {len(warnings)} non-target memories hold every term of a query "
        f"(keyword {rivals['keyword']}, mixed {rivals['mixed']})"
    )
    if verbose:
        for w in warnings:
            print("  " + w)
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors:
            print("  " + e)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
