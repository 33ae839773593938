"""The LoCoMo conversations (Maharana et al., ACL 2024) as a recall benchmark: each dialogue
turn one memory, each question recalled with its conversation's tag, the annotated evidence
turns its targets.

The data is not part of the repository (its licence is the dataset's): it is read from the
shared folder next to the checkout when present (`../shared/data/locomo-dev`), or from --locomo
DIR. The turns are stored exactly as the shared HTTP harness stores them (`[date] speaker:
text`, type note, tag `conv:<id>`), so the figures here and the harness's agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO.parent / "shared" / "data" / "locomo-dev"
ADVERSARIAL = 5  # category of unanswerable questions: not scored


def entity_name(conv: str, dia_id: str) -> str:
    return f"locomo-{conv}-{dia_id.replace(':', '-')}".lower()


def load(data_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(memories, queries) in quality_eval's shapes; queries carry the tag to recall with."""
    files = sorted(data_dir.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations in {data_dir}")
    memories: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for path in files:
        conv = path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, turns in data.items():
            if not (key.startswith("session_") and isinstance(turns, list)):
                continue
            date = data.get(f"{key}_date_time", "")
            for turn in turns:
                memories.append(
                    {
                        "name": entity_name(conv, turn["dia_id"]),
                        "type": "note",
                        "observations": [f"[{date}] {turn['speaker']}: {turn['text']}"],
                        "tags": [f"conv:{conv}"],
                    }
                )
        for n, qa in enumerate(data["qa"]):
            evidence = [e for e in qa.get("evidence", []) if isinstance(e, str) and e[:1] == "D"]
            if qa.get("category") == ADVERSARIAL or not evidence:
                continue
            queries.append(
                {
                    "id": f"{conv}-{n}",
                    "query": qa["question"],
                    "targets": [entity_name(conv, e) for e in evidence],
                    "kind": f"category-{qa['category']}",
                    "conversation": conv,
                    "tag": f"conv:{conv}",
                }
            )
    return memories, queries
