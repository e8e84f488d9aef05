"""Tests of kbench_core.figures: each figure carries the numbers of the table it draws."""

from __future__ import annotations

import pytest

from kbench_core import figures, kahne, samples

TRIALS = samples.bias_trials()


def test_bms_curves_plot_the_magnitudes_per_model() -> None:
    table = kahne.bms(TRIALS[TRIALS["bias"] == "anchoring_effect"])
    fig = figures.bms_curves(table)
    lines = {t.name: list(t.y) for t in fig.data if t.mode == "lines+markers"}
    # alpha: min(2*0.8, 1), 0.8, 0.67*0.8, 0.5*0.8
    assert lines["synthetic-alpha"] == pytest.approx([1.0, 0.8, 0.536, 0.4])
    assert lines["synthetic-gamma"] == pytest.approx([0, 0, 0, 0])
    assert list(fig.layout.xaxis.categoryarray) == ["weak", "moderate", "strong",
                                                    "adversarial"]
    mean_fig = figures.bms_curves(table, y="mean")
    bands = [t for t in mean_fig.data if t.fill == "toself"]
    assert len(bands) == 3  # one interval band per model
    with pytest.raises(ValueError, match="y must be"):
        figures.bms_curves(table, y="median")


def test_bci_heatmap_cells_and_consistency_labels() -> None:
    cells = kahne.domain_means(TRIALS[TRIALS["model"] == "synthetic-beta"])
    fig = figures.bci_heatmap(cells)
    heat = fig.data[0]
    assert list(heat.x) == sorted(samples.DOMAINS)
    # beta, anchoring: mean of 0.3, 0.5, 0.7, 0.9 = 0.6; +0.1 individual, -0.1 social
    row = next(i for i, label in enumerate(heat.y) if label.startswith("anchoring_effect"))
    by_domain = dict(zip(heat.x, heat.z[row], strict=True))
    assert by_domain["individual"] == pytest.approx(0.7)
    assert by_domain["social"] == pytest.approx(0.5)


def test_has_chart_has_the_identity_line_and_every_bias() -> None:
    table = kahne.has(TRIALS)
    fig = figures.has_chart(table)
    assert list(fig.data[0].x) == [0, 1] and list(fig.data[0].y) == [0, 1]
    points = sum(len(t.x) for t in fig.data[1:])
    assert points == len(table) == 18


def test_cas_bars_leave_out_models_without_confidence() -> None:
    fig = figures.cas_bars(kahne.cas(TRIALS))
    assert list(fig.data[0].y) == ["synthetic-alpha", "synthetic-beta"]  # models down the side
    assert list(fig.data[0].x) == pytest.approx([0.9, 0.7])


def test_model_colors_are_stable() -> None:
    colors = figures.model_colors(["b", "a"])
    assert colors == {"a": figures.PALETTE[0], "b": figures.PALETTE[1]}


def test_fingerprint_heatmap_grid_matches_the_table() -> None:
    fp = kahne.fingerprint(samples.bias_trials())
    fig = figures.fingerprint_heatmap(fp.biases)
    heat = fig.data[0]
    assert list(heat.x) == sorted(fp.biases["model"].unique())
    row = list(heat.y).index(next(y for y in heat.y if y.endswith("· anchoring_effect")))
    col = list(heat.x).index("synthetic-alpha")
    expected = fp.biases.set_index(["model", "bias"]).loc[
        ("synthetic-alpha", "anchoring_effect"), "bms"]
    assert heat.z[row][col] == pytest.approx(expected)
    with pytest.raises(ValueError, match="fingerprint column"):
        figures.fingerprint_heatmap(fp.biases, value="nope")
