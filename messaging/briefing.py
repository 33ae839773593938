"""What `briefing` lists for an exact project and recipient: that recipient's deliveries not
fetched yet (graph/ops/kit/delivery_source.py asks; messaging/apps.py registers this). Ids,
senders and times only — the text is fetched with `message`, where it is fenced."""

from __future__ import annotations

from messaging.errors import InvalidRecipient
from messaging.messages import message_poll
from messaging.native import sent_at_text
from messaging.principal import describe, principal_problem

MAX_LINES = 10


def unfetched_delivery_lines(project: str, recipient: str, session: str | None) -> list[str]:
    if principal_problem(recipient) is not None:
        raise InvalidRecipient(describe(recipient), field="recipient")
    unfetched = [
        m
        for m in message_poll(project=project, recipient=recipient, session=session)
        if m.first_fetched_at is None
    ]
    lines = [
        f"- {m.message_id} from {m.sender or 'unknown'}, sent {sent_at_text(m.created_at)}"
        for m in unfetched[:MAX_LINES]
    ]
    if len(unfetched) > MAX_LINES:
        lines.append(f"- and {len(unfetched) - MAX_LINES} more (`message` action poll lists them)")
    return lines
