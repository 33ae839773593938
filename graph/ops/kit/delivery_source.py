"""The messages a briefing may list for a recipient (the agent guide: `briefing` with an
exact `project` and `recipient` surfaces only that recipient's unfetched deliveries).

Messages live in the agents app (messaging/), which graph must not import (DESIGN §2), so the app
registers where they come from when Django starts (messaging/apps.py) and the briefing asks through
here. It sits in the kit, not in the briefing package: every process sets the apps up, and importing
the briefing package would load the operation and pydantic into each of them. A source returns
ready-made one-line entries (no message text: a briefing names what waits, and `message fetch` shows
it, fenced), or raises a MemeshError for an invalid recipient id.
"""

from __future__ import annotations

from collections.abc import Callable

from core.errors import OperationFailed

# (project, recipient, session) -> lines
DeliverySource = Callable[[str, str, str | None], list[str]]

_sources: list[DeliverySource] = []


def register_delivery_source(source: DeliverySource) -> None:
    if source not in _sources:
        _sources.append(source)


def delivery_lines(*, project: str, recipient: str, session: str | None) -> list[str]:
    if not _sources:
        raise OperationFailed("Messages between agents are not installed here", field="recipient")
    return [line for source in _sources for line in source(project, recipient, session)]
