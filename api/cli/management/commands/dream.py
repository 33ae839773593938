"""`memesh dream run|patterns|conflicts|list|show|accept|reject`: the dream workflow from the
terminal. Each subcommand calls the same function as its REST route or Celery task; errors
print the failure envelope on stderr with --json (else a message naming the errorCode) and
exit 1 (api/cli/base.py). `dream run --from-transcripts` mines this directory's project's Claude
Code sessions instead (dream/mining/service.py); a `--if-due` run that is not due
prints why and exits 0. Flags that do not go together are a usage error (exit 2)."""

from __future__ import annotations

import getpass
import json
import socket
from collections.abc import Mapping
from typing import Any

from django.core.management.base import CommandParser

from api.cli.base import MemeshCommand, model_field_help
from core.errors import Failure, InvalidInput
from core.invocation import caller_directory
from dream import conflicts, dreamer, patterns
from dream.mining import service as mining
from dream.patterns import DEFAULT_MIN_SIGNAL
from proposals import decisions, schemas, selectors
from proposals.models import ReviewChannel
from proposals.results import AcceptResult, ProposalListEntry, RejectResult


def _bounded(low: int, high: int, name: str) -> Any:
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise InvalidInput(f"{name} must be an integer (got {raw!r})", field=name) from None
        if not low <= value <= high:
            raise InvalidInput(f"{name} must be between {low} and {high} (got {value})", field=name)
        return value

    return parse


def _reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


