"""The graph page's fitting and labels (dashboard/graph_fit.py): pure geometry, no Django."""

from __future__ import annotations

from collections import Counter

from dashboard.graph_fit import (
    ELLIPSIS,
    HEIGHT,
    LABEL_CHARS,
    MARGIN_X,
    MARGIN_Y,
    MAX_STRETCH,
    WIDTH,
    fit,
    label_box,
    place_labels,
    shorten,
)
from dashboard.graph_layout import layout
from dream.demo_tour import TOUR


def tour_drawing() -> tuple[list[tuple[str, str, float, float]], Counter[str]]:
    """The demo tour as the graph page draws it: newest first, laid out, fitted."""
    entries = list(reversed(TOUR))
    placed = layout([(e.name, e.type) for e in entries])
    at = fit({name: (p.x, p.y) for name, p in placed.nodes.items()})
    degree: Counter[str] = Counter()
    for e in entries:
        for _, target in e.relations:
            degree[e.name] += 1
            degree[target] += 1
    return [(e.name, e.title, *at[e.name]) for e in entries], degree


def span(points: list[tuple[float, float]]) -> tuple[float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return max(xs) - min(xs), max(ys) - min(ys)


def test_the_demo_tour_is_fitted_to_fill_the_canvas_inside_the_margins() -> None:
    nodes, _ = tour_drawing()
    points = [(x, y) for _, _, x, y in nodes]
    wide, high = span(points)
    assert round(high, 1) == HEIGHT - 2 * MARGIN_Y
    assert wide >= 0.7 * (WIDTH - 2 * MARGIN_X)
    assert all(MARGIN_X - 0.1 <= x <= WIDTH - MARGIN_X + 0.1 for x, _ in points)


def test_a_tight_cluster_is_scaled_up_and_a_flat_one_is_stretched_at_most_so_far() -> None:
    cluster = {f"n{i}": (100 + i % 4, 200 + i // 4) for i in range(16)}
    wide, high = span(list(fit(cluster).values()))
    assert (round(wide, 1), round(high, 1)) == (WIDTH - 2 * MARGIN_X, HEIGHT - 2 * MARGIN_Y)
    flat = {"a": (0.0, 0.0), "b": (100.0, 10.0)}
    wide, high = span(list(fit(flat).values()))
    assert round(wide, 1) == WIDTH - 2 * MARGIN_X
    assert round(high / 10, 3) <= round(MAX_STRETCH * wide / 100, 3)


def test_a_single_node_is_drawn_in_the_middle() -> None:
    assert fit({"only": (3.0, 4.0)}) == {"only": (WIDTH / 2, HEIGHT / 2)}
    assert fit({}) == {}


def test_every_node_of_the_demo_tour_gets_a_label_and_no_two_labels_meet() -> None:
    nodes, degree = tour_drawing()
    labels = place_labels(nodes, degree)
    assert set(labels) == {name for name, *_ in nodes}
    boxes = [label_box(label) for label in labels.values()]
    for i, a in enumerate(boxes):
        assert a.left >= 0 and a.right <= WIDTH and a.top >= 0 and a.bottom <= HEIGHT
        for b in boxes[i + 1 :]:
            assert not a.meets(b), (a, b)
    assert all(label.text for label in labels.values())


def test_a_dense_graph_keeps_the_labels_of_its_most_related_nodes_and_no_two_meet() -> None:
    graph = [(f"n{i}", "commit" if i % 3 else "decision") for i in range(3000)]
    placed = layout(graph)
    at = fit({name: (p.x, p.y) for name, p in placed.nodes.items()})
    hub = "n2999"  # the last in the page's order, but the most related
    degree = Counter({hub: 50})
    nodes = [(name, f"memory number {name}", *at[name]) for name, _ in graph]
    labels = place_labels(nodes, degree)
    assert hub in labels
    assert 0 < len(labels) < len(nodes)
    boxes = [label_box(label) for label in labels.values()]
    # Labels near each other are the ones that could meet: compare each with the next ones in
    # reading order.
    boxes.sort(key=lambda b: (b.top, b.left))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 : i + 200]:
            assert not a.meets(b), (a, b)


def test_a_long_title_is_cut_at_a_word_with_an_ellipsis_and_a_short_one_kept() -> None:
    long = shorten("Orders, customers and invoices live in PostgreSQL")
    assert long.endswith(ELLIPSIS) and len(long) <= LABEL_CHARS
    assert long == "Orders, customers and" + ELLIPSIS
    assert shorten("API   conventions\n") == "API conventions"
