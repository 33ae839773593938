"""`memesh why FILE [--line N] [--limit N] [--json]`: which commits touched a file, and what
memesh remembers about them.

Two halves, joined here: local git answers which commits (graph/capture/git_history.py: `git log
--follow`, or `git blame` for one line), and the `why` operation — the same one POST /v1/why
runs — answers what the graph holds about them (commit entities, their sessions, memories
tagged `file:<basename>`). Run from inside the repository: git runs in the file's folder, and
the repository picks the project scope (the current directory's when there is none).

--json prints the operation's result with the git side folded in: each commit's `date` and
`subject` beside its `hash`, `line`, and git's abstention (if any) first in the top-level
`abstentions`. An abstention is an answer (exit 0); bad flags exit 1 (2 for argparse usage).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand, cli_context
from core.invocation import caller_directory
from graph.capture.git_history import GitAnswer, file_commits
from graph.ops.why import WHY
from graph.project import project_id

DISPLAY_CAP = 300  # characters of an observation shown (--json keeps them whole)
SESSION_SHOWN = 10  # a session's memories listed per commit (--json lists them all)

# What each abstention means, for a person.
GIT_GAPS = {
    "git_unavailable": "git could not be run (is it installed and on PATH?), so no history "
    "was read",
    "not_a_git_repo": "not inside a git repository, so there is no history to read; run memesh "
    "why from inside the repository",
    "file_not_tracked": "git does not track {file}, so it has no history to attribute",
    "history_unreadable": "git could not read the history of {file} (it failed, timed out, or "
    "the repository has no commits yet): the commits are unknown, not none",
    "line_out_of_range": "{file} has no line {line}",
    "line_uncommitted": "line {line} of {file} is not committed yet: no commit to attribute it to",
}
COMMIT_GAPS = {
    "no_commit_entity": "memesh has no memory of this commit",
    "no_session_link": "no session link: its memory records no session id",
}


def _cap(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= DISPLAY_CAP else f"{flat[:DISPLAY_CAP]}…"


class Command(MemeshCommand):
    help = "Which commits touched a file (local git), and what memesh remembers about them."

    def add_arguments(self, parser: CommandParser) -> None:
        # `file` and `limit` are the operation's fields; the CLI also reads the file's git
        # history itself (relative to where it runs), where REST callers pass `commits`.
        parser.add_argument(
            "file", help=f"{WHY.field_help('file')} Relative to the current directory."
        )
        parser.add_argument(
            "--line", type=int, help="Attribute this one line (git blame) instead of the history."
        )
        limit = WHY.input_model.model_fields["limit"].default
        parser.add_argument(
            "--limit", type=int, default=limit, help=f"{WHY.field_help('limit')} Default {limit}."
        )
        parser.add_argument(
            "--json", action="store_true", help="The full result, as POST /v1/why answers it."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        file: str = options["file"]
        line: int | None = options["line"]
        context = cli_context()
        # The operation's own checks (file, limit) before any git runs.
        WHY.parse({"file": file, "commits": [], "limit": options["limit"]})
        git = file_commits(file, limit=options["limit"], line=line, cwd=Path(caller_directory()))
        project = project_id(git.toplevel) if git.toplevel else context.project
        payload = {
            "file": file,
            "commits": [c.hash for c in git.commits],
            "limit": options["limit"],
            "project": project,
        }
        result = _joined(WHY.run(payload, context), git, line)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(_text(result)))


def _joined(result: dict[str, Any], git: GitAnswer, line: int | None) -> dict[str, Any]:
    """The graph half's result with the git half folded in."""
    by_hash = {c.hash: c for c in git.commits}
    for entry in result["commits"]:
        found = by_hash.get(entry["commit"]["hash"])
        entry["commit"]["date"] = found.date if found else None
        entry["commit"]["subject"] = found.subject if found else None
    if git.abstention:
        result["abstentions"] = [git.abstention, *result["abstentions"]]
    return {"file": result["file"], "line": line, **result}


def _entity_line(entity: dict[str, Any]) -> str:
    title = f" — {entity['title']}" if entity.get("title") else ""
    return f"[{entity['type']}] {entity['name']}{title}"


def _text(result: dict[str, Any]) -> list[str]:
    file, line = result["file"], result["line"]
    commits = result["commits"]
    scope = f" (project {result['project']})" if result["project"] else ""
    if line is not None:
        head = f"{file}:{line}{scope}: " + ("last changed by (git blame)" if commits else "")
    else:
        noun = "commit" if len(commits) == 1 else "commits"
        head = f"{file}{scope}: {len(commits)} {noun} (git log --follow)"
    out = [head.rstrip(": ")]
    for code in result["abstentions"]:
        gap = GIT_GAPS.get(code, code).format(file=file, line=line)
        out.append(f"  ! {gap} ({code})")
    if not commits and not result["abstentions"]:
        out.append("  git lists no commit that touched this file.")
    for entry in commits:
        commit = entry["commit"]
        when = f" {commit['date']}" if commit.get("date") else ""
        subject = f"  {commit['subject']}" if commit.get("subject") else ""
        out.append(f"{commit['hash'][:7]}{when}{subject}")
        entity = entry["entity"]
        if entity is not None:
            out.append(f"  memory: {_entity_line(entity)}")
            out.extend(f"    - {_cap(o)}" for o in entity["observations"][:5])
        session = entry["session"]
        if session is not None:
            members = [e for e in session["entities"] if entity is None or e["id"] != entity["id"]]
            more = "+" if session["truncated"] else ""
            out.append(f"  session {session['session_id']}: {len(members)}{more} other memories")
            out.extend(f"    {_entity_line(e)}" for e in members[:SESSION_SHOWN])
            if len(members) > SESSION_SHOWN or session["truncated"]:
                out.append("    … more (--json lists them)")
        for code in entry["abstentions"]:
            out.append(f"  ! {COMMIT_GAPS.get(code, code)} ({code})")
    tagged = result["file_memories"]["entities"]
    out.append("")
    label = f"file:{result['basename']}"
    if not tagged:
        out.append(f"No memories tagged {label}.")
    else:
        out.append(f"Memories tagged {label} — associated, not commit-derived:")
        for entity in tagged:
            out.append(f"  {_entity_line(entity)}")
            out.extend(f"    - {_cap(o)}" for o in entity["observations"][:3])
    return out
