"""`memesh status`: one screen of what this MEMESH_HOME holds and what is going on — the
database, memories by project and type, the vector index, work waiting (embeddings, queued
tasks, proposals to review), the last dream and who queued it, whether automatic dreams are
on and due (dream/due.py), and whether `memesh serve` is running.

A shell habit, so it stays quick: the reads are counts (graph/status.py,
proposals/selectors.py's `dream_status`), the embedder is never called (nor its model loaded),
there are no system checks, and the server probe (core/serve_record.py) waits at most a
second. `memesh doctor` is the thorough check; status only reports, and exits 0 whenever it
could (1 when the database cannot be read, as every command).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.management.base import CommandParser
from django.utils import timezone

from api.cli.base import MemeshCommand
from core import paths, serve_record
from dream.due import dream_due
from dream.passes import llm_configured
from graph import status
from proposals.selectors import automatic_dream_runs, dream_status

SHOWN_PROJECTS = 8
SHOWN_TYPES = 5


class Command(MemeshCommand):
    help = (
        "One screen: database, memories by project and type, vectors, waiting work, last "
        "dream, and whether the server runs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        report = status_report()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(render(report)))


def status_report() -> dict[str, Any]:
    vectors = status.vector_index_state()
    work = dream_status()
    server = serve_record.server_state(settings.MEMESH_HTTP_HOST, settings.MEMESH_HTTP_PORT)
    original = status.original_memesh_state()
    return {
        "version": settings.VERSION,
        "home": str(paths.memesh_home()),
        "database": status.database_info().as_json(),
        "memories": status.memory_counts().as_json(),
        "vectors": vectors.as_json(),
        "waiting": {
            "embeddings": vectors.waiting_to_embed,
            "tasks": work["tasks"],
            "proposals": work["proposalsPending"],
        },
        "lastDream": {"task": work["lastDream"], "lastProposalAt": work["lastProposalAt"]},
        "automaticDreams": automatic_dreams(),
        "server": server.as_json(),
        # The original MeMesh's database in this home (None: there is none).
        "originalMemesh": original.as_json() if original is not None else None,
        "originalMemeshNotice": original.sentence() if original is not None else None,
    }


def automatic_dreams() -> dict[str, Any]:
    """The Stop hook's and the worker schedule's dreams: whether they can run (an LLM), how
    often the worker checks, whether one is due now and why, and the last ones queued."""
    due = dream_due()
    return {
        "llmConfigured": llm_configured(),
        "checkEverySeconds": max(settings.MEMESH_DREAM_CHECK_SECONDS, 0),
        "due": due.due,
        "reason": due.reason,
        "episodicSince": due.episodic_since,
        "recent": automatic_dream_runs(),
    }


# --- text -------------------------------------------------------------------------------------


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _ago(iso: str | None) -> str:
    if not iso:
        return "at an unknown time"
    seconds = (timezone.now() - datetime.fromisoformat(iso)).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 48 * 3600:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


def _types(types: dict[str, int]) -> str:
    shown = [f"{name} {n}" for name, n in list(types.items())[:SHOWN_TYPES]]
    if len(types) > SHOWN_TYPES:
        shown.append(f"+{len(types) - SHOWN_TYPES} types")
    return ", ".join(shown)


def _memory_lines(memories: dict[str, Any]) -> list[str]:
    lines = [f"memories    {memories['active']} active, {memories['archived']} archived"]
    projects = memories["projects"]
    named = [p for p in projects if p["project"] is not None]
    loose = [p for p in projects if p["project"] is None]
    shown = named[:SHOWN_PROJECTS] + loose
    width = max((len(p["project"] or "(no project)") for p in shown), default=0)
    for p in shown:
        name = p["project"] or "(no project)"
        lines.append(f"  {name:<{width}}  {p['count']:>6}  {_types(p['types'])}")
    hidden = named[SHOWN_PROJECTS:]
    if hidden:
        lines.append(
            f"  … {len(hidden)} more projects ({sum(p['count'] for p in hidden)} memories): "
            "--json lists them all"
        )
    return lines


def _vector_line(v: dict[str, Any]) -> str:
    if not v["available"]:
        return "vectors     sqlite-vec is not loaded: recall is keyword-only"
    if v["embedderError"]:
        return f"vectors     the embedder configuration cannot be read: {v['embedderError']}"
    live, embedder = v["live"], v["embedder"]
    if embedder is None:
        text = "no embedder configured: recall is keyword-only"
    elif live is None:
        text = f"{embedder}: no vectors yet, {v['pending']} memories to embed"
    elif v["reindexNeeded"]:
        text = (
            f"built by {live['identity']} but {embedder} is configured: semantic search is off "
            "until `memesh reindex` completes"
        )
    else:
        waiting = f"{v['pending']} waiting" if v["pending"] else "all current"
        text = f"{embedder}, generation {live['generation']}: {v['vectors']} vectors, {waiting}"
    if v["staging"]:
        staging = v["staging"]
        text += (
            f"; a reindex is half-built (generation {staging['generation']}, "
            f"{staging['vectors']} vectors): `memesh reindex` resumes it"
        )
    if v["stagingUnreadable"]:
        text += "; a half-built index has an unreadable marker (see `memesh doctor`)"
    return f"vectors     {text}"


def _dream_line(last: dict[str, Any]) -> str:
    task, staged = last["task"], last["lastProposalAt"]
    parts = []
    if task is not None:
        when = _ago(task["finishedAt"] or task["createdAt"])
        failed = f" ({task['errorCode']})" if task["errorCode"] else ""
        by = f" (queued by the {task['trigger']})" if task.get("trigger") else ""
        parts.append(f"{task['kind']} {task['status']}{failed} {when}{by}")
    if staged is not None:
        parts.append(f"last proposal staged {_ago(staged)}")
    if not parts:
        return "last dream  none recorded (`memesh dream run` proposes digests for review)"
    return "last dream  " + " · ".join(parts)


def _auto_line(auto: dict[str, Any]) -> str:
    if not auto["llmConfigured"]:
        return "auto dream  off: no LLM is configured (`memesh config set llm …`)"
    every = auto["checkEverySeconds"]
    by = (
        f"the Stop hook and the worker every {_every(every)}"
        if every
        else "the Stop hook (the worker's schedule is off: MEMESH_DREAM_CHECK_SECONDS=0)"
    )
    state = f"due: {auto['reason']}" if auto["due"] else f"not due: {auto['reason']}"
    return f"auto dream  asked by {by} · {state}"


def _every(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def _server_line(server: dict[str, Any]) -> str:
    text = server["detail"]
    if server["running"] and server["worker"] is not None:
        text += ", with its worker" if server["worker"] else ", without a worker (--no-worker)"
    return f"server      {text}"


def _database_detail(db: dict[str, Any]) -> str:
    """A team server's backend and versions; nothing for the SQLite file (its usual line)."""
    if db.get("backend") != "postgresql":
        return ""
    return f"PostgreSQL {db['version']}, pgvector {db['pgvector'] or 'missing'}, "


def render(report: dict[str, Any]) -> list[str]:
    db, waiting = report["database"], report["waiting"]
    tasks = waiting["tasks"]
    return [
        f"memesh {report['version']} · MEMESH_HOME {report['home']}",
        f"database    {db['path']} ({_database_detail(db)}{_size(db['bytes'])})",
        *_memory_lines(report["memories"]),
        _vector_line(report["vectors"]),
        f"waiting     {waiting['embeddings']} memories to embed · tasks: {tasks['queued']} "
        f"queued, {tasks['running']} running · {waiting['proposals']} proposals to review",
        _dream_line(report["lastDream"]),
        _auto_line(report["automaticDreams"]),
        _server_line(report["server"]),
        *([f"original    {report['originalMemeshNotice']}"] if report["originalMemesh"] else []),
    ]
