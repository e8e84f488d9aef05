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
from tests.conftest import count_calls

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


# ------------------------------------------------------------------ the vulnerability page's
# Issue 25 on the vulnerability page: the reliability diagram, the SUI, lucky-guess and
# prompt-type charts are built from plain dicts handed to plotly once. ``to_dict()`` of 2574
# figures (the sample judged run, ``big_judged_samples(60_000)``, the multi-judge records and
# the judge-output tree of docs/formats.md; 1, 3, 10 and 15 models; bins 10 and 15, uniform
# and quantile; partial credit 1 and 0.5; split by prompt type; the judged catalog and page
# figures; each also through ``fit_to_width`` at 300 and 700 px) compared equal, as JSON, to
# those of the code before.


@cache
def _judged(models: int):
    from kbench_core import vuln

    frame = samples.big_judged_samples(60_000)
    frame = frame[frame["judge"] == frame["judge"].iloc[0]]
    if models > 3:  # more detectors: each split into parts (the same answers, renamed)
        parts = -(-models // 3)
        frame = frame.assign(model=frame["model"].astype(str) + "-part"
                             + (frame.index % parts).astype(str))
        keep = sorted(map(str, frame["model"].unique()))[:models]
        frame = frame[frame["model"].astype(str).isin(keep)]
    names = sorted(map(str, frame["model"].unique()))
    return (names, vuln.tiers(frame), vuln.tiers(frame, by=("model", "prompt_type")),
            vuln.reliability(frame, n_bins=15, binning="quantile"))


def _vuln_figures(models: int) -> dict[str, go.Figure]:
    from kbench_app import vuln as page
    from kbench_core.figures import vuln as vuln_figures

    names, tiers, by_prompt, reliability = _judged(models)
    colors = figures.base.model_colors(names)
    return {
        "reliability": vuln_figures.reliability_diagram(reliability, colors=colors,
                                                        binning="quantile"),
        "sui": page.sui_figure(tiers, weights=()),
        "lucky": vuln_figures.lucky_guess_chart(tiers, colors=colors),
        "prompt": vuln_figures.prompt_type_chart(by_prompt, metric="tdr", colors=colors),
    }


@pytest.mark.parametrize("models", [3, 10, 15])
def test_vuln_figures_keep_their_structure(models: int) -> None:
    from kbench_core.figures import vuln as vuln_figures

    names = _judged(models)[0]
    built, again = _vuln_figures(models), _vuln_figures(models)
    n = len(names)
    assert n == models
    for name, fig in built.items():
        assert _json(fig) == _json(again[name]), name  # deterministic
        assert fig.layout.template.layout.font.size == 13, name  # the kbench template
        assert fig.layout.meta["kbench_title"], name
        # a legend under every chart but the heatmap (a prompt chart of many models)
        assert fig.layout.meta.get("kbench_legend_rows", 0) >= 1 or (name == "prompt" and n > 12)
    reliability = built["reliability"]
    assert reliability.layout.meta["kbench_title"] == (
        "Reliability: accuracy against stated confidence (equal-mass bins)")
    if n <= vuln_figures.MAX_OVERLAID:  # curves overlaid over the confidence histogram
        assert len(reliability.data) == 1 + 4 * n
        assert [t.xaxis for t in reliability.data] == ["x"] + ["x", "x", "x", "x2"] * n
        assert [t.type for t in reliability.data[1:5]] == ["scatter"] * 3 + ["bar"]
        layout = reliability.layout
        assert (layout.xaxis.anchor, layout.yaxis.anchor) == ("y", "x")
        assert (layout.xaxis2.anchor, layout.yaxis2.anchor) == ("y2", "x2")
        assert layout.xaxis.matches == "x2" and layout.xaxis.showticklabels is False
        assert layout.yaxis.domain[0] > layout.yaxis2.domain[1]  # the histogram beneath
        assert layout.xaxis2.title.text == "Stated confidence"
        assert layout.yaxis.title.text == "Accuracy (95% CI)"
        assert layout.yaxis2.tickformat == ".0%"
    else:  # one panel each: bars, diagonal, curve
        assert len(reliability.data) == 3 * n
        assert reliability.layout[f"xaxis{n}"].anchor == f"y{n}"
        assert reliability.layout[f"yaxis{n}"].anchor == f"x{n}"
        assert reliability.data[-1].xaxis == f"x{n}"
        assert reliability.layout.meta["kbench_panels"]["n"] == n
        assert len([a for a in reliability.layout.annotations
                    if (a.name or "").startswith("panel-")]) == n
    sui = built["sui"]
    components = [t for t in sui.data if t.type == "bar"]
    assert len(sui.data) == len(components) + 2 and 1 <= len(components) <= 5
    assert list(sui.layout.yaxis.tickvals) == list(sui.data[0].y)
    assert sui.layout.barmode == "stack"
    lucky = built["lucky"]
    if n <= vuln_figures.MAX_LABELLED:
        assert len(lucky.data) == 2 + n
        assert [t.name for t in lucky.data[:2]] == ["accuracy above TDR (lucky guessing)",
                                                   "accuracy = TDR"]
        assert lucky.layout.xaxis.title.text == "Target detection rate (95% CI)"
    else:  # the dumbbell: a line per model and the two rates
        assert [t.name for t in lucky.data] == [None, "target detection rate", "accuracy"]
        assert len(lucky.data[1].y) == n
    prompt = built["prompt"]
    if n <= vuln_figures.MAX_LABELLED:
        assert len(prompt.data) == n and {t.type for t in prompt.data} == {"bar"}
        assert prompt.layout.xaxis.categoryarray == tuple(
            str(p) for p in _judged(models)[2]["prompt_type"].astype(str).unique())
    else:
        assert prompt.data[0].type == "heatmap"
    for width in (300, 700):
        for name, fig in built.items():
            assert _json(fit_to_width(fig, width)) == _json(fit_to_width(again[name], width))


@pytest.mark.parametrize("models", [3, 10, 15])
def test_vuln_figures_avoid_plotly_update_calls(monkeypatch, models: int) -> None:
    """Fails on the code before: the charts were built with one ``add_trace`` per series, the
    reliability diagram through ``make_subplots`` and ``update_xaxes``/``update_yaxes``."""
    import plotly.subplots

    _judged(models)  # the tables first: only the figures are counted
    names = ("update_layout", "add_trace", "add_traces", "update_xaxes", "update_yaxes")
    calls = dict.fromkeys((*names, "make_subplots"), 0)

    def counted(name, original):
        def call(*args, **kwargs):
            calls[name] += 1
            return original(*args, **kwargs)
        return call

    for name in names:
        monkeypatch.setattr(go.Figure, name, counted(name, getattr(go.Figure, name)))
    monkeypatch.setattr(plotly.subplots, "make_subplots",
                        counted("make_subplots", plotly.subplots.make_subplots))
    _vuln_figures(models)
    assert calls == dict.fromkeys(calls, 0)


def test_relayout_replaces_what_it_is_told_to() -> None:
    """``replace=``: a property set whole, as set_panels sets its annotations (update_layout
    would merge a list into the figure's elementwise). Fails on the code before: relayout took
    ``replace`` for a layout property."""
    update = dict(title=dict(pad=dict(l=10)), meta=dict(c=3))
    annotations = [dict(text="two", x=1, y=1, name="panel-1")]
    expected = _start()
    expected.update_layout(update, annotations=None)
    expected.layout.annotations = annotations
    got = _start()
    relayout(got, update, replace=dict(annotations=annotations))
    assert _json(got) == _json(expected)
    assert [a.text for a in got.layout.annotations] == ["two"]
    # through update_layout (a magic-underscore path) the same
    fallback = _start()
    relayout(fallback, dict(update, legend_title_text="M"), replace=dict(annotations=annotations))
    expected.update_layout(legend_title_text="M")
    assert _json(fallback) == _json(expected)


def test_set_panels_keeps_other_annotations_and_replaces_its_titles() -> None:
    fig = _start()  # one annotation of its own ("one")
    figures.base.set_panels(fig, 3, 2, panel_height=100, header=60, titles=["a", "b", "c"])
    figures.base.set_panels(fig, 2, 2, panel_height=100, header=60, titles=["d", "e"])
    assert [a.text for a in fig.layout.annotations] == ["one", "d", "e"]
    assert fig.layout.height == 160 and fig.layout.meta["kbench_panels"]["n"] == 2


def test_panel_curves_has_and_cas_charts_are_validated_once(monkeypatch) -> None:
    """The small-multiple curves, the HAS chart and the calibration bars gather their layout
    as plain dicts (apply_layout, set_panels, with_legend_below, category_ticks merged) and
    hand it to plotly once with the traces. Fails on the code before: the curves assigned
    their layout three times, the HAS and calibration charts twice."""
    from kbench_core.figures import style

    trials, models, biases = _selection("big")
    curve = kahne.bms(trials[trials["bias"] == biases[0]], cap=1.0)
    alignment = kahne.has(trials, threshold=0.1, relative=False)
    assert len(models) > figures.bias.MAX_OVERLAID  # the panels, and a legend by model
    calls: dict[str, int] = {}
    count_calls(monkeypatch, style, "assign_layout", calls)
    for y in ("magnitude", "mean"):
        figures.bms_curves(curve, y=y)
    figures.has_chart(alignment)
    figures.cas_bars(kahne.cas(trials))
    assert calls == {"assign_layout": 0}


def test_widget_changes_recompute_only_what_depends_on_them(monkeypatch) -> None:
    """The bias page's cache keys: another set of models never redraws one model's domain
    heatmap; another set of biases never redraws the intensity curves of the bias shown; the
    cap never redraws the mean-score curves (they are not capped) nor rewrites the model
    rate's interval text. Fails on the code before: both figures were keyed on every chosen
    model and bias, the curves on the cap."""
    from streamlit.testing.v1 import AppTest

    from kbench_app import cache, state
    from tests.conftest import ROOT

    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    cache.clear()
    computed: list[str] = []
    cached = cache.cached

    def recorded(fn, *data, **kwargs):
        def call(*a, **k):
            computed.append(fn.__qualname__)
            return fn(*a, **k)

        call.__module__, call.__qualname__ = fn.__module__, fn.__qualname__
        return cached(call, *data, **kwargs)

    monkeypatch.setattr(cache, "cached", recorded)
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=60)
    at.run()
    assert not at.exception

    def change(kind: str, key: str, value) -> list[str]:
        computed.clear()
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception
        return list(computed)

    assert at.radio(key="bias_heat_rows").value == "bias"  # one model's biases
    models = list(at.multiselect(key="bias_models").value)
    shown_model = at.selectbox(key="bias_heat_model").value
    fewer = [*[m for m in models if m != shown_model][:-1], shown_model]
    done = change("multiselect", "bias_models", fewer)
    assert "fingerprint" in done and "curve_figure" in done  # they depend on the models
    assert "domain_figure" not in done
    assert "with_threshold" not in done  # the default threshold: the fingerprint as computed
    assert done.count("prepare") == 1  # HAS and CAS from the same integer codes
    curve_bias = at.selectbox(key="bias_curve_bias").value
    biases = list(at.multiselect(key="bias_biases").value)
    done = change("multiselect", "bias_biases",
                  [*[b for b in biases if b != curve_bias][1:], curve_bias])
    assert "fingerprint" in done and "domain_figure" in done
    assert "curve_figure" not in done
    change("radio", "bias_curve_y", "mean")
    done = change("toggle", "bias_cap", False)
    assert "fingerprint" in done and "curve_figure" not in done
    # the model rate's interval text is the selection's: the cap redraws the table only
    assert "fingerprint_view" in done and "rate_interval_text" not in done
    change("radio", "bias_curve_y", "magnitude")
    assert "curve_figure" in computed  # the magnitudes are capped
