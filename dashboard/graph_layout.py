"""A deterministic layout of the graph page's nodes, computed on the server (no JavaScript
library): pure Python, no Django, O(nodes).

Nodes are grouped by type; the groups sit on a ring, largest first (ties by name), each
group's nodes packed in a sunflower (Vogel) spiral around its centre: node k of a group at
radius SPACING·√k and angle k·golden-angle, so a group of n fills a circle of radius about
SPACING·√n. The same graph always gives the same picture,
groups do not overlap (a group's circle is sized by its count), and a few thousand nodes take
milliseconds. Positions are in a square viewBox of side `size` (at least MIN_SIZE).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))
SPACING = 9.0  # distance unit between neighbouring nodes of a group
MARGIN = 30.0
# A small graph is drawn at this side at least, so a handful of nodes is not blown up to fill
# the page.
MIN_SIZE = 600.0
RING_GROWTH = 1.1


class Placed(NamedTuple):
    """A tuple: a layout makes one per node, and a frozen dataclass costs several times more
    to build."""

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


def _centres(radii: list[float]) -> tuple[float, list[tuple[float, float]]]:
    """The ring's radius and each group's centre on it (relative to the ring's centre).

    Each group takes a share of the full turn in proportion to its radius, its centre in the
    middle of its share; the ring starts where the groups' diameters fill its circumference
    and grows by RING_GROWTH until every two circles keep apart (the angles stay fixed, so
    every distance grows with the ring and the loop ends).
    """
    if len(radii) < 2:
        return 0.0, [(0.0, 0.0)] * len(radii)
    total = sum(radii)
    angles, turned = [], 0.0
    for r in radii:
        share = 2 * math.pi * r / total
        angles.append(turned + share / 2)
        turned += share
    ring = 2 * total / (2 * math.pi)
    while True:
        centres = [(ring * math.cos(a), ring * math.sin(a)) for a in angles]
        if all(
            math.dist(centres[i], centres[j]) >= radii[i] + radii[j]
            for i in range(len(radii))
            for j in range(i + 1, len(radii))
        ):
            return ring, centres
        ring *= RING_GROWTH


def layout(nodes: Sequence[tuple[str, str]]) -> Layout:
    """Positions for `nodes`, (name, type) pairs, in the order given within each group."""
    groups: defaultdict[str, list[str]] = defaultdict(list)
    for name, type_ in nodes:
        groups[type_].append(name)
    order = sorted(groups, key=lambda t: (-len(groups[t]), t))
    radii = [_group_radius(len(groups[t])) for t in order]
    ring, centres = _centres(radii)
    size = max(MIN_SIZE, 2 * (ring + max(radii, default=SPACING) + MARGIN))
    centre = size / 2
    placed: dict[str, Placed] = {}
    labels: list[GroupLabel] = []
    for type_, radius, (cx, cy) in zip(order, radii, centres, strict=True):
        gx, gy = centre + cx, centre + cy
        members = groups[type_]
        for k, name in enumerate(members):
            r, angle = SPACING * math.sqrt(k), k * GOLDEN_ANGLE
            placed[name] = Placed(
                name, type_, round(gx + r * math.cos(angle), 1), round(gy + r * math.sin(angle), 1)
            )
        labels.append(
            GroupLabel(type=type_, count=len(members), x=round(gx, 1), y=round(gy - radius, 1))
        )
    return Layout(size=round(size, 1), nodes=placed, groups=labels)
