"""Issue 25: the bias page's figures are built with few plotly calls (plotly's
``update_layout`` costs 35 ms a call in change dispatch; a layout assigned whole costs 1 ms),
and the faster path draws the same figures.

That the figures are unchanged was checked when the builders were rewritten: ``to_dict()`` of
1675 figures (the bias page's on the sample run and ``big_bias_trials(200_000)``, every
catalog figure of the sample and generated runs, each also through ``fit_to_width`` at four
widths) compared equal, as JSON, to those of the code before. Here: :func:`relayout` leaves
the layout ``update_layout`` leaves, the figures keep their structure, their ``to_dict()`` is
deterministic, and building them calls neither ``update_layout`` nor ``make_subplots``.
"""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import plotly.graph_objects as go
import pytest

from kbench_core import figures, kahne, samples
from kbench_core.figures.base import fit_to_width
from kbench_core.figures.style import relayout

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _json(fig: go.Figure) -> str:
    return json.dumps(fig.to_dict(), sort_keys=True, default=str)


def _start() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a"))
    fig.update_layout(title=dict(text="t", pad=dict(b=3)), meta=dict(a=1, b=2),
                      xaxis=dict(title=dict(text="x"), range=[0, 1]),
                      annotations=[dict(text="one", x=0, y=0)])
    return fig


UPDATES = [
    dict(title=dict(pad=dict(l=10))),  # nested settings merge
    dict(meta=dict(c=3)),  # data: replaced whole
    dict(xaxis=dict(title=dict(text=None))),  # emptied: plotly keeps "title": {}
    dict(xaxis=dict(title=None, range=[2, 3])),
    dict(xaxis2=dict(domain=[0.5, 1], anchor="y2"), height=300),  # a new subplot axis
    dict(legend_title_text="Model"),  # magic underscores: update_layout's own path
    dict(annotations=[dict(text="two")]),  # merged into the existing one, elementwise
    dict(template="kbench", title="plain"),
]


@pytest.mark.parametrize("update", UPDATES, ids=[str(u)[:40] for u in UPDATES])
def test_relayout_leaves_what_update_layout_leaves(update) -> None:
    expected = _start()
    expected.update_layout(update)
    got = _start()
    relayout(got, update)
    assert _json(got) == _json(expected)
    # the figure stays usable: a later plotly update of the same key still merges
    expected.update_layout(xaxis=dict(showgrid=False))
    got.update_layout(xaxis=dict(showgrid=False))
    assert _json(got) == _json(expected)


@cache
def _selection(source: str):
    trials = (samples.bias_trials() if source == "sample"
              else samples.big_bias_trials(200_000))
    return trials, sorted(map(str, trials["model"].unique())), sorted(
        map(str, trials["bias"].unique()))


def _bias_figures(source: str) -> dict[str, go.Figure]:
    trials, models, biases = _selection(source)
    bias = biases[0]
    curve = kahne.bms(trials[trials["bias"] == bias], cap=1.0)
    return {
        "curves": figures.bms_curves(curve, title=f"{bias}: bias by trigger intensity"),
        "curves_mean": figures.bms_curves(curve, y="mean"),
        "curves_three": figures.bms_curves(curve[curve["model"].isin(models[:3])]),
        "domains": figures.bci_heatmap(kahne.domain_means(trials[trials["model"] == models[0]])),
        "has": figures.has_chart(kahne.has(trials, threshold=0.1, relative=False)),
        "cas": figures.cas_bars(kahne.cas(trials)),
        "fingerprint": figures.fingerprint_heatmap(kahne.fingerprint(trials).biases),
    }


