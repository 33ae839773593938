"""PreCompact: before the host (Claude Code, Codex) compresses the session's history — its
transcript read as Stop reads it — what the compression would lose is saved as a
`session-summary` memory (`pre-compact-<session id>`, graph/ops/session_evidence.py): the
session's evidence (files edited, commits, errors and fixes) and where the work stood — the
agent's latest long-enough reply and the user's latest prompt — tagged `urgency:pre-compact`
and with the project. A part carrying a secret is left out. Prints nothing; autoCapture off:
writes nothing.
"""

from __future__ import annotations

from api.hooks.output import HookReply, Note
from api.hooks.payload import HookPayload
from api.hooks.transcript import read_transcript, session_evidence
from graph.capture.capture import auto_capture_enabled
from graph.capture.clipping import clip
from graph.capture.handoff import clean_reply, pick_reply
from graph.capture.session_evidence import evidence_capture

EVENT = "PreCompact"
STOOD_CHARS = 1500


def handle(payload: HookPayload) -> HookReply:
    session, path = payload.session_id, payload.transcript_path
    if session is None or path is None or not auto_capture_enabled():
        return HookReply()
    transcript = read_transcript(path)
    extra: list[str] = []
    latest = pick_reply(transcript.reply_texts())
    if latest:
        extra.append(f"Where the work stood: {clip(latest, STOOD_CHARS)}")
    instructions = payload.text("custom_instructions").strip()
    if instructions:
        extra.append(f"Compaction instructions: {clip(clean_reply(instructions), 500)}")
    trigger = payload.text("trigger") or "auto"
    result = evidence_capture(
        evidence=session_evidence(transcript, session),
        project=payload.project,
        pre_compact=trigger if trigger in ("manual", "auto") else "auto",
        extra=extra,
        source_host=payload.source_host,
    )
    return HookReply(notes=[Note("dropped", "pre-compact", detector=d) for d in result.dropped])