class Command(MemeshCommand):
    help = "LLM cluster compactor, pattern detector and conflict judge, with review."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

        def add(name: str, help: str) -> CommandParser:
            p: CommandParser = sub.add_parser(name, help=help)
            p.add_argument("--json", action="store_true", help="Print the result as JSON.")
            return p

        # `run`'s flags are POST /v1/dream's fields (DreamRunInput); with --from-transcripts
        # --dry-run and --max-llm-calls set the mining's instead, whose cap is higher.
        def run_help(name: str) -> str:
            return model_field_help(schemas.DreamRunInput, name)

        run = add("run", "Propose digests of clusters of episodic memories.")
        run.add_argument("--project", help=run_help("project"))
        run.add_argument("--dry-run", action="store_true", help=run_help("dryRun"))
        run.add_argument(
            "--max-llm-calls",
            default=str(schemas.DEFAULT_MAX_LLM_CALLS),
            help=f"{run_help('maxLlmCalls')} With --from-transcripts "
            f"1–{schemas.MAX_TRANSCRIPT_LLM_CALLS}.",
        )
        run.add_argument(
            "--window-days",
            help=f"{run_help('windowDays')} Default {schemas.DEFAULT_WINDOW_DAYS}.",
        )
        run.add_argument("--validate", action="store_true", help=run_help("validate_"))
        run.add_argument(
            "--from-transcripts",
            action="store_true",
            help="Mine this project's Claude Code and Codex session transcripts for decisions, "
            "lessons and facts instead (staged for review; --project does not apply).",
        )
        run.add_argument(
            "--if-due",
            action="store_true",
            help="With --from-transcripts: do nothing (exit 0, saying why) unless "
            "transcriptMining is on and --min-interval-hours passed since the last run.",
        )
        run.add_argument(
            "--min-interval-hours",
            help=f"With --if-due (default {mining.DEFAULT_MIN_INTERVAL_HOURS}).",
        )
        self._run_parser = run

        pat = add("patterns", "Propose emergent patterns across a project's memories.")
        pat.add_argument("--project", help="Restrict to one project.")
        pat.add_argument("--dry-run", action="store_true", help="No LLM call, nothing staged.")
        pat.add_argument("--max-llm-calls", default=str(schemas.DEFAULT_MAX_LLM_CALLS))
        pat.add_argument("--window-days", default=str(schemas.DEFAULT_WINDOW_DAYS))
        pat.add_argument("--min-signal", default=str(DEFAULT_MIN_SIGNAL))

        con = add("conflicts", "Judge near-duplicate pairs of signal memories.")
        con.add_argument("--max-pairs", default=str(schemas.DEFAULT_MAX_PAIRS))
        con.add_argument("--dry-run", action="store_true", help="Count candidates only.")

        lst = add("list", "List proposals.")
        lst.add_argument("--status", default="pending", help="pending|applied|rejected|all")

        show = add("show", "Print a proposal in full, with its source memories.")
        show.add_argument("id", type=int)

        acc = add("accept", "Apply a pending proposal.")
        acc.add_argument("id", type=int)

        rej = add("reject", "Reject a pending proposal (sources untouched).")
        rej.add_argument("id", type=int)
        rej.add_argument(
            "--reason", default="", help=model_field_help(schemas.RejectInput, "reason")
        )

    def error_text(self, failure: Failure) -> str:
        return f"{super().error_text(failure)} ({failure.error_code})"

    def handle(self, *args: Any, **options: Any) -> None:
        result = getattr(self, f"_{options['action']}")(options)
        if options.get("json"):
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(self._text(options["action"], result))

    # --- subcommands (each one service or selector call) ----------------------------------

    def _run(self, o: dict[str, Any]) -> Mapping[str, Any]:
        if o["from_transcripts"]:
            return self._mine(o)
        for flag in ("if_due", "min_interval_hours"):
            if o[flag]:
                self._usage(f"--{flag.replace('_', '-')} goes with --from-transcripts")
        return dreamer.dream_run(
            project=o["project"],
            window_days=_bounded(1, schemas.MAX_WINDOW_DAYS, "window-days")(
                o["window_days"] or str(schemas.DEFAULT_WINDOW_DAYS)
            ),
            max_llm_calls=_bounded(1, schemas.MAX_LLM_CALLS, "max-llm-calls")(o["max_llm_calls"]),
            validate=o["validate"],
            dry_run=o["dry_run"],
        )

    def _mine(self, o: dict[str, Any]) -> dict[str, Any]:
        for flag in ("project", "window_days", "validate"):
            if o[flag]:
                self._usage(f"--{flag.replace('_', '-')} does not apply to --from-transcripts")
        if o["min_interval_hours"] is not None and not o["if_due"]:
            self._usage("--min-interval-hours goes with --if-due")
        hours = _bounded(0, mining.MAX_MIN_INTERVAL_HOURS, "min-interval-hours")(
            o["min_interval_hours"] or str(mining.DEFAULT_MIN_INTERVAL_HOURS)
        )
        return mining.transcripts_mine(
            directory=caller_directory(),
            max_llm_calls=_bounded(1, schemas.MAX_TRANSCRIPT_LLM_CALLS, "max-llm-calls")(
                o["max_llm_calls"]
            ),
            dry_run=o["dry_run"],
            if_due=o["if_due"],
            min_interval_hours=hours,
        )

    def _usage(self, message: str) -> None:
        """A flag combination argparse cannot express: its usage error (exit 2)."""
        self._run_parser.error(message)

    def _patterns(self, o: dict[str, Any]) -> patterns.PatternsResult:
        return patterns.dream_patterns(
            project=o["project"],
            window_days=_bounded(1, schemas.MAX_WINDOW_DAYS, "window-days")(o["window_days"]),
            max_llm_calls=_bounded(1, schemas.MAX_LLM_CALLS, "max-llm-calls")(o["max_llm_calls"]),
            min_signal=_bounded(1, 10_000, "min-signal")(o["min_signal"]),
            dry_run=o["dry_run"],
        )

    def _conflicts(self, o: dict[str, Any]) -> conflicts.ConflictsResult:
        return conflicts.dream_conflicts(
            max_pairs=_bounded(1, schemas.MAX_PAIRS, "max-pairs")(o["max_pairs"]),
            dry_run=o["dry_run"],
        )

    def _list(self, o: dict[str, Any]) -> list[ProposalListEntry]:
        return selectors.proposal_list(o["status"].strip().lower())

    def _show(self, o: dict[str, Any]) -> dict[str, Any]:
        detail = selectors.proposal_detail(o["id"])
        sources = selectors.proposal_sources(selectors.proposal_get(o["id"]))
        return {**detail, "sources": sources}

    def _accept(self, o: dict[str, Any]) -> AcceptResult:
        return decisions.proposal_accept(
            o["id"], channel=ReviewChannel.CLI, reviewer=_reviewer(), origin=socket.gethostname()
        )

    def _reject(self, o: dict[str, Any]) -> RejectResult:
        return decisions.proposal_reject(
            o["id"],
            reason=o["reason"],
            channel=ReviewChannel.CLI,
            reviewer=_reviewer(),
            origin=socket.gethostname(),
        )

    # --- text output ------------------------------------------------------------------------

    def _text(self, action: str, result: Any) -> str:
        if action == "list":
            if not result:
                return "No proposals."
            return "\n".join(
                f"#{p['id']} [{p['status']}] {p['kind']} {p['project'] or '-'} "
                f"{p['digest_name']} ({p['source_count']} sources)"
                for p in result
            )
        if action == "show":
            return _show_text(result)
        if action == "accept":
            return (
                f"Accepted proposal #{result['proposalId']} ({result['kind']}): "
                f"{result['digestEntityName'] or 'relation created'}; "
                f"{result['sourcesArchived']} archived, {result['sourcesLinked']} linked."
            )
        if action == "reject":
            return f"Rejected proposal #{result['id']}."
        if action == "run" and result.get("mode") == "transcripts":
            return "\n".join(mining_text(result))
        return "\n".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in result.items())


