"""SessionStart: the briefing block at the top of the session — the same text, fence and
preamble as the `briefing` operation, at the configured level (`memesh config set briefing
<level>`), the exact project's handoff first.

The project is the one of the `cwd` Claude Code reported, and only that one (the agent guide:
without a usable working directory nothing is guessed, and only memories of no project are
shown). A project with nothing to show injects its project line alone, fenced like the
briefing. At level `full` the work-package notice follows the block, when a package is
available (api/hooks/work_package_notice.py). Reads only: nothing is written, whatever
autoCapture says.
"""

from __future__ import annotations

from api.hooks.output import HookReply, Note, context
from api.hooks.payload import HookPayload
from graph.errors import MemeshError
from graph.ops.briefing import DEFAULT_LEVEL, Level, build_briefing, configured_level
from graph.ops.briefing_render import clean, wrap
from graph.project import project_line

EVENT = "SessionStart"


def handle(payload: HookPayload) -> HookReply:
    notes: list[Note] = []
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
    return HookReply(stdout=context(EVENT, text) if text else "", notes=notes)


def project_id_reported(payload: HookPayload) -> str | None:
    return payload.project if payload.reported_cwd is not None else None
