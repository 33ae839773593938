"""The dashboard's server-side drawing (dashboard/graph_layout.py, dashboard/charts.py): pure
geometry, no Django."""

from __future__ import annotations

import math

from dashboard.charts import HEIGHT, PAD, WIDTH, line_chart, percent_width
from dashboard.graph_layout import MIN_SIZE, layout


def nodes(counts: dict[str, int]) -> list[tuple[str, str]]:
    return [(f"{t}-{i}", t) for t, n in counts.items() for i in range(n)]


def test_the_layout_is_the_same_for_the_same_graph() -> None:
    graph = nodes({"note": 40, "decision": 7, "commit": 120})
    assert layout(graph) == layout(graph)


def test_every_node_lies_inside_the_drawing_and_groups_do_not_overlap() -> None:
    placed = layout(nodes({"note": 300, "decision": 50, "commit": 2000, "plan": 3}))
    assert len(placed.nodes) == 2353
    for p in placed.nodes.values():
        assert 0 <= p.x <= placed.size and 0 <= p.y <= placed.size
    # Nodes of different groups keep apart: no two closer than the spiral's own spacing.
    by_group: dict[str, list[tuple[float, float]]] = {}
    for p in placed.nodes.values():
        by_group.setdefault(p.type, []).append((p.x, p.y))
    groups = list(by_group)
    for i, a in enumerate(groups):
        for b in groups[i + 1 :]:
            nearest = min(math.dist(p, q) for p in by_group[a] for q in by_group[b][:200])
            assert nearest > 5, (a, b)


def test_groups_are_labelled_largest_first_with_their_counts() -> None:
    placed = layout(nodes({"note": 2, "commit": 9, "decision": 2}))
    assert [(g.type, g.count) for g in placed.groups] == [
        ("commit", 9), ("decision", 2), ("note", 2),
    ]  # fmt: skip


def test_a_small_graph_is_drawn_at_the_minimum_size_and_an_empty_one_too() -> None:
    assert layout(nodes({"note": 1})).size == MIN_SIZE
    assert layout([]).size == MIN_SIZE and layout([]).nodes == {}


def test_the_line_chart_maps_zero_to_the_baseline_and_the_peak_to_the_top() -> None:
    chart = line_chart(["d1", "d2", "d3"], {"created": [0, 4, 2]})
    points = [tuple(map(float, p.split(","))) for p in chart.series[0].points.split()]
    assert points[0] == (PAD, HEIGHT - PAD)
    assert points[1] == ((WIDTH) / 2, PAD)
    assert points[2][0] == WIDTH - PAD
    assert (chart.peak, chart.series[0].total) == (4, 6)


def test_an_all_zero_series_lies_on_the_baseline() -> None:
    chart = line_chart(["d1", "d2"], {"reused": [0, 0]})
    assert {float(p.split(",")[1]) for p in chart.series[0].points.split()} == {HEIGHT - PAD}


def test_bar_widths_are_percentages_capped_at_100() -> None:
    assert (percent_width(1, 4), percent_width(5, 4), percent_width(3, 0)) == (25, 100, 0)


def test_a_huge_group_among_many_small_ones_is_laid_out_apart() -> None:
    # One type dominating and a long tail of small ones: every group still keeps its place.
    placed = layout(nodes({"commit": 2000, **{f"type-{k}": 5 for k in range(60)}}))
    assert len(placed.groups) == 61
    centres = {g.type: (g.x, g.y) for g in placed.groups}
    assert len(set(centres.values())) == 61


def test_node_markup_escapes_names_and_labels() -> None:
    from dashboard.graph_svg import SvgNode, nodes_markup

    node = SvgNode(name='a"<b>&c', label="<script>", type="note", x=1.0, y=2.0,
                   colour="#000", evidence=2, archived=True,
                   caption=("<i>", 1.0, 20.0, "middle"))  # fmt: skip
    markup = nodes_markup([node], page_prefix="/m/", panel_url="/node")
    assert "<script>" not in markup and 'a"<b>' not in markup and "<i>" not in markup
    assert 'text-anchor="middle" class="label" aria-hidden="true">&lt;i&gt;</text>' in markup
    assert 'href="/m/a%22%3Cb%3E%26c"' in markup
    assert "&lt;script&gt; (note, 2 evidence)" in markup
    assert 'class="archived has-evidence"' in markup and 'class="badge">2</text>' in markup
