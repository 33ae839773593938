"""Transcript mining (`memesh dream run --from-transcripts`): the decisions, lessons and facts
of this project's Claude Code, Codex and Gemini CLI sessions, staged as `memory` proposals for
a person to accept. Nothing enters the graph until then (DESIGN §7).

A run, for the project of a directory (its repository's root; core/transcripts finds
the sessions, Claude Code's under CLAUDE_CONFIG_DIR, Codex's under CODEX_HOME and Gemini CLI's
under GEMINI_CLI_HOME, and reads them, oldest first whichever host wrote them):
1. `--if-due` first asks whether a run is due: the `transcriptMining` switch is on
   (MEMESH_TRANSCRIPT_MINING, when set, wins over config.json) and at least
   `min_interval_hours` passed since the project's last completed run
   (dream/mining/state.py). Not due: nothing is read, and the answer says why.
2. Each session's turns not read before (mining_state) go to the LLM in chunks of at most
   MAX_CHUNK_CHARS, oldest session first, one call per chunk against `max_llm_calls`. Every
   secret the capture-path detector finds (core/redact.py) is masked in what the
   provider is sent.
3. Each candidate is sanitised (injected tags, escapes and control characters removed,
   whitespace collapsed, lengths capped), dropped whole when any of its text holds a secret
   (the detector is named in `droppedSecrets`), skipped when the vector index recall uses
   finds a memory it restates (dream/mining/duplicates.py; listed in `skippedDuplicates`),
   and otherwise staged.
4. A session is marked read up to the last chunk that was answered; a failed or unparseable
   call leaves the rest for the next run. A completed run (not a dry run) advances the
   project's `lastMinedAt`.

`--dry-run` lists the sessions and their turn counts without calling an LLM or writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone

from core import transcripts
from core.config_sections import config_load
from core.redact import find_secret, mask_secrets
from dream import prompts
from dream.llm.types import LLMRequest, LLMUnavailable
from dream.mining import state as mining_state
from dream.mining.duplicates import DuplicateCheck, candidate_text
from dream.passes import Budget, pass_start
from graph.project import project_id, project_root, project_tag
from proposals.models import ProposalKind, ProposalStatus
from proposals.staging import proposal_stage

FLOW = "transcript_extractor"
MAX_CHUNK_CHARS = 24_000  # of conversation per call (~6k tokens)
DEFAULT_MIN_INTERVAL_HOURS = 24
MAX_MIN_INTERVAL_HOURS = 24 * 30
MAX_NAME_CHARS = 80
MAX_TITLE_CHARS = 200
MAX_OBSERVATION_CHARS = 1_000
SOURCE_TAG = "source:transcript"


# --- is a run due? ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Switch:
    enabled: bool
    source: str  # env | config | default


def mining_switch() -> Switch:
    """The scheduled-mining switch: MEMESH_TRANSCRIPT_MINING when set, else config.json's
    `transcriptMining` (off when absent)."""
    env: bool | None = settings.MEMESH_TRANSCRIPT_MINING
    if env is not None:
        return Switch(env, "env")
    value = config_load().get("transcriptMining")
    if isinstance(value, bool):
        return Switch(value, "config")
    return Switch(False, "default")


def not_due_reason(project: str, min_interval_hours: int, now: datetime) -> str | None:
    """Why a scheduled (`--if-due`) run of this project would do nothing now; None: it is due."""
    switch = mining_switch()
    if not switch.enabled:
        where = (
            "MEMESH_TRANSCRIPT_MINING is off"
            if switch.source == "env"
            else "transcriptMining is off (`memesh config set transcriptMining true`, or "
            "MEMESH_TRANSCRIPT_MINING=1)"
        )
        return f"scheduled transcript mining is not enabled: {where}"
    last = mining_state.project_state(project).last_mined_at
    if last is not None and now - last < timedelta(hours=min_interval_hours):
        hours = (now - last).total_seconds() / 3600
        return (
            f"this project was mined {hours:.1f} h ago, less than --min-interval-hours "
            f"({min_interval_hours}) ago"
        )
    return None


# --- the run -------------------------------------------------------------------------------


@dataclass
class SessionReport:
    session_id: str
    turns: int
    new_turns: int
    started_at: str
    ended_at: str
    candidates: int = 0
    staged: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "turns": self.turns,
            "newTurns": self.new_turns,
            "startedAt": self.started_at or None,
            "endedAt": self.ended_at or None,
            "candidates": self.candidates,
            "staged": self.staged,
        }


@dataclass
class MiningResult:
    project: str
    dry_run: bool
    sessions: list[SessionReport] = field(default_factory=list)
    llm_calls: int = 0
    staged: list[dict[str, Any]] = field(default_factory=list)
    dropped_secrets: list[dict[str, Any]] = field(default_factory=list)
    skipped_duplicates: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    unusable: int = 0
    duplicate_check: dict[str, Any] | None = None
    duration_ms: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "mode": "transcripts",
            "ran": True,
            "dryRun": self.dry_run,
            "project": self.project,
            "sessions": [s.as_json() for s in self.sessions],
            "proposalsCreated": len(self.staged),
            "llmCalls": self.llm_calls,
            "staged": self.staged,
            "droppedSecrets": self.dropped_secrets,
            "skippedDuplicates": self.skipped_duplicates,
            "skipped": self.skipped,
            "unusable": self.unusable,
            "duplicateCheck": self.duplicate_check,
            "durationMs": self.duration_ms,
        }


def transcripts_mine(
    *,
    directory: str | Path,
    max_llm_calls: int,
    dry_run: bool = False,
    if_due: bool = False,
    min_interval_hours: int = DEFAULT_MIN_INTERVAL_HOURS,
) -> dict[str, Any]:
    """Mine the sessions of `directory`'s project; the result as `--json` prints it. Raises
    LLMNotConfigured when a run that would call the LLM has none."""
    project = project_id(directory)
    now = timezone.now()
    if if_due:
        reason = not_due_reason(project, min_interval_hours, now)
        if reason is not None:
            return {"mode": "transcripts", "ran": False, "project": project, "reason": reason}
    run = pass_start(max_llm_calls=max_llm_calls, dry_run=dry_run)
    result = MiningResult(project=project, dry_run=dry_run)
    sessions = transcripts.all_project_sessions(project_root(directory))
    read = mining_state.project_state(project).mined_turns
    for session in sessions:
        done = min(read.get(session.session_id, 0), len(session.turns))
        result.sessions.append(
            SessionReport(
                session.session_id,
                len(session.turns),
                len(session.turns) - done,
                session.started_at,
                session.ended_at,
            )
        )
    fresh = [(s, r) for s, r in zip(sessions, result.sessions, strict=True) if r.new_turns]
    if dry_run:
        result.duration_ms = run.duration_ms()
        return result.as_json()

    if fresh:  # (the check embeds what waits for a vector: not worth it for nothing to mine)
        miner = _Miner(result, run.budget, DuplicateCheck(), run.language)
        try:
            for session, report in fresh:
                miner.session(session, report, start=report.turns - report.new_turns)
        finally:
            result.llm_calls = miner.budget.used
            result.duplicate_check = miner.duplicates.as_json()
    mining_state.record_run(project, timezone.now())
    result.duration_ms = run.duration_ms()
    return result.as_json()


@dataclass
class _Miner:
    result: MiningResult
    budget: Budget
    duplicates: DuplicateCheck
    language: str | None

    def session(self, session: transcripts.Session, report: SessionReport, *, start: int) -> None:
        read_to = start
        try:
            for begin, end in transcripts.chunks(session.turns, start, MAX_CHUNK_CHARS):
                if self.budget.left() < 1:
                    self._skip(session, f"LLM call budget exhausted (maxLlmCalls) at turn {begin}")
                    return
                if not self._chunk(session, report, begin, end):
                    return
                read_to = end
        finally:
            if read_to > start:
                mining_state.record_sessions(
                    self.result.project, {session.session_id: read_to}, timezone.now()
                )

    def _skip(self, session: transcripts.Session, reason: str) -> None:
        self.result.skipped.append({"sessionId": session.session_id, "reason": reason})

    def _chunk(
        self, session: transcripts.Session, report: SessionReport, begin: int, end: int
    ) -> bool:
        """One call over turns [begin, end); False when it failed (the rest waits)."""
        turns = session.turns[begin:end]
        conversation = mask_secrets("\n".join(transcripts.render_turn(t) for t in turns))
        system, prompt = prompts.transcript_prompt(
            self.result.project, session.session_id, conversation, self.language
        )
        try:
            reply = self.budget.call(
                LLMRequest(flow=FLOW, system=system, prompt=prompt, project=self.result.project)
            )
            mined, unusable = prompts.parse_mined(reply.text)
        except LLMUnavailable as exc:
            self._skip(session, f"LLM unavailable ({exc.error_class}) at turn {begin}")
            return False
        except prompts.Unparseable as exc:
            self._skip(session, f"unparseable LLM reply at turn {begin}: {exc}")
            return False
        self.result.unusable += unusable
        at = next((t.timestamp for t in turns if t.timestamp), "")
        for candidate in mined:
            report.candidates += 1
            self._candidate(candidate, session, report, (begin, end), at, reply.model)
        return True

    def _candidate(
        self,
        candidate: prompts.MinedMemory,
        session: transcripts.Session,
        report: SessionReport,
        turns: tuple[int, int],
        at: str,
        model: str,
    ) -> None:
        sid = session.session_id
        proposed = sanitised(candidate)
        secret = secret_in(candidate, proposed)
        if secret is not None:
            field_name, detector = secret
            self.result.dropped_secrets.append(
                {
                    "sessionId": sid,
                    "type": proposed["type"],
                    # The name is only repeated when the secret is not in it.
                    "name": None if field_name == "name" else proposed["name"],
                    "field": field_name,
                    "detector": detector,
                }
            )
            return
        text = candidate_text(proposed)
        duplicate = self.duplicates.find(text)
        if duplicate is not None:
            self.result.skipped_duplicates.append(
                {"sessionId": sid, "name": proposed["name"], "duplicateOf": duplicate.as_json()}
            )
            return
        proposed["tags"] = [
            *([project_tag(self.result.project)] if self.result.project else []),
            SOURCE_TAG,
            f"session:{sid}",
        ]
        proposed["source"] = {
            "transcript": session.host,
            "sessionId": sid,
            "turns": list(turns),
            "at": at or None,
        }
        proposal, created = proposal_stage(
            kind=ProposalKind.MEMORY,
            project=self.result.project,
            cluster_key=f"transcript:{sid}:{turns[0]}-{turns[1]}",
            source_ids=[],
            proposed=proposed,
            llm_model=model,
            prompt_version=prompts.TRANSCRIPT_PROMPT_VERSION,
        )
        if not created:
            verb = "was rejected" if proposal.status == ProposalStatus.REJECTED else "is pending"
            self.result.skipped_duplicates.append(
                {
                    "sessionId": sid,
                    "name": proposed["name"],
                    "duplicateOf": {"proposalId": proposal.pk, "status": proposal.status},
                    "note": f"the same memory {verb} (proposal {proposal.pk})",
                }
            )
            return
        self.duplicates.staged(text, proposal.pk)
        report.staged += 1
        self.result.staged.append(
            {
                "proposalId": proposal.pk,
                "sessionId": sid,
                "type": proposed["type"],
                "name": proposed["name"],
            }
        )


# --- candidates -------------------------------------------------------------------------------


def _clean(text: str, limit: int) -> str:
    return " ".join(transcripts.clean_text(text).split())[:limit].strip()


def sanitised(candidate: prompts.MinedMemory) -> dict[str, Any]:
    """A candidate as it would be stored: cleaned text, capped lengths, a kebab-case name."""
    observations = [
        o for o in (_clean(o, MAX_OBSERVATION_CHARS) for o in candidate.observations) if o
    ]
    title = _clean(candidate.title, MAX_TITLE_CHARS) if candidate.title else ""
    name = prompts.slug(candidate.name or title or (observations[0] if observations else ""), "")
    proposed: dict[str, Any] = {
        "name": name[:MAX_NAME_CHARS].strip("-") or candidate.type,
        "type": candidate.type,
        "observations": observations,
    }
    if title:
        proposed["title"] = title
    if candidate.evidence:
        proposed["evidence"] = _clean(candidate.evidence, prompts.MAX_EVIDENCE_CHARS)
    return proposed


def secret_in(candidate: prompts.MinedMemory, proposed: dict[str, Any]) -> tuple[str, str] | None:
    """(field, detector) of the first secret in the candidate, as written or as cleaned."""
    fields: Sequence[tuple[str, Sequence[str]]] = (
        ("name", [candidate.name, proposed["name"]]),
        ("title", [candidate.title or "", proposed.get("title", "")]),
        ("observations", [*candidate.observations, *proposed["observations"]]),
        ("evidence", [candidate.evidence or "", proposed.get("evidence", "")]),
    )
    for name, texts in fields:
        for text in texts:
            finding = find_secret(text)
            if finding is not None:
                return name, finding.detector
    return None
