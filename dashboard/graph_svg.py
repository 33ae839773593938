"""The graph page's node and edge markup, written here rather than by the template: a few
thousand nodes through the template engine's loop and `{% url %}` cost most of the page's
time; one escaped f-string per node costs microseconds. Every value is escaped."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from django.utils.safestring import SafeString, mark_safe


@dataclass(frozen=True, slots=True)
class SvgNode:
    name: str
    label: str
    type: str
    x: float
    y: float
    colour: str
    evidence: int
    archived: bool


def nodes_markup(nodes: Iterable[SvgNode], *, page_prefix: str, panel_url: str) -> SafeString:
    """One `<a>` per node: its memory's page as the link, the side panel as htmx's target."""
    parts = []
    # quote(safe="") leaves only letters, digits, `_.-~` and `%`: nothing HTML escapes, so
    # the escaped prefixes take it as it is.
    page_at, panel_at = escape(page_prefix), escape(f"{panel_url}?name=")
    for n in nodes:
        quoted = quote(n.name, safe="")
        href, panel = page_at + quoted, panel_at + quoted
        label = escape(f"{n.label} ({n.type}{f', {n.evidence} evidence' if n.evidence else ''})")
        classes = " ".join(
            c for c in ("archived" if n.archived else "", "has-evidence" if n.evidence else "") if c
        )
        class_attr = f' class="{classes}"' if classes else ""
        radius = 6 if n.evidence else 4
        badge = (
            f'<text x="{n.x}" y="{n.y}" dy="-8" class="badge">{n.evidence}</text>'
            if n.evidence
            else ""
        )
        parts.append(
            f'<a href="{href}" hx-get="{panel}" hx-target="#node-panel" aria-label="{label}">'
            f'<circle cx="{n.x}" cy="{n.y}" r="{radius}" fill="{escape(n.colour)}"'
            f"{class_attr}/>{badge}</a>"
        )
    return mark_safe("".join(parts))  # every value above is escaped


def edges_markup(edges: Iterable[tuple[float, float, float, float]]) -> SafeString:
    return mark_safe(  # numbers only
        "".join(f'<line x1="{a}" y1="{b}" x2="{c}" y2="{d}"/>' for a, b, c, d in edges)
    )
