"""A deterministic layout of the graph page's nodes, computed on the server (no JavaScript
library): pure Python, no Django, O(nodes).

Nodes are grouped by type; the groups sit on a circle, largest first (ties by name), each
group's nodes packed in a sunflower (Vogel) spiral around its centre: node k of a group at
radius SPACING·√k and angle k·golden-angle. The same graph always gives the same picture,
groups do not overlap (a group's circle is sized by its count), and a few thousand nodes take
milliseconds. Positions are in a square viewBox of side `size` (at least MIN_SIZE).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))
SPACING = 9.0  # distance unit between neighbouring nodes of a group
MARGIN = 30.0
# A small graph is drawn at this side at least, so a handful of nodes is not blown up to fill
# the page.
MIN_SIZE = 600.0


@dataclass(frozen=True, slots=True)
class Placed:
    name: str
    type: str
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class GroupLabel:
    type: str
    count: int
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Layout:
    size: float
    nodes: dict[str, Placed]
    groups: list[GroupLabel]


def _group_radius(count: int) -> float:
    return SPACING * math.sqrt(max(count, 1)) + SPACING


def layout(nodes: Sequence[tuple[str, str]]) -> Layout:
    """Positions for `nodes`, (name, type) pairs, in the order given within each group."""
    groups: defaultdict[str, list[str]] = defaultdict(list)
    for name, type_ in nodes:
        groups[type_].append(name)
    order = sorted(groups, key=lambda t: (-len(groups[t]), t))
    radii = [_group_radius(len(groups[t])) for t in order]
    # The ring of group centres: its circumference holds every group's diameter side by side.
    ring = sum(2 * r for r in radii) / (2 * math.pi) if len(order) > 1 else 0.0
    size = max(MIN_SIZE, 2 * (ring + max(radii, default=SPACING) + MARGIN))
    centre = size / 2
    placed: dict[str, Placed] = {}
    labels: list[GroupLabel] = []
    angle = 0.0
    for type_, radius in zip(order, radii, strict=True):
        # Advance by this group's share of the ring (half before its centre, half after).
        half = radius / ring if ring else 0.0
        angle += half
        gx = centre + ring * math.cos(angle)
        gy = centre + ring * math.sin(angle)
        angle += half
        members = groups[type_]
        for k, name in enumerate(members):
            r = SPACING * math.sqrt(k)
            placed[name] = Placed(
                name=name,
                type=type_,
                x=round(gx + r * math.cos(k * GOLDEN_ANGLE), 1),
                y=round(gy + r * math.sin(k * GOLDEN_ANGLE), 1),
            )
        labels.append(
            GroupLabel(type=type_, count=len(members), x=round(gx, 1), y=round(gy - radius, 1))
        )
    return Layout(size=round(size, 1), nodes=placed, groups=labels)
