"""Fitting the graph page's layout to its canvas, and placing the nodes' labels: pure Python,
no Django.

The layout (dashboard/graph_layout.py) places nodes in its own units, as tight as the groups
allow; drawn as they are, a small graph is a cluster of dots in the middle of the canvas.
`fit` scales and translates the nodes' bounding box into a WIDTH × HEIGHT viewBox, leaving a
margin wide enough for a label beside the outermost nodes. The two axes may scale apart, by at
most MAX_STRETCH, so a round layout fills a wide canvas without turning into a line.

`place_labels` gives each node a label (its title shortened with an ellipsis) beside it, in
the first of a few candidate positions whose box meets no label placed before and no dot,
nodes taken by degree (most related first) and then in the order given (the most recently
used first). A label that fits nowhere is tried once more shorter; after that it is left out
and the node keeps its name as a tooltip. A small graph (the demo tour's 16 memories) gets
every label; a dense one loses its least related labels first, only the LABEL_BUDGET most
related nodes are tried at all (none after MAX_MISSES in a row found room), and a canvas
covered in dots (thousands of nodes) may keep none (hovering a dot shows its name). Boxes
are estimated from the character count (no font metrics on the server): CHAR_WIDTH is
generous for system-ui, so a drawn label is narrower than its box. A grid of cells about half
a label wide keeps each test to the boxes near the candidate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import NamedTuple

# The viewBox; the canvas draws it at about its width at 1280 px, so FONT_SIZE is about the
# size on the screen (≥ 11 px down to a 770 px wide canvas).
WIDTH = 900.0
HEIGHT = 640.0
FONT_SIZE = 13.0
CHAR_WIDTH = 0.6 * FONT_SIZE
LABEL_HEIGHT = FONT_SIZE + 3.0
NODE_GAP = 8.0  # between a node's centre and its label's nearest edge
DOT_RADIUS = 6.0  # the largest dot graph_svg.py draws (a node with evidence)
LABEL_CHARS = 22
SHORT_LABEL_CHARS = 12
ELLIPSIS = "…"
MAX_STRETCH = 1.6
# At most this many nodes, the most related first, are tried for a label: the canvas holds
# about 200 labels, so past this many every try fails, and 3,000 failing tries cost a page
# hundreds of milliseconds.
LABEL_BUDGET = 400
# Tries stop after this many nodes in a row found no room: the canvas is full (with thousands
# of nodes, dots cover it before any label is placed).
MAX_MISSES = 60
# The margin: half a label sideways (labels are centred under or over their node), a line of
# text and the gap above and below.
MARGIN_X = CHAR_WIDTH * (LABEL_CHARS + 1) / 2 + 4.0
MARGIN_Y = LABEL_HEIGHT + NODE_GAP + 4.0


class Point(NamedTuple):
    x: float
    y: float


class Label(NamedTuple):
    """A label's text and where it is drawn: (x, y) is the text's anchor point and baseline,
    `anchor` its SVG text-anchor."""

    text: str
    x: float
    y: float
    anchor: str


class Box(NamedTuple):
    left: float
    top: float
    right: float
    bottom: float

    def meets(self, other: Box) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )


def fit(
    points: Mapping[str, tuple[float, float]],
    *,
    width: float = WIDTH,
    height: float = HEIGHT,
    margin_x: float = MARGIN_X,
    margin_y: float = MARGIN_Y,
) -> dict[str, Point]:
    """`points` scaled and translated so their bounding box fills the box inside the margins.

    Each axis scales by the room over the extent; the larger scale is cut to MAX_STRETCH times
    the smaller. An axis with no extent (one node, or a row) is centred.
    """
    if not points:
        return {}
    xs = [p[0] for p in points.values()]
    ys = [p[1] for p in points.values()]
    left, top = min(xs), min(ys)
    extent_x, extent_y = max(xs) - left, max(ys) - top
    room_x, room_y = width - 2 * margin_x, height - 2 * margin_y
    scale_x = room_x / extent_x if extent_x > 0 else None
    scale_y = room_y / extent_y if extent_y > 0 else None
    if scale_x is not None and scale_y is not None:
        scale_x = min(scale_x, scale_y * MAX_STRETCH)
        scale_y = min(scale_y, scale_x * MAX_STRETCH)
    sx = scale_x or 0.0
    sy = scale_y or 0.0
    # Centred on each axis: an axis cut by MAX_STRETCH leaves equal room on both sides.
    offset_x = (width - extent_x * sx) / 2
    offset_y = (height - extent_y * sy) / 2
    return {
        name: Point(round(offset_x + (x - left) * sx, 1), round(offset_y + (y - top) * sy, 1))
        for name, (x, y) in points.items()
    }


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis (at a word's end when
    one ends in the last third)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    # Cut inside a word: back to its start, unless that loses more than a third.
    if text[limit - 1] != " " and space >= limit * 2 // 3:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + ELLIPSIS


# A baseline sits this far above the bottom of its label's box (room for descenders).
DESCENT = LABEL_HEIGHT * 0.25


def label_box(label: Label) -> Box:
    """The room `label` is estimated to take."""
    w = len(label.text) * CHAR_WIDTH
    x = label.x
    left = x - w / 2 if label.anchor == "middle" else x if label.anchor == "start" else x - w
    return Box(left, label.y + DESCENT - LABEL_HEIGHT, left + w, label.y + DESCENT)


def _spots(x: float, y: float) -> tuple[tuple[float, float, str], ...]:
    """Where a label may go, (x, baseline, text-anchor), in the order tried: under, over,
    right, left, then a line further under and over."""
    h = LABEL_HEIGHT
    return (
        (x, y + NODE_GAP + h - DESCENT, "middle"),
        (x, y - NODE_GAP - DESCENT, "middle"),
        (x + NODE_GAP, y + h / 2 - DESCENT, "start"),
        (x - NODE_GAP, y + h / 2 - DESCENT, "end"),
        (x, y + NODE_GAP + 2 * h - DESCENT, "middle"),
        (x, y - NODE_GAP - h - DESCENT, "middle"),
    )


def place_labels(
    nodes: Sequence[tuple[str, str, float, float]],
    degree: Mapping[str, int],
    *,
    width: float = WIDTH,
    height: float = HEIGHT,
) -> dict[str, Label]:
    """Labels for `nodes`, (name, text, x, y) in the viewBox, that meet no other label and stay
    inside it; a node without room for its label is left out of the answer."""
    order = sorted(range(len(nodes)), key=lambda i: -degree.get(nodes[i][0], 0))[:LABEL_BUDGET]
    # Cells as wide as half a label and two lines high: a box lies in about four.
    grid: defaultdict[tuple[int, int], list[Box]] = defaultdict(list)
    cell_w, cell_h = CHAR_WIDTH * LABEL_CHARS / 2, LABEL_HEIGHT * 2

    def cells(box: Box) -> list[tuple[int, int]]:
        return [
            (cx, cy)
            for cx in range(int(box.left // cell_w), int(box.right // cell_w) + 1)
            for cy in range(int(box.top // cell_h), int(box.bottom // cell_h) + 1)
        ]

    def free(box: Box) -> bool:
        left, top, right, bottom = box
        if left < 0 or top < 0 or right > width or bottom > height:
            return False
        for c in cells(box):
            for o in grid.get(c, ()):
                if left < o.right and o.left < right and top < o.bottom and o.top < bottom:
                    return False
        return True

    # The dots are obstacles too: a label over another node's dot hides it.
    for _, _, x, y in nodes:
        dot = Box(x - DOT_RADIUS, y - DOT_RADIUS, x + DOT_RADIUS, y + DOT_RADIUS)
        for c in cells(dot):
            grid[c].append(dot)
    placed: dict[str, Label] = {}
    misses = 0
    for i in order:
        if misses >= MAX_MISSES:
            break
        misses += 1
        name, text, x, y = nodes[i]
        full = shorten(text)
        tries = (full, shorten(text, SHORT_LABEL_CHARS))
        for attempt in dict.fromkeys(tries):  # the shorter one only when it differs
            # Most tries fail on a dense canvas: a Label is made only for the one that fits.
            spot = next((s for s in _spots(x, y) if free(label_box(Label(attempt, *s)))), None)
            if spot is not None:
                lx, base, anchor = spot
                label = placed[name] = Label(attempt, round(lx, 1), round(base, 1), anchor)
                box = label_box(label)
                for c in cells(box):
                    grid[c].append(box)
                misses = 0
                break
    return placed
