"""Where a process's start-up goes, from `python -X importtime`: each module's own import time
(its "self" column), summed by area — the table of docs/performance-notes.md.

importtime reports a module only when an `import` statement (or `__import__`) loads it; one
loaded through importlib.import_module (Django's apps and commands, the hook dispatcher's
handlers) is missing from the list, but what it imports is there, so the sums hold. Its figures
include the instrument's own overhead: compare areas with each other and with a run before a
change, not with a wall time.
"""

from __future__ import annotations

import statistics

# (area, module-name prefixes), first match wins; what matches none is "stdlib and other".
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("django ORM (django.db.models)", ("django.db.models",)),
    ("django forms, templates", ("django.forms", "django.template")),
    ("django urls, http, serializers", ("django.urls", "django.http", "django.core.serializers")),
    ("django contrib apps", ("django.contrib",)),
    ("django (conf, apps, management, db backend, utils)", ("django",)),
    ("asgiref, asyncio (django.conf)", ("asgiref", "asyncio", "ssl", "_ssl", "socket")),
    ("sqlparse", ("sqlparse",)),
    ("pydantic", ("pydantic", "pydantic_core", "annotated_types", "typing_inspection")),
    ("numpy", ("numpy",)),
    ("sqlite-vec package", ("sqlite_vec",)),
    ("onnxruntime, tokenizers", ("onnxruntime", "tokenizers")),
    ("snowballstemmer", ("snowballstemmer",)),
    ("graph recall pipeline, vector side", ("graph.ops.recall", "graph.indexing")),
    (
        "graph write path (remember, capture, feedback)",
        (
            "graph.ops.remember",
            "graph.capture.capture",
            "graph.capture.commit_capture",
            "graph.ops.feedback",
            "graph.ops.kit.writes",
        ),
    ),
    ("graph operations (other)", ("graph.ops",)),
    ("graph models, storage, search, embedding", ("graph",)),
    ("api (CLI, hooks)", ("api",)),
    ("agents, proposals, dashboard", ("agents", "proposals", "dashboard")),
    ("memesh_site", ("memesh_site",)),
    ("rest_framework, django_htmx", ("rest_framework", "django_htmx")),
)
OTHER = "stdlib and other"


def area_of(module: str) -> str:
    for area, prefixes in AREAS:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return area
    return OTHER


def self_times(stderr: str) -> dict[str, float]:
    """Each module's own import time in seconds, from one run's `-X importtime` output."""
    out: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line.removeprefix("import time:").split("|", 2)
        out[name.strip()] = int(own) / 1e6
    return out


def by_area(runs: list[dict[str, float]]) -> dict[str, float]:
    """The median over runs of each area's total, in seconds, largest first."""
    totals = []
    for run in runs:
        areas: dict[str, float] = {}
        for module, seconds in run.items():
            area = area_of(module)
            areas[area] = areas.get(area, 0.0) + seconds
        totals.append(areas)
    names = {a for t in totals for a in t}
    median = {a: statistics.median([t.get(a, 0.0) for t in totals]) for a in names}
    return dict(sorted(median.items(), key=lambda kv: -kv[1]))
