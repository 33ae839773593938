"""UserPromptSubmit: a prompt that asks for something to be remembered ("remember that we
deploy with fly.io") is stored as said (graph/capture/remember_intent.py), and the agent is told
so — with its name, so it does not store it twice (not its [mem:id]: writing that back would
count as a citation of a memory nobody used yet). A request that names nothing ("remember
this") only reminds the agent to call `remember` with what the conversation settled. Other
prompts: nothing. Capture off: nothing is stored; the reminder still runs, saying the agent
must store it itself.

A session that declared its recipient (MEMESH_RECIPIENT) is also told of messages from other
agents newly waiting for it in this project, once per message id (api/hooks/inbox.py).

Most prompts are neither, and this hook runs on every prompt, before the agent sees it: its
module imports no Django, so that, without a server, such a prompt is answered before Django
is set up (`has_work`, api/hooks/triage.py). The inbox and the capture are imported by the
calls that use them.
"""

from __future__ import annotations

import json

from django.conf import settings

from api.hooks.output import HookReply, Note, context
from api.hooks.payload import HookPayload
from graph.capture.remember_intent import remember_intent

EVENT = "UserPromptSubmit"

_ASK_AGENT = (
    "The user asked you to remember something. Decide what exactly from the conversation, "
    "and store it with the `remember` tool (a specific name and type; a decision with its "
    "`why`), then tell the user what you stored."
)


def has_work(payload: HookPayload) -> bool:
    """Whether the prompt asks for something to be remembered or the session declared a
    recipient; every other prompt is answered with silence."""
    return remember_intent(payload.prompt) is not None or bool(settings.MEMESH_RECIPIENT)


def handle(payload: HookPayload) -> HookReply:
    if not has_work(payload):
        return HookReply()
    reply = _remember_reply(payload)
    notice = _message_notice(payload)
    if notice is None:
        return reply
    # One context for the model: the remember answer's text (if any), then the notice.
    shown = (
        json.loads(reply.stdout)["hookSpecificOutput"]["additionalContext"] if reply.stdout else ""
    )
    text = "\n\n".join(t for t in (shown, notice) if t)
    return HookReply(stdout=context(EVENT, text), notes=reply.notes)


def _message_notice(payload: HookPayload) -> str | None:
    """Messages newly waiting for the declared recipient (api/hooks/inbox.py)."""
    from api.hooks import inbox  # the module docstring says why here

    principal = inbox.declared().principal
    if principal is None:
        return None
    return inbox.prompt_notice(principal, payload.project, payload.session_id)


def _remember_reply(payload: HookPayload) -> HookReply:
    intent = remember_intent(payload.prompt)
    if intent is None:
        return HookReply()
    from graph.capture.capture import (
        Captured,
        auto_capture_enabled,
    )  # the module docstring says why
    from graph.capture.remember_intent import IntentDropped, remember_intent_capture

    if not intent.content:
        return HookReply(stdout=context(EVENT, f"MeMesh: {_ASK_AGENT}"))
    if not auto_capture_enabled():
        return HookReply(
            stdout=context(EVENT, f"MeMesh (auto-capture is off, nothing was stored): {_ASK_AGENT}")
        )
    stored = remember_intent_capture(
        content=intent.content,
        project=payload.project,
        session_id=payload.session_id,
        source_host=payload.source_host,
    )
    if isinstance(stored, IntentDropped):
        text = (
            "MeMesh did not store what the user asked to remember: it contains what looks like "
            f"a secret ({stored.detector}). Do not store it; tell the user, and offer to keep "
            "it without the secret."
        )
        return HookReply(
            stdout=context(EVENT, text),
            notes=[Note("dropped", "remember-intent", detector=stored.detector)],
        )
    assert isinstance(stored, Captured)
    text = (
        f'MeMesh stored what the user asked to remember, as the memory "{stored.name}". Do '
        "not store it again; if it needs correcting or more detail, `remember` that name with "
        "`replace: true`."
    )
    return HookReply(stdout=context(EVENT, text))
