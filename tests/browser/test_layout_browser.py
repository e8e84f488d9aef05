"""Issue 16: every catalog figure (and the figures the pages add: prompt types, agreement per
label, confusion, kappa with the expert and alpha, the comparison panel's forest plots and
ranks, and page options) holds at one-column, two-column and the app's widths, on the sample
runs, the real runs kbench loads today, the native-format examples (``tests/data/formats``) and
generated runs with 60 models, biases, studies, configurations or detectors. The geometry is
measured in Chromium (see ``tests/browser/layout``): text outside the figure, overlapping
labels (data labels too), hidden legend entries, look-alike series, markers cut by the plot
area, and figures taller than a page at the paper sizes; a failure names the figure, the size
and the elements."""

from __future__ import annotations

import json
from functools import cache

import pytest

from tests.browser import layout
from tests.browser.conftest import ARTIFACTS
from tests.conftest import in_ci

pytestmark = pytest.mark.browser

SOURCES = {"sample": layout.sample_runs, "real": layout.real_runs,
           "formats": layout.format_example_runs, "generated": layout.generated_runs}


@cache
def _figures(source: str) -> tuple[layout.Figure, ...]:
    return tuple(f for name, run in SOURCES[source]()
                 for f in (*layout.catalog_figures(name, run), *layout.page_figures(name, run)))


@pytest.fixture(scope="module")
def layout_page(browser):
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    page.goto(layout.plotly_js_dir(ARTIFACTS / "layout").as_uri())
    yield page
    page.close()


@pytest.mark.parametrize("size", list(layout.SIZES))
@pytest.mark.parametrize("source", list(SOURCES))
def test_every_catalog_figure_holds(layout_page, source: str, size: str) -> None:
    figures = _figures(source)
    if source in ("real", "formats") and not figures:
        reason = ("no real benchmark output found (set KBENCH_REAL_DATA)" if source == "real"
                  else f"no native-format examples in {layout.FORMATS}")
        if in_ci():
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    assert figures, f"no {source} run yields a figure"
    problems = layout.check_batch(layout_page, list(figures), layout.SIZES[size])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"layout-{source}-{size}.json").write_text(json.dumps(
        {"figures": len(figures), "failed": {k: v for k, v in problems.items() if v}},
        indent=1))
    failures = [f"{label} @ {size} ({layout.SIZES[size]} px): {problem}"
                for label, found in problems.items() for problem in found]
    assert not failures, f"{len(failures)} layout problems:\n" + "\n".join(failures[:60])


def test_the_check_catches_what_it_is_for(layout_page) -> None:
    """A figure built to fail: a title far wider than a one-column figure, tick labels on top
    of each other, and a 40-entry legend that must scroll."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for i in range(40):
        fig.add_trace(go.Scatter(x=[0, 1], y=[i, i], name=f"series {i:02d}",
                                 line=dict(color="#0072B2")))
    fig.update_layout(title="A very long title " * 6, height=300,
                      xaxis=dict(tickvals=[0, 0.01], ticktext=["overlapping", "labels"]))
    (problems,) = layout.check_batch(layout_page, [layout.Figure("bad", fig)], 336,
                                     ).values()
    kinds = {p.split(":")[0] for p in problems}
    assert {"outside", "overlap", "hidden", "colour"} <= kinds, problems
    assert any("tick label 'overlapping' and tick label 'labels'" in p for p in problems)


def test_the_check_catches_tall_figures_cut_markers_and_data_labels(layout_page) -> None:
    """A figure taller than a page at one column, a marker cut by the plot area (a clipped
    trace at the axis' end) and data labels drawn on each other."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1], mode="markers", cliponaxis=True,
                               marker=dict(size=16), name="cut"))
    fig.add_trace(go.Scatter(x=[0.5, 0.502], y=[0.5, 0.5], mode="text",
                             text=["a data label", "another label"], name="labels"))
    fig.update_layout(height=1200, xaxis=dict(range=[0, 1]), yaxis=dict(range=[0, 1]))
    (problems,) = layout.check_batch(layout_page, [layout.Figure("bad", fig)],
                                     layout.SIZES["one-column"]).values()
    kinds = {p.split(":")[0] for p in problems}
    assert {"height", "clipped", "overlap"} <= kinds, problems
    assert any("data label 'a data label' and data label 'another label'" in p
               for p in problems)
    (raw,) = layout.check_batch(layout_page, [layout.Figure("bad", fig)],
                                layout.SIZES["app"]).values()
    assert not any(p.startswith("height") for p in raw)  # the app scrolls: no page limit


def test_the_check_catches_adjacent_ticks_turned_lines_hover_empty_ranges_and_cuts(
        layout_page) -> None:
    """Issue 37 item 9, as the check sees it: the score axis' "1" beside the cost axis' "0"
    (two axes 0.04 of the width apart read "10"), a turned column label in two lines, a
    static figure saying "hover", a score axis from -0.5 whose bars start at 0, and a
    heatmap column label cut where one turned line holds it."""
    import pandas as pd
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from kbench_core.figures.base import heatmap_figure

    def scores(spacing: float) -> go.Figure:
        fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=spacing,
                            column_widths=[0.66, 0.34])
        fig.add_trace(go.Bar(y=["a", "b"], x=[0.4, 0.3], orientation="h"), row=1, col=1)
        fig.add_trace(go.Scatter(y=["a", "b"], x=[2, 8], mode="markers"), row=1, col=2)
        fig.update_xaxes(range=[-0.5, 1.05], row=1, col=1)
        fig.update_xaxes(range=[0, 11], nticks=4, row=1, col=2)
        fig.update_layout(title="Scores; hover names them", height=300, showlegend=False,
                          margin=dict(l=150))
        return fig

    fig = scores(0.04)
    # between touching (overlap) and apart: a few px, read as one number
    near = layout.check_batch(layout_page, [layout.Figure(f"s{k}", scores(k / 100))
                                            for k in range(3, 9)], layout.SIZES["one-column"])
    assert any(p.startswith("adjacent: tick label '1' (x) and tick label '0' (x2)")
               for found in near.values() for p in found), near
    (apart,) = layout.check_batch(layout_page, [layout.Figure("apart", scores(0.2))],
                                  layout.SIZES["one-column"]).values()
    assert not any(p.startswith(("adjacent", "overlap")) for p in apart), apart

    grid = pd.DataFrame([[0.1, 0.2, 0.3]], index=["bias"],
                        columns=["a-model-with-a-long-name", "b-model-with-a-long-name",
                                 "grok-4-1-fast-reasoning"])
    heat = heatmap_figure(grid, title="heat", zmin=0, zmax=1, colorbar_title="v")
    heat.layout.xaxis.ticktext = ["a-model-with-…", "b-model-with-…",
                                  "grok-4-1-fast-<br>reasoning"]
    heat.layout.xaxis.tickangle = 90
    problems = layout.check_batch(layout_page, [layout.Figure("bad", fig),
                                                layout.Figure("heat", heat)],
                                  layout.SIZES["one-column"])
    kinds = {p.split(":")[0] for p in problems["bad"]}
    assert {"hover", "range"} <= kinds, problems["bad"]
    # (as built: at a paper size fit_to_width would recut the labels)
    heat_problems = layout.check_batch(layout_page, [layout.Figure("heat", heat)],
                                       layout.SIZES["app"])["heat"]
    assert {p.split(":")[0] for p in heat_problems} >= {"turned", "cut"}, heat_problems