def _show_text(d: dict[str, Any]) -> str:
    p = d["proposed_digest"]
    lines = [f"Proposal #{d['id']} [{d['status']}] {d['kind']} project={d['project'] or '-'}"]
    if d["kind"] == "relation":
        lines.append(f"  {p.get('from')} -{p.get('relation')}-> {p.get('to')}")
        lines.append(f"  verdict: {p.get('verdict')}  rationale: {p.get('rationale')}")
    else:
        lines.append(f"  name: {p.get('name')}  type: {p.get('type')}")
        lines.extend(f"  - {o}" for o in p.get("observations", []))
        lines.append(f"  tags: {', '.join(p.get('tags', []))}")
        for w in p.get("validation_warnings", []):
            lines.append(f"  ! {w.get('claim')}: {w.get('reason')}")
        source = p.get("source") or {}
        if source.get("transcript"):
            lines.append(
                f"  from session {source.get('sessionId')} (turns "
                f"{'–'.join(str(t) for t in source.get('turns', []))}, {source.get('at')})"
            )
        if p.get("evidence"):
            lines.append(f'  evidence: "{p["evidence"]}"')
    lines.append(f"  model: {d['llm_model']}  prompt: {d['prompt_version']}")
    if d["reason"]:
        lines.append(f"  reason: {d['reason']}")
    lines.append("Sources:")
    for s in d["sources"]:
        lines.append(f"  [{s['id']}] {s['name']} ({s['type']}, {s['status']})")
        lines.extend(f"    - {o}" for o in s["observations"])
    return "\n".join(lines)


def _quoted(name: str | None) -> str:
    return f'"{name}"' if name else "(name withheld: it holds the secret)"


def mining_text(r: dict[str, Any]) -> list[str]:
    """A transcript-mining result for a person."""
    if not r["ran"]:
        return [f"Not due: {r['reason']}."]
    sessions = r["sessions"]
    fresh = [s for s in sessions if s["newTurns"]]
    head = "Dry run: " if r["dryRun"] else ""
    lines = [
        f"{head}{len(sessions)} session{'s' if len(sessions) != 1 else ''} of "
        f"{r['project'] or '(no project)'}, {len(fresh)} with turns not mined yet"
    ]
    for s in sessions:
        when = (s["startedAt"] or "")[:16].replace("T", " ")
        done = "" if r["dryRun"] else f": {s['candidates']} candidates, {s['staged']} staged"
        lines.append(f"  {s['sessionId']}  {when}  {s['turns']} turns ({s['newTurns']} new){done}")
    if r["dryRun"]:
        lines.append("No LLM was called and nothing was staged.")
        return lines
    lines.append(f"LLM calls: {r['llmCalls']}")
    staged = r["staged"]
    lines.append(
        f"Staged {len(staged)} proposal{'s' if len(staged) != 1 else ''} for review"
        + (" (memesh dream list):" if staged else ".")
    )
    lines.extend(f"  #{p['proposalId']} {p['type']} {p['name']}" for p in staged)
    for d in r["droppedSecrets"]:
        lines.append(
            f"Dropped a {d['type']} {_quoted(d['name'])} of {d['sessionId']}: a secret in its "
            f"{d['field']} ({d['detector']})"
        )
    for d in r["skippedDuplicates"]:
        of = d["duplicateOf"]
        known = (
            f'memory #{of["entityId"]} "{of["name"]}"'
            if "entityId" in of
            else f"proposal #{of['proposalId']} ({of['status']})"
        )
        similarity = f", similarity {of['similarity']}" if "similarity" in of else ""
        lines.append(f'Skipped "{d["name"]}" of {d["sessionId"]}: it restates {known}{similarity}')
    for s in r["skipped"]:
        lines.append(f"Left for the next run: {s['sessionId']}: {s['reason']}")
    check = r["duplicateCheck"] or {}
    if check.get("ran"):
        lines.append(f"Duplicate check: {check['index']} (similarity ≥ {check['threshold']})")
    else:
        lines.append(f"Duplicate check did not run: {check.get('reason')}; nothing was skipped")
    return lines
