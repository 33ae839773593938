"""The graph page's node and edge markup, written here rather than by the template: a few
thousand nodes through the template engine's loop and `{% url %}` cost most of the page's
time; one escaped f-string per node costs microseconds. Every value is escaped."""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape
from typing import NamedTuple
from urllib.parse import quote

from django.utils.safestring import SafeString, mark_safe


class SvgNode(NamedTuple):
    """A tuple: a page makes 3,000 of them, and a frozen dataclass costs several times more
    to build."""

    name: str
    label: str
    type: str
    x: float
    y: float
    colour: str
    evidence: int
    archived: bool
    # The drawn label: text, x, y (its baseline) and text-anchor; None when there was no room
    # (dashboard/graph_fit.py), and the full label stays the node's tooltip either way.
    caption: tuple[str, float, float, str] | None


# What quote(safe="") leaves as it is: a name of only these needs no quoting.
_URL_SAFE = re.compile(r"[A-Za-z0-9_.~-]*")
_CLASSES = {
    (False, False): "",
    (True, False): ' class="archived"',
    (False, True): ' class="has-evidence"',
    (True, True): ' class="archived has-evidence"',
}


def nodes_markup(nodes: Iterable[SvgNode], *, page_prefix: str, panel_url: str) -> SafeString:
    """One `<a>` per node: its memory's page as the link, the side panel as htmx's target, a
    `<title>` tooltip and the label beside the dot. Written for 3,000 nodes in a few
    milliseconds: a quoted name is used for both links, constant parts are escaped once."""
    parts = []
    # quote(safe="") leaves only letters, digits, `_.-~` and `%`: nothing HTML escapes, so
    # the escaped prefixes take it as it is.
    page_at, panel_at = escape(page_prefix), escape(f"{panel_url}?name=")
    fills: dict[str, str] = {}
    for n in nodes:
        name, x, y, evidence = n.name, n.x, n.y, n.evidence
        quoted = name if _URL_SAFE.fullmatch(name) else quote(name, safe="")
        fill = fills.get(n.colour)
        if fill is None:
            fill = fills[n.colour] = escape(n.colour)
        if evidence:
            label = escape(f"{n.label} ({n.type}, {evidence} evidence)")
            end = f'/><text x="{x}" y="{y}" dy="-9" class="badge">{evidence}</text>'
        else:
            label = escape(f"{n.label} ({n.type})")
            end = "/>"
        if n.caption is not None:
            text, tx, ty, anchor = n.caption
            # The link's name is its aria-label; the label repeats part of it.
            end += (
                f'<text x="{tx}" y="{ty}" text-anchor="{anchor}" class="label" '
                f'aria-hidden="true">{escape(text)}</text>'
            )
        parts.append(
            f'<a href="{page_at}{quoted}" hx-get="{panel_at}{quoted}" hx-target="#node-panel" '
            f'aria-label="{label}"><title>{label}</title><circle cx="{x}" cy="{y}" '
            f'r="{6 if evidence else 4}" fill="{fill}"{_CLASSES[n.archived, bool(evidence)]}'
            f"{end}</a>"
        )
    return mark_safe("".join(parts))  # every value above is escaped


def edges_markup(edges: Iterable[tuple[float, float, float, float]]) -> SafeString:
    return mark_safe(  # numbers only
        "".join(f'<line x1="{a}" y1="{b}" x2="{c}" y2="{d}"/>' for a, b, c, d in edges)
    )
