"""SessionStart: the briefing block at the top of the session — the same text, fence and
preamble as the `briefing` operation, at the configured level (`memesh config set briefing
<level>`), the exact project's handoff first.

The project is the one of the `cwd` Claude Code reported, and only that one (the agent guide:
without a usable working directory nothing is guessed, and only memories of no project are
shown). A project with nothing to show injects its project line alone, fenced like the
briefing. At level `full` the work-package notice follows the block, when a package is
available (api/hooks/work_package_notice.py). Reads only: nothing is written, whatever
autoCapture says.

A session that declared its recipient id (MEMESH_RECIPIENT) is also told, after the block,
how many messages from other agents wait for it and where, or that its id is refused
(api/hooks/inbox.py); the refusal needs no database, so it is shown even when the briefing
cannot be built.
"""

from __future__ import annotations

from api.hooks import inbox
from api.hooks.output import HookReply, Note, context
from api.hooks.payload import HookPayload
from core import hook_outcomes
from core.errors import MemeshError
from core.redact import redact_message
from graph.ops.briefing import DEFAULT_LEVEL, Level, build_briefing, configured_level
from graph.ops.briefing.render import clean, wrap
from graph.project import project_line

EVENT = "SessionStart"


def handle(payload: HookPayload) -> HookReply:
    notes: list[Note] = []
    who = inbox.declared()
    extra: list[str] = []
    if who.refusal is not None:
        extra.append(who.refusal)
        notes.append(Note("refused", "recipient", reason=who.refusal))
    elif who.principal is not None:
        extra += inbox.session_start_lines(who.principal, payload.session_id)
    try:
        text = _briefing_text(payload, notes)
    except Exception as exc:
        if not extra:
            raise
        notes.append(Note("skipped", "briefing", reason=f"{type(exc).__name__}: {exc}"))
        text = ""
    text = "\n\n".join([t for t in (text, *extra) if t])
    return HookReply(
        stdout=context(EVENT, text) if text else "",
        notes=notes,
        stderr=who.refusal or "",
    )


def _briefing_text(payload: HookPayload, notes: list[Note]) -> str:
    level: Level
    try:
        level = configured_level()
    except MemeshError as exc:  # a hand-edited config.json: brief at the default, say why
        level = DEFAULT_LEVEL
        notes.append(Note("skipped", "briefing-level", reason=exc.message))
    project = project_id_reported(payload)
    briefing = build_briefing(project, level)
    text = briefing.text
    if not text and project is not None:
        text = wrap([clean(project_line(project), 300)])
    if level == "full":  # the agent guide's step 4: an instruction, outside the fence
        # Imported here: the dream app's modules cost a hook at the other levels ~0.4 s.
        from api.hooks.work_package_notice import work_package_notice

        notice = work_package_notice(project, payload.reported_cwd)
        text = f"{text}\n\n{notice}" if text and notice else text or notice
    return text


def project_id_reported(payload: HookPayload) -> str | None:
    return payload.project if payload.reported_cwd is not None else None


def refusal_without_database() -> tuple[str, str]:
    """When the hook cannot even open the database: an invalid MEMESH_RECIPIENT is still
    refused (the agent guide: no database required) — stdout and the stderr line; ("", "")
    when there is nothing to refuse."""
    refusal = inbox.declared().refusal
    if refusal is None:
        return "", ""
    hook_outcomes.record(
        "session-start", "refused", what="recipient", reason=redact_message(refusal)
    )
    return context(EVENT, refusal), refusal
