"""Stop: the end of a turn. The session is the transcript the host hands over
(`transcript_path`: Claude Code's transcript or Codex's rollout file, read by core/transcripts
through api/hooks/transcript.py). In order, each step on its own (one failing does not stop
the others; its failure is recorded in hook-outcomes.jsonl):

1. citations: the `[mem:id]` handles in the agent's own replies of this session (never the
   memory block it was shown) count as hits, and the session is settled (graph/ops/
   feedback.py `record_citations`: what recall returned to it and it did not cite becomes a
   miss) — feeding recall's impact factor;
2. session evidence: what happened, bounded — files edited, errors and the fixes that followed
   (graph/capture/session_evidence.py);
3. the handoff: the exact project's, replaced by the latest long-enough cleaned reply
   (graph/capture/handoff.py);
4. note files: `<CLAUDE_CONFIG_DIR>/projects/<slug>/memory/*.md` ingested, one memory per file
   (graph/capture/note_files.py);
5. the dream auto-trigger: a dream pass queued when one is due (dream/due.py),
   never run here;
6. the reminder: when this turn approved a plan, answered a question, committed, or turned a
   test red then green, with no remember / learn call and no note-file change, one line
   suggesting a `remember` — shown to the user (`systemMessage`; Stop has no context for the
   model without blocking);
7. messages: for a session that declared its recipient (MEMESH_RECIPIENT), the turn is
   blocked once per waiting message id without intake that this session was not yet blocked
   for, telling the model to poll, fetch and record intake (api/hooks/inbox.py). The only
   block this hook makes.
Steps 1-5 write, so autoCapture off skips them; the reminder and the messages run either way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from api.hooks import inbox
from api.hooks.output import HookReply, Note, stop_block, system_message
from api.hooks.payload import HookPayload
from api.hooks.transcript import (
    Transcript,
    read_transcript,
    session_evidence,
    turn_signals,
)
from core import hook_outcomes
from core.transcripts import claude_projects_dir, slug
from graph.capture.capture import auto_capture_enabled
from graph.capture.handoff import handoff_replace
from graph.capture.note_files import NoteFilesResult, note_files_ingest
from graph.capture.session_evidence import evidence_capture
from graph.ops.feedback import record_citations

EVENT = "Stop"
MAX_CITING_CHARS = 200_000


def note_directory(payload: HookPayload) -> Path:
    """Claude Code's memory directory of this project: beside the session's transcript
    (`<projects>/<slug>/<session>.jsonl`), else in the configured Claude Code folder under
    the slug Claude Code derives from the working directory."""
    transcript = payload.transcript_path
    if transcript is not None and transcript.parent.parent.name == "projects":
        return transcript.parent / "memory"
    return claude_projects_dir() / slug(payload.cwd) / "memory"


def _step(name: str, work: Callable[[], None]) -> None:
    try:
        work()
    except Exception as exc:
        hook_outcomes.record("stop", "failed", error=exc, step=name)


def handle(payload: HookPayload) -> HookReply:
    reply = HookReply()
    transcript: Transcript | None = None
    path = payload.transcript_path
    if path is not None:
        try:
            transcript = read_transcript(path)
        except OSError as exc:
            reply.notes.append(Note("skipped", "transcript", reason=type(exc).__name__))
    capture = auto_capture_enabled()
    notes_changed = False
    session = payload.session_id
    project = payload.project

    def citations() -> None:
        if transcript is None:
            return
        text = "\n\n".join(transcript.reply_texts())[-MAX_CITING_CHARS:]
        record_citations(text, session_id=session, settle=session is not None)

    def evidence() -> None:
        if transcript is None or session is None:
            return
        result = evidence_capture(
            evidence=session_evidence(transcript, session),
            project=project,
            source_host=payload.source_host,
        )
        reply.notes.extend(Note("dropped", "session-evidence", detector=d) for d in result.dropped)

    def handoff() -> None:
        if transcript is None:
            return
        replies = transcript.reply_texts()
        # Claude Code's and Codex's field; Gemini CLI's AfterAgent calls it `prompt_response`.
        last = payload.text("last_assistant_message") or payload.text("prompt_response")
        if last and (not replies or replies[-1].strip() != last.strip()):
            replies.append(last)  # the transcript is written behind the host: it may lag
        result = handoff_replace(
            project=project, replies=replies, session_id=session, source_host=payload.source_host
        )
        if result.detector is not None:
            reply.notes.append(Note("dropped", "handoff", detector=result.detector))

    def note_files() -> None:
        nonlocal notes_changed
        result: NoteFilesResult = note_files_ingest(
            directory=note_directory(payload), project=project, source_host=payload.source_host
        )
        notes_changed = result.changed
        reply.notes.extend(
            Note("dropped", "note-file", detector=detector) for _, detector in result.dropped
        )

    def dream() -> None:
        from dream.due import enqueue_dream_if_due

        enqueue_dream_if_due(trigger="stop-hook")

    if capture:
        _step("citations", citations)
        _step("evidence", evidence)
        _step("handoff", handoff)
        _step("note-files", note_files)
        _step("dream", dream)
    if transcript is not None and not notes_changed:
        happened = turn_signals(transcript).worth_a_remember()
        if happened:
            reply.stdout = system_message(
                f"MeMesh: this turn {_joined(happened)}, and nothing was stored with "
                "`remember` or `learn`. If it settled a decision or taught a lesson worth "
                "keeping, consider a `remember`."
            )
    _step("messages", lambda: _message_block(payload, reply))
    return reply


def _message_block(payload: HookPayload, reply: HookReply) -> None:
    principal = inbox.declared().principal
    if principal is None:
        return
    reason = inbox.stop_block_reason(principal, payload.project, payload.session_id)
    if reason is None:
        return
    shown = json.loads(reply.stdout).get("systemMessage") if reply.stdout else None
    reply.stdout = stop_block(reason, message=shown)


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
