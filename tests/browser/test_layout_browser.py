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
