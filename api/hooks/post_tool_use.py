"""PostToolUse, dispatched on `tool_name`:

- Bash: a `git commit` that succeeded is captured as a commit memory (graph/ops/
  commit_capture.py) — hash, message, diff stats, touched files, `metadata.session_id`, tagged
  with the project — which `memesh why <file>` joins to. The command must be a git commit and
  the commit must exist in the repository at `cwd` (the output looking like one is not
  enough); its facts are read with git, not from the output. Prints nothing.
- ExitPlanMode / AskUserQuestion: a decision was just made; the agent is reminded, once per
  tool per session, to `remember` it. Writes nothing — also when autoCapture is on.
Capture off (autoCapture): the commit is not stored; the reminders still run.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from api.hooks import session_state
from api.hooks.output import HookReply, Note, context
from api.hooks.payload import HookPayload
from api.hooks.tools import COMMIT_COMMAND, COMMIT_LINE

EVENT = "PostToolUse"
# A quiet commit (`git commit -q -m …`) prints no hash: HEAD is taken only when git made it
# this recently and its subject is in the command, so a commit that failed never records an
# older one.
RECENT_HEAD_SECONDS = 120
NOTHING_COMMITTED = re.compile(r"nothing (?:added )?to commit|no changes added to commit")
REMINDED_TOOLS = {
    "ExitPlanMode": "a plan was just approved",
    "AskUserQuestion": "the user just answered a question",
}


def _output(response: object) -> str:
    """What the command printed: Claude Code's `stdout`/`stderr`, Codex's `output`, Gemini
    CLI's `returnDisplay` (its `llmContent` says the same with a prefix on each part)."""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        return "\n".join(
            v
            for k in ("stdout", "stderr", "output", "returnDisplay")
            if isinstance(v := response.get(k), str)
        )
    return ""


def capture_commit(payload: HookPayload) -> HookReply:
    command = payload.tool_input.get("command")
    if not isinstance(command, str) or not COMMIT_COMMAND.search(command):
        return HookReply()
    # Imported for a commit only: most Bash calls are not one, and the capture path (git,
    # remember's write service and what it uses) is most of this hook's start-up.
    from graph.capture.capture import auto_capture_enabled
    from graph.capture.commit_capture import CommitDropped, commit_capture
    from graph.capture.git_history import commit_facts

    if not auto_capture_enabled():
        return HookReply()
    response = payload.tool_response
    if isinstance(response, dict) and any(
        response.get(k)
        for k in ("interrupted", "is_error", "error")  # `error`: Gemini CLI's
    ):
        return HookReply()
    output = _output(response)
    printed = COMMIT_LINE.search(output)
    if printed is None and NOTHING_COMMITTED.search(output):
        return HookReply()
    found = commit_facts(Path(payload.cwd), printed.group(2) if printed else "HEAD")
    if found is None:
        return HookReply()
    facts, committed_at = found
    if printed is None and (
        time.time() - committed_at > RECENT_HEAD_SECONDS or facts.subject not in command
    ):
        return HookReply()  # HEAD may be an older commit: only a fresh one with this message
    stored = commit_capture(
        facts=facts,
        project=payload.project,
        session_id=payload.session_id,
        source_host=payload.source_host,
    )
    if isinstance(stored, CommitDropped):
        return HookReply(notes=[Note("dropped", "commit", detector=stored.detector)])
    return HookReply()


def remind(payload: HookPayload) -> HookReply:
    what = REMINDED_TOOLS[payload.tool_name]
    session = payload.session_id
    if session is not None and not session_state.first_time(session, f"remind:{payload.tool_name}"):
        return HookReply()
    text = (
        f"MeMesh: {what}. If it settled a decision worth keeping, store it now with the "
        "`remember` tool (type `decision`, with `why`: the reason and what would make it stop "
        "holding). Nothing was stored automatically; this reminder appears once per session."
    )
    return HookReply(stdout=context(EVENT, text))


def has_work(payload: HookPayload) -> bool:
    """Whether this call may need more than its input: a Bash command that runs `git commit`,
    or a tool whose decision the agent is reminded of. Every other call is answered with
    silence, and is told from the input alone, so a process without a server answers it
    before Django is set up (api/hooks/triage.py)."""
    if payload.tool_name == "Bash":
        command = payload.tool_input.get("command")
        return isinstance(command, str) and bool(COMMIT_COMMAND.search(command))
    return payload.tool_name in REMINDED_TOOLS


def handle(payload: HookPayload) -> HookReply:
    if not has_work(payload):
        return HookReply()
    if payload.tool_name == "Bash":
        return capture_commit(payload)
    return remind(payload)
