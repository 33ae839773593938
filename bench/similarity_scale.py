"""Each local model's cosine scale against MiniLM's, the scale recall's fusion constants were
measured on (not a test; run by hand):

    .venv/bin/python -m bench.similarity_scale [--json]

On bench/data/quality — the set the fusion's similarity constants were chosen on
(docs/recall.md, "Hybrid recall"), never the LoCoMo conversations — every memory is embedded
as recall's index embeds it and every query as recall does. Two levels are read per model:
*unrelated*, the median cosine of a query to the memories that are not its targets, and
*target*, the median cosine of a query to its targets. The affine map that carries a model's
two levels onto MiniLM's is printed as (offset, scale) for graph/embedding/local_models.py's
`similarity_map`; it keeps the model's own order of memories for any query.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data" / "quality"


def _lines(name: str) -> list[dict[str, Any]]:
    with (DATA / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def levels(model: str) -> dict[str, float]:
    """The unrelated and target levels of `model` on the quality set."""
    from graph.embedding import local_models
    from graph.embedding.local import local_embedder
    from graph.search.text import embedding_text

    spec = local_models.find(model)
    if spec is None:
        sys.exit(f"unknown local model {model!r}")
    embedder = local_embedder(spec)
    memories = _lines("memories.jsonl")
    queries = _lines("queries.jsonl")
    names = [m["name"] for m in memories]
    texts = [embedding_text(m["name"], m.get("title"), m["observations"]) for m in memories]
    passages = embedder.embed(texts)
    asked = embedder.embed_queries([q["query"] for q in queries])
    sims = asked @ passages.T
    index = {n: i for i, n in enumerate(names)}
    target = np.zeros_like(sims, dtype=bool)
    for row, q in enumerate(queries):
        for t in q["targets"]:
            if t in index:
                target[row, index[t]] = True
    return {
        "unrelated": float(np.median(sims[~target])),
        "target": float(np.median(sims[target])),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("MEMESH_HOME", tempfile.mkdtemp(prefix="memesh-scale-"))
    os.environ.setdefault("MEMESH_SECRET_KEY", "memesh-bench-not-secret")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memesh_site.settings")
    import django

    django.setup()
    from graph.embedding import local_models

    reference = levels(local_models.MINILM.name)
    rows = {local_models.MINILM.name: {**reference, "offset": 0.0, "scale": 1.0}}
    for spec in local_models.MODELS:
        if spec is local_models.MINILM:
            continue
        own = levels(spec.name)
        scale = (reference["target"] - reference["unrelated"]) / (own["target"] - own["unrelated"])
        rows[spec.name] = {**own, "offset": reference["unrelated"] - scale * own["unrelated"]}
        rows[spec.name]["scale"] = scale
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for name, row in rows.items():
        print(
            f"{name:26} unrelated {row['unrelated']:.3f}  target {row['target']:.3f}  "
            f"similarity_map ({row['offset']:.3f}, {row['scale']:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