@pytest.mark.parametrize("source", ["sample", "big"])
def test_bias_figures_keep_their_structure(source: str) -> None:
    models = _selection(source)[1]
    built = _bias_figures(source)
    again = _bias_figures(source)
    for name, fig in built.items():
        assert _json(fig) == _json(again[name]), name  # deterministic
        assert fig.layout.template.layout.font.size == 13, name  # the kbench template
        assert fig.layout.meta["kbench_title"], name
    n = len(models)
    curves = built["curves"]
    if n > figures.bias.MAX_OVERLAID:  # small multiples: each panel its model and the field
        assert len(curves.data) == n * n
        assert curves.layout[f"xaxis{n}"].anchor == f"y{n}"
        assert [a.text for a in curves.layout.annotations] == models
        assert curves.layout.meta["kbench_panels"]["n"] == n
        # only the bottom row names the x axis; only the first column the y axis
        assert curves.layout.xaxis.title.text is None
        assert curves.layout[f"xaxis{n}"].title.text == "Trigger intensity"
        assert curves.layout.yaxis.title.text == "Magnitude"
        assert curves.layout.yaxis2.title.text is None
        # every axis pair is laid out side by side in its own domain
        domains = [tuple(curves.layout[f"xaxis{k if k > 1 else ''}"].domain)
                   for k in range(1, n + 1)]
        assert len(set(domains)) == min(n, figures.bias.PANEL_COLUMNS)
    else:
        assert {t.name for t in curves.data} == set(models)
    assert len(built["curves_three"].data) == 3
    has = built["has"]
    assert has.data[0].name == "y = x (human-like)"
    for trace in has.data[1:]:  # each series' hover rows are its own dots
        if trace.name in models:
            assert set(np.asarray(trace.customdata)[:, 0]) == {trace.name}
        assert len(trace.customdata) == len(trace.x)
    domains = built["domains"]
    assert list(domains.layout.yaxis.tickvals) == list(domains.data[0].y)
    assert domains.layout.meta["kbench_ticks"]["yaxis"]["cells"] == len(domains.data[0].x)
    fingerprint = built["fingerprint"]
    assert fingerprint.data[0].type == "heatmap"
    assert set(fingerprint.layout.meta["kbench_ticks"]) == {"xaxis", "yaxis"}
    for width in (300, 700):  # an export width re-lays them out, deterministically
        for name, fig in built.items():
            assert _json(fit_to_width(fig, width)) == _json(fit_to_width(again[name], width))


def test_bias_figures_avoid_plotly_update_calls(monkeypatch) -> None:
    """Fails on the code before: apply_layout, set_panels and category_ticks called
    ``update_layout`` (and the curves ``make_subplots``) several times a figure."""
    import plotly.subplots

    calls = {"update_layout": 0, "make_subplots": 0}
    update_layout = go.Figure.update_layout
    make_subplots = plotly.subplots.make_subplots

    def counted_update(self, *args, **kwargs):
        calls["update_layout"] += 1
        return update_layout(self, *args, **kwargs)

    def counted_subplots(*args, **kwargs):
        calls["make_subplots"] += 1
        return make_subplots(*args, **kwargs)

    monkeypatch.setattr(go.Figure, "update_layout", counted_update)
    monkeypatch.setattr(plotly.subplots, "make_subplots", counted_subplots)
    _bias_figures("big")
    assert calls == {"update_layout": 0, "make_subplots": 0}


def test_big_run_draws_the_fingerprint_heatmap_only_when_opened(monkeypatch) -> None:
    """On a big run the closed "Fingerprint as a heatmap" expander builds no figure (a model
    or cap change on 1M rows no longer pays for it); a small run draws it as before."""
    from streamlit.testing.v1 import AppTest

    from kbench_app import kit, state
    from tests.conftest import ROOT

    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert "bias_fingerprint_chart" in {c.key for c in at.get("plotly_chart")}
    monkeypatch.setattr(kit, "BIG_RUN_ROWS", 10)  # the sample run counts as big
    at.run()
    assert not at.exception
    drawn = {c.key for c in at.get("plotly_chart")}
    assert "bias_fingerprint_chart" not in drawn and "bias_curves_chart" in drawn
    assert [e.label for e in at.expander if "Fingerprint as a heatmap" in e.label]
