""" "Remember this": a user's prompt that asks for something to be kept, stored as said.

`remember_intent` reads a prompt for an explicit request — an imperative at the start of the
prompt or of a sentence ("Remember that we deploy with fly.io", "remember this: …", "save this
to memesh: …", and the same in a few other languages) — and returns what follows it, up to the
end of its paragraph. When in doubt it does not match: a missed request costs the user a
repeat, while a false one stores a sentence nobody asked to keep. A question ("remember that
bug from yesterday?") is no request; neither is a request with nothing after it ("remember
this"), which points at the conversation: the agent decides what to store, and the hook only
reminds it to.

`remember_intent_capture` stores the request's text as a `note` (named after the text, so the
same request twice is one memory), tagged `source:user-prompt` and the project, with the
session in `metadata.session_id`; a request carrying a secret is not stored.

The detector needs no Django: UserPromptSubmit runs it on every prompt, and answers one with
no request (in a session with no recipient) before Django is set up (api/hooks/triage.py).
The capture imports the write path when it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graph.capture.clipping import clip

if TYPE_CHECKING:
    from graph.capture.capture import Captured

USER_PROMPT_TAG = "source:user-prompt"
MIN_CONTENT_CHARS = 12
MAX_CONTENT_CHARS = 2000

_START = r"(?:^|(?<=[.!?。！？\n])\s*)"
_PLEASE = r"(?:(?:please|pls|hey|ok|okay)[,\s]+)?"
# Each pattern ends where the content begins.
_SENTENCE_STARTS = (
    r"(?:remember|memori[sz]e|keep\s+in\s+mind)\s+(?:this|that)\b\s*[:,\-–—]?\s*",
    r"(?:remember|memori[sz]e|keep\s+in\s+mind)\s*:\s*",
    r"(?:save|store|add|put|write|keep)\s+(?:(?:this|that|it)\s+)?(?:to|in|into)\s+"
    r"(?:memesh|(?:your\s+|the\s+)?memory)\s*[:,\-–—]?\s*",
    r"(?:recuerda|recordar|memoriza)\s+(?:esto|eso|que)\s*[:,]?\s*",
    r"(?:retiens|souviens-toi\s+(?:de\s+ceci|que)|m[ée]morise)\s*(?:ceci|cela|que)?\s*[:,]?\s*",
    r"(?:lembre(?:-se)?|memorize)\s+(?:disso|disto|isto|isso|que)\s*[:,]?\s*",
    r"merk\s+dir\s*(?:das|dass|folgendes)?\s*[:,]?\s*",
)
_INTENTS = (
    *(re.compile(_START + _PLEASE + b, re.IGNORECASE | re.MULTILINE) for b in _SENTENCE_STARTS),
    # Chinese and Japanese: no sentence-start anchor (no spaces to anchor on).
    re.compile(r"(?:記住|记住|記下來|记下来|覚えておいて)[:：,，]?\s*"),
)
_PARAGRAPH_END = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class RememberIntent:
    content: str  # "" when the request names nothing (it points at the conversation)


def remember_intent(prompt: str) -> RememberIntent | None:
    """The explicit remember request in `prompt`, or None (the module docstring)."""
    if not prompt or not prompt.strip():
        return None
    for pattern in _INTENTS:
        match = pattern.search(prompt)
        if match is None:
            continue
        rest = prompt[match.end() :]
        content = _PARAGRAPH_END.split(rest, maxsplit=1)[0].strip()
        if content.endswith(("?", "？")):
            return None  # "remember that bug from yesterday?" asks, it does not tell
        if len(content) < MIN_CONTENT_CHARS:
            return RememberIntent("")
        return RememberIntent(clip(content, MAX_CONTENT_CHARS))
    return None


@dataclass(frozen=True)
class IntentDropped:
    detector: str


def remember_intent_capture(
    *, content: str, project: str | None, session_id: str | None, source_host: str | None = None
) -> Captured | IntentDropped:
    from graph.capture.capture import (
        AUTO_CAPTURE_TAG,
        CAPTURE_SOURCE_HOST,
        entity_capture,
        first_secret,
    )
    from graph.ops.remember.note import parse_note
    from graph.project_tags import project_tag

    detector = first_secret(content)
    if detector is not None:
        return IntentDropped(detector)
    note = parse_note(content)
    tags = [AUTO_CAPTURE_TAG, USER_PROMPT_TAG, *([project_tag(project)] if project else [])]
    metadata: dict[str, object] = {"captured_from": "user-prompt"}
    if session_id:
        metadata["session_id"] = session_id
    return entity_capture(
        name=note.name,
        type="note",
        title=note.title,
        observations=[content],
        tags=tags,
        metadata=metadata,
        source_host=source_host or CAPTURE_SOURCE_HOST,
    )
