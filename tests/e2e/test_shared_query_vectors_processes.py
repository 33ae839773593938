"""A query one process embedded is not embedded again by another process of the same home
(graph/storage/query_vectors.py): the first process's exit writes what it embedded, and the
second answers hybrid recall with an embedder that refuses to embed anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.processes import memesh_env, read_rows, run_python

pytestmark = pytest.mark.slow

FIRST = """
import django
django.setup()
from graph.indexing import embedding_pass
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS
ctx = CallContext(source_host="cli")
OPERATIONS["remember"].run(
    {"name": "walrus-notes", "type": "note", "observations": ["the walrus keeps its tusks clean"]},
    ctx,
)
embedding_pass.embed_pending()
out = OPERATIONS["recall"].run({"query": "walrus tusks"}, ctx)
print(out["retrieval"]["mode"])
"""

# The second process may not embed: an attempt fails its recall over to keyword-only, which
# the envelope reports as degraded.
SECOND = """
import json, sys
import django
django.setup()
from graph.embedding import provider
from graph.embedding.base import EmbedderError
from graph.ops.kit.operation import CallContext
from graph.ops.registry import OPERATIONS

def refuse(texts):
    raise EmbedderError("this process must not embed", kind="unavailable")

provider.current().embed = refuse
ctx = CallContext(source_host="cli")
print(json.dumps([
    {"mode": out["retrieval"]["mode"], "degraded": out["retrieval"]["degraded"],
     "names": [e["name"] for e in out["entities"]]}
    for out in (OPERATIONS["recall"].run({"query": q}, ctx) for q in sys.argv[1:])
]))
"""


def test_a_second_process_reuses_the_query_embedding_of_the_first(tmp_path: Path) -> None:
    env = memesh_env(tmp_path, MEMESH_EMBEDDER="deterministic")
    migrated = run_python(["-m", "memesh_site.cli", "migrate", "--verbosity", "0"], env)
    assert migrated.returncode == 0, migrated.stderr
    first = run_python(["-c", FIRST], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["hybrid"]
    rows = read_rows(tmp_path / "knowledge-graph.db", "SELECT key FROM graph_queryvector")
    assert len(rows) == 1  # written at the first process's exit

    second = run_python(["-c", SECOND, "walrus tusks", "walrus clean"], env)
    assert second.returncode == 0, second.stderr
    seen, unseen = json.loads(second.stdout.strip().splitlines()[-1])

    assert seen == {"mode": "hybrid", "degraded": False, "names": ["walrus-notes"]}
    assert unseen["mode"] == "fts" and unseen["degraded"] is True  # it would have embedded
