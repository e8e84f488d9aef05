"""Tests of kbench_core.figures: each figure carries the numbers of the table it draws."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kbench_core import families, figures, kahne, samples

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


def test_cas_bars_name_the_reported_accuracy_for_fingerprint_reports() -> None:
    from kbench_core.io import load_run

    assert figures.cas_bars(kahne.cas(TRIALS)).data[1].name == "accuracy (1 − score)"
    path = (Path(__file__).resolve().parents[1] / "sample_data" / "real" / "kahnebench"
            / "fingerprint_gpt52.json")
    run = load_run(path)
    item = next(i for i in families.items_for("bias_summary") if i.name == "cas_bars")
    (_, fig), = item.objects(run.frame, meta=run.meta)
    names = [trace.name for trace in fig.data]
    assert names == ["stated confidence", "accuracy (as reported)"]  # the report's own
    scores = json.loads(path.read_text(encoding="utf-8"))["calibration_scores"].values()
    reported = [s["actual_accuracy"] for s in scores
                if not s.get("insufficient_confidence_data")]
    assert reported  # the bar is the mean of the published actual_accuracy
    assert fig.data[1].x[0] == pytest.approx(sum(reported) / len(reported))


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


# ------------------------------------------------------------------ issue 16: every size

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kbench_core import catalog, vuln  # noqa: E402
from kbench_core.figures import base  # noqa: E402
from kbench_core.figures import compare as compare_figures  # noqa: E402
from kbench_core.figures import replication as rep_figures  # noqa: E402
from kbench_core.figures import vuln as vuln_figures  # noqa: E402


@given(st.integers(min_value=1, max_value=80))
def test_distinct_styles_never_repeat_within_a_figure(n: int) -> None:
    names = [f"study_{i:03d}" for i in range(n)]
    styles = base.distinct_styles(names)
    looks = {(s.color, s.symbol, s.dash) for s in styles.values()}
    assert len(looks) == n
    # the first eight keep Okabe & Ito's colours with plain circles and solid lines
    assert [styles[m].color for m in names[:8]] == list(base.PALETTE[:n])
    assert all(styles[m].symbol == "circle" for m in names[:8])


def test_distinct_styles_with_the_apps_colours_add_shapes_where_colours_repeat() -> None:
    colors = {"a": "#0072B2", "b": "#0072B2", "c": "#E69F00"}  # the app cycles 8 colours
    styles = base.distinct_styles(["a", "b", "c"], colors)
    assert (styles["a"].color, styles["a"].symbol) == ("#0072B2", "circle")
    assert (styles["b"].color, styles["b"].symbol) == ("#0072B2", "square")
    assert styles["c"].symbol == "circle"


@given(st.lists(st.text(alphabet="abc_-.0123", min_size=1, max_size=60), min_size=1,
                max_size=40, unique=True), st.integers(min_value=6, max_value=40))
def test_shortened_labels_stay_apart_and_short_labels_stay_whole(labels, budget) -> None:
    short = base.shorten(labels, budget)
    assert len(set(short)) == len(labels)  # two different names never read the same
    for label, cut in zip(labels, short, strict=True):
        if len(label) <= budget:
            assert cut == label
        elif cut != label:
            assert len(cut) <= max(budget, 6)
            if "…" in cut:  # a readable head is kept
                assert len(cut.split("…")[0]) >= min(4, len(cut) - 1)


def test_shorten_keeps_the_distinguishing_part_of_real_configuration_names() -> None:
    names = ["mistralai_mistral_small_creative_temp0.1_v1-empty",
             "mistralai_mistral_small_creative_temp0.3_v1-empty"]
    short = base.shorten(names, 20)
    assert short[0] != short[1] and all(len(s) <= 24 for s in short)
    assert "0.1" in short[0] and "0.3" in short[1]


def test_shorten_keeps_a_readable_head_and_the_distinguishing_tail() -> None:
    names = ["mistralai_mistral_small_creative_v3-human-plus-demo",
             "mistralai_mistral_small_creative_v1-empty",
             "deepseek_deepseek_v3.2_v3-human-plus-demo"]
    # model names (wrap): the display name whole, in two lines at most, never cut
    short = base.shorten(names, 24, wrap=True)
    assert short == ["mistral-small-creative<br>· v3-human-plus-demo",
                     "mistral-small-creative<br>· v1-empty",
                     "deepseek-v3.2 · v3-human-plus-demo"[:13] + "<br>· v3-human-plus-demo"]
    assert all(len(line) <= 24 for s in short for line in s.split("<br>"))
    other = ["study_001_exp_1_condition_with_a_long_name", "study_002_exp_1_condition"]
    cut = base.shorten(other, 24)  # other labels: cut, still told apart
    assert all(len(s) <= 24 for s in cut) and len(set(cut)) == 2
    detectors = base.shorten([f"synthetic-detector-{i:02d}" for i in range(60)], 12)
    assert detectors[7] == "syn-det-07"  # shared words abbreviated, the number whole


def test_composite_labels_cut_the_less_informative_part_first() -> None:
    labels = [f"detector_{c} · {j}" for c in "abcdefgh" for j in ("judge-x", "judge-y")]
    short = base.shorten(labels, 14)
    assert len(set(short)) == len(labels)
    models = {s.split(" · ")[0] for s in short}
    assert len(models) == 8  # every detector still told apart
    bias = base.shorten(["judgment · anchoring_effect", "judgment · availability_bias",
                         "loss_aversion · endowment_effect", "loss_aversion · loss_aversion"],
                        24)
    # the category (fewer distinct values) gives way; the bias keeps its head
    assert [b.split(" · ")[1][:8] for b in bias] == ["anchorin", "availabi", "endowmen",
                                                     "loss_ave"]


def test_a_composite_part_reads_one_way_on_one_axis() -> None:
    """The fixed-versions figure of the TC mirror (issue-37 walkthrough) named one detector
    "claude-opus-4-5 · codestral" and "cla-opus-4-5 · mimo-v2-flash" on one axis: a part is
    cut the same way in every label it is in (the most any of them needs)."""
    models = ["claude-opus-4-5", "gpt-5.2", "deepseek-v3.2", "gemini-3-pro", "grok-4-fast"]
    judges = ["codestral", "majority", "mimo-v2-flash", "mistral-large", "gemini-3-flash",
              "glm-4.7"]
    labels = [f"{m} · {j}" for m in models for j in judges]
    short = base.shorten(labels, 29)
    assert all(len(s) <= 29 for s in short) and len(set(short)) == len(labels)
    for k in (0, 1):
        forms: dict[str, set[str]] = {}
        for label, cut in zip(labels, short, strict=True):
            forms.setdefault(label.split(" · ")[k], set()).add(cut.split(" · ")[k])
        assert all(len(f) == 1 for f in forms.values()), forms


def test_wrap_breaks_between_words_within_the_width() -> None:
    # 16 px title font, 0.66 em per character: 160 px hold int(160 / 10.56) = 15 characters
    text = "Cognitive fingerprint: BMS per model and bias"
    wrapped = base.wrap(text, 160)
    assert wrapped.replace("<br>", " ") == text
    assert all(len(line) <= 15 for line in wrapped.split("<br>"))


def test_fit_to_width_moves_a_wide_side_legend_below_and_grows_the_figure() -> None:
    table = kahne.bms(TRIALS[TRIALS["bias"] == "anchoring_effect"])
    fig = figures.bms_curves(table)
    narrow = base.fit_to_width(fig, 336)
    assert fig.layout.legend.orientation is None  # as built: a side legend
    assert narrow.layout.legend.orientation == "h"
    assert narrow.layout.height > fig.layout.height
    assert narrow.layout.title.text.count("<br>") >= fig.layout.title.text.count("<br>")
    assert fig.layout.legend.orientation is None  # the figure given is not changed


def test_bms_curves_beyond_twelve_models_become_a_ranked_heatmap() -> None:
    models = [f"m{i:02d}" for i in range(13)]
    table = kahne.bms(samples.bias_trials(models=models, biases=["anchoring_effect"],
                                          n_trials=2))
    fig = figures.bms_curves(table)
    heat = fig.data[0]
    assert heat.type == "heatmap" and len(heat.y) == 13
    means = np.nanmean(np.asarray(heat.z, dtype=float), axis=1)
    assert list(means) == sorted(means, reverse=True)  # most biased on top


def test_fingerprint_heatmap_puts_the_longer_dimension_down_the_side() -> None:
    models = [f"m{i:02d}" for i in range(8)]
    fp = kahne.fingerprint(samples.bias_trials(models=models, biases=["anchoring_effect",
                                                                       "loss_aversion"],
                                               n_trials=2))
    heat = figures.fingerprint_heatmap(fp.biases).data[0]
    assert list(heat.y) == models and len(heat.x) == 2


def test_effect_scatter_draws_outliers_at_the_edge_and_counts_them() -> None:
    tests = pd.DataFrame({"model": "m", "study": ["s1", "s1", "s2"], "finding": "f",
                          "test": ["t1", "t2", "t3"], "d_h": [0.2, 0.5, 10.0],
                          "d_a": [0.1, -9.0, 0.4]})
    fig = rep_figures.effect_scatter(tests)
    # (the "beyond the axes" legend entry has no point: x = [None])
    points = [t for t in fig.data if t.mode == "markers" and t.x[0] is not None]
    x = np.concatenate([np.asarray(t.x, float) for t in points])
    y = np.concatenate([np.asarray(t.y, float) for t in points])
    limit = rep_figures.AXIS_LIMIT
    assert x.max() == limit and y.min() == -limit  # 10 and -9 drawn at the edge
    symbols = [s for t in points for s in (
        [t.marker.symbol] * len(t.x) if isinstance(t.marker.symbol, str) else t.marker.symbol)]
    assert symbols.count("triangle-up-open") == 2
    assert "2 tests outside [-4, 4]" in fig.layout.title.text


def test_effect_scatter_studies_beyond_eight_colours_differ_in_shape() -> None:
    tests = pd.DataFrame({"model": "m", "study": [f"study_{i:03d}" for i in range(12)],
                          "finding": "f", "test": [f"t{i}" for i in range(12)],
                          "d_h": np.linspace(0, 1, 12), "d_a": np.linspace(0, 1, 12)})
    fig = rep_figures.effect_scatter(tests)
    looks = {(t.marker.color, t.marker.symbol[0]) for t in fig.data if t.mode == "markers"}
    assert len(looks) == 12  # study_001 and study_009 no longer look alike


def _judged_tables(models: int):
    names = [f"detector-{i:02d}" for i in range(models)]
    frame = samples.judged_samples(models=names, n_samples=20, judges=["judge-one"])
    return frame, vuln.reliability(frame), vuln.tiers(frame)


def test_reliability_beyond_three_models_is_small_multiples_on_shared_axes() -> None:
    _, table, _ = _judged_tables(3)
    overlaid = vuln_figures.reliability_diagram(table)
    assert "xaxis3" not in overlaid.layout  # three models: one plot (and its histogram)
    _, table, _ = _judged_tables(7)
    fig = vuln_figures.reliability_diagram(table)
    axes = [k for k in fig.layout if k.startswith("xaxis")]
    assert len(axes) == 7
    assert all(list(fig.layout[a].range) == [-0.02, 1.03] for a in axes)
    assert all(list(fig.layout["y" + a[1:]].range) == [0, 1.04] for a in axes)
    assert len({a.text.split("<br>")[0] for a in fig.layout.annotations}) == 7


def test_sui_chart_is_in_the_judged_catalog() -> None:
    frame, _, tiers = _judged_tables(3)
    item = next(i for i in families.items_for("judged") if i.name == "sui_chart")
    ((stem, fig),) = list(item.objects(frame))
    assert stem == "sui_chart-judge-one"
    bars = [t for t in fig.data if t.type == "bar"]
    totals = np.sum([np.asarray(t.x, float) for t in bars], axis=0)
    expected = tiers.set_index("model").loc[list(bars[0].y), "sui"]
    np.testing.assert_allclose(totals, expected, atol=1e-12)


def test_reliability_pages_of_six_models_in_the_catalog() -> None:
    frame = samples.judged_samples(models=[f"d{i:02d}" for i in range(16)], n_samples=10,
                                   judges=["judge-one"])
    item = next(i for i in families.items_for("judged") if i.name == "reliability")
    pages = list(item.objects(frame))
    # 16 models in pages of 6 (two columns of three rows fit a page at one column): 6 + 6 + 4
    assert [stem for stem, _ in pages] == [f"reliability-judge-one-p{k}" for k in (1, 2, 3)]
    one_column = base.fit_to_width(pages[0][1], 336)
    assert one_column.layout.height <= base.PAGE_PX


def test_a_figure_taller_than_a_page_is_split_into_pages_of_rows() -> None:
    grid = pd.DataFrame(np.linspace(0, 1, 63 * 12).reshape(63, 12),
                        index=[f"config-{i:02d}" for i in range(63)],
                        columns=[f"study_{j:03d}" for j in range(12)])
    fig = base.heatmap_figure(grid, title="PAS per configuration (rows) and study", zmin=0,
                              zmax=1, colorbar_title="PAS")
    pages = catalog.paged(fig)
    assert len(pages) == 2
    rows = [list(p.data[0].y) for p in pages]
    assert rows[0] + rows[1] == list(grid.index)  # every row once, in order
    assert np.asarray(pages[1].data[0].z).shape == (len(rows[1]), 12)
    assert pages[0].layout.meta["kbench_title"].endswith("(page 1 of 2)")
    for page in pages:
        for width in (336, 672):
            assert base.fit_to_width(page, width).layout.height <= base.PAGE_PX
    assert catalog.paged(base.heatmap_figure(grid.iloc[:10], title="t", zmin=0, zmax=1,
                                             colorbar_title="PAS")) != []


def test_forest_plot_and_rank_chart_show_at_most_25_rows_with_a_note() -> None:
    n = 1770
    deltas = pd.DataFrame({"pair": [f"m{i}" for i in range(n)],
                           "delta": np.linspace(-1, 1, n), "n": 10})
    deltas["delta_low"], deltas["delta_high"] = deltas["delta"] - 0.1, deltas["delta"] + 0.1
    fig = compare_figures.forest_plot(deltas, label="pair")
    assert len(fig.data[0].y) == compare_figures.MAX_ROWS
    assert set(fig.data[0].y) >= {"m0", f"m{n - 1}"}  # the largest differences
    assert "25 largest of 1,770" in fig.layout.meta["kbench_subtitle"]
    assert len(catalog.paged(fig)) == 1  # shown whole: it fits a page at one column
    assert base.fit_to_width(fig, 336).layout.height <= base.PAGE_PX
    ranks = pd.DataFrame({"model": [f"m{i:02d}" for i in range(60)],
                          "rank": np.arange(1.0, 61.0), "value": np.linspace(0, 1, 60)})
    ranks["rank_low"], ranks["rank_high"] = ranks["rank"] - 1, ranks["rank"] + 1
    chart = compare_figures.rank_chart(ranks)
    assert sorted(chart.data[0].y) == [f"m{i:02d}" for i in range(25)]  # the best ranked
    assert "25 best ranked of 60" in chart.layout.meta["kbench_subtitle"]
    assert len(catalog.paged(chart)) == 1


def test_forest_plot_is_centred_on_zero() -> None:
    deltas = pd.DataFrame({"group": ["a", "b"], "delta": [0.1, 0.3],
                           "delta_low": [0.05, 0.1], "delta_high": [0.2, 0.5], "n": [10, 10]})
    fig = compare_figures.forest_plot(deltas)
    # the largest |bound| is 0.5; 5% margin: the axis runs from -0.525 to 0.525
    assert list(fig.layout.xaxis.range) == pytest.approx([-0.525, 0.525])


def test_forest_plot_colour_follows_the_direction_column() -> None:
    orange, grey = "#D55E00", "#888888"
    # b's unadjusted interval excludes 0, but the difference does not hold after Holm's
    # adjustment: grey, as its verdict says; a and c are decided (c's interval is NaN: an
    # exact p decided it)
    deltas = pd.DataFrame({"group": ["a", "b", "c"], "delta": [-0.4, 0.2, 0.5],
                           "delta_low": [-0.6, 0.01, np.nan], "delta_high": [-0.2, 0.4, np.nan],
                           "n": [30, 30, 30], "p_adjusted": [0.001, 0.09, 0.01],
                           "direction": ["lower", "undecided", "higher"]})
    fig = compare_figures.forest_plot(deltas)
    colours = dict(zip(fig.data[0].y, fig.data[0].marker.color, strict=True))
    assert colours == {"a": orange, "b": grey, "c": orange}
    assert "orange: decided after adjustment" in fig.layout.meta["kbench_subtitle"]
    # without a direction column: orange where the interval drawn excludes 0
    fig = compare_figures.forest_plot(deltas.drop(columns="direction"))
    colours = dict(zip(fig.data[0].y, fig.data[0].marker.color, strict=True))
    assert colours == {"a": orange, "b": orange, "c": grey}
    assert "orange: the interval excludes 0" in fig.layout.meta["kbench_subtitle"]


def test_forest_plot_without_intervals_names_no_interval_colour() -> None:
    from kbench_core import compare
    from kbench_core.io import load_run

    # two fingerprint reports: one BMS per bias, so no interval and no direction
    run = load_run(Path(__file__).resolve().parents[1] / "sample_data" / "real" / "kahnebench")
    spec = compare.COMPARISONS[run.kind]
    frame = compare.per_item_values(run.frame, run.kind)
    a, b = sorted(map(str, frame["model"].unique()))[:2]
    groups = compare.compare_pair(frame, spec.values[0][1], a, b, group=spec.group,
                                  cluster=spec.cluster, correction="holm",
                                  noun=spec.noun).groups
    assert groups["delta_low"].isna().all() and (groups["direction"] == "undecided").all()
    fig = compare_figures.forest_plot(groups, label="bias", what=f"{a} − {b}")
    subtitle = fig.layout.meta["kbench_subtitle"]
    assert "interval excludes 0" not in subtitle and "orange" not in subtitle
    assert "one value per group, no intervals" in subtitle
    assert set(fig.data[0].marker.color) == {"#888888"}


def test_study_heatmap_marks_configurations_without_scores() -> None:
    table = pd.DataFrame({"model": ["a", "a", "b", "b"], "study": ["s1", "s2", "s1", "s2"],
                          "pas": [0.5, 0.6, np.nan, np.nan]})
    heat = rep_figures.study_heatmap(table).data[0]
    labels = list(heat.y) + list(heat.x)
    assert "b (no scores)" in labels and "a" in labels


def test_summary_leaderboard_puts_unscored_configurations_last() -> None:
    from kbench_core import replication

    frame = pd.DataFrame({"model": ["none", "low", "low", "high", "high"],
                          "study": ["s1", "s1", "s2", "s1", "s2"],
                          "pas": [np.nan, 0.2, 0.2, 0.6, 0.6],
                          "ecs": [np.nan, 0.1, 0.1, 0.3, 0.3], "cost": [1.0, 2.0, 2.0, 3, 3]})
    fig = rep_figures.summary_leaderboard(replication.summary_leaderboard(frame, n_boot=50))
    assert list(fig.data[0].y) == ["high", "low", "none (no scores)"]


def test_no_most_susceptible_list_for_a_model_without_bias() -> None:
    fp = kahne.fingerprint(TRIALS)
    models = fp.models.set_index("model")
    gamma = fp.biases[fp.biases["model"] == "synthetic-gamma"]
    assert (gamma["bms"].abs() < 1e-12).all()  # planted: no bias at all
    assert models.loc["synthetic-gamma", "most_susceptible"] == ()
    assert len(models.loc["synthetic-alpha", "most_susceptible"]) > 0


def test_bias_summary_catalog_draws_the_published_fingerprint() -> None:
    from kbench_core.io import load_run

    run = load_run(Path(__file__).resolve().parents[1] / "sample_data" / "bias_summary.csv")
    built = {stem: obj for item in families.items_for("bias_summary")
             for stem, obj in item.objects(run.frame, meta=run.meta)}
    heat = built["fingerprint_heatmap"].data[0]
    expected = run.frame.set_index(["model", "bias"]).loc[
        ("synthetic-alpha", "anchoring_effect"), "bms"]
    rows, columns = list(map(str, heat.y)), list(map(str, heat.x))
    if any(r.endswith("anchoring_effect") for r in rows):
        cell = heat.z[next(i for i, r in enumerate(rows) if r.endswith("anchoring_effect"))][
            columns.index("synthetic-alpha")]
    else:  # models down the side
        cell = heat.z[rows.index("synthetic-alpha")][
            next(i for i, c in enumerate(columns) if c.endswith("anchoring_effect"))]
    assert cell == pytest.approx(expected)  # 0.6344, the planted closed form
    curve = built["intensity_curves-anchoring_effect"]
    assert {t.name for t in curve.data if t.name} >= {"synthetic-alpha", "synthetic-beta"}


def test_every_sample_figure_has_distinct_legend_entries() -> None:
    from tests.browser.layout import catalog_figures, legend_styles, sample_runs

    problems = [f"{f.label}: {p}" for name, run in sample_runs()
                for f in catalog_figures(name, run) for p in legend_styles(f.figure)]
    assert problems == []


def test_prompt_type_chart_beyond_twelve_models_is_a_ranked_heatmap() -> None:
    frame = samples.judged_samples(models=[f"d{i:02d}" for i in range(13)], n_samples=10,
                                   judges=["judge-one"])
    by_prompt = vuln.tiers(frame, by=("model", "prompt_type"))
    heat = vuln_figures.prompt_type_chart(by_prompt).data[0]
    assert heat.type == "heatmap" and len(heat.y) == 13 and len(heat.x) == 3
    means = np.nanmean(np.asarray(heat.z, dtype=float), axis=1)
    assert list(means) == sorted(means, reverse=True)
    one = by_prompt[(by_prompt["model"] == "d00") & (by_prompt["prompt_type"] == "direct")]
    assert heat.z[list(heat.y).index("d00")][list(heat.x).index("direct")] == pytest.approx(
        float(one["tdr"].iloc[0]))


def test_rank_chart_says_what_rank_one_means() -> None:
    ranks = pd.DataFrame({"model": ["a", "b"], "rank": [1.0, 2.0], "rank_low": [1.0, 1.0],
                          "rank_high": [2.0, 2.0], "value": [0.1, 0.2]})
    fig = compare_figures.rank_chart(ranks, best="least biased")
    assert fig.layout.xaxis.title.text == "Rank (1 = least biased)"


def test_effect_scatter_of_a_model_without_a_finite_effect_is_an_empty_figure() -> None:
    # A model whose agent effects are all missing (the Models page draws its card from its
    # rows alone): one panel per model is no panel, not a ValueError from the panel loop.
    tests = pd.DataFrame({"model": ["m1", "m2"], "study": "s", "finding": "f",
                          "test": ["t1", "t2"], "d_h": [np.nan, 0.5], "d_a": [0.2, np.nan]})
    for panels in (True, False):
        fig = rep_figures.effect_scatter(tests, panels=panels)
        assert not [t for t in fig.data if t.x is not None and len(t.x) and t.x[0] is not None]


def test_hover_text_of_one_long_label_is_not_as_wide_on_every_row() -> None:
    # A fixed-width text array is as wide as its longest line on every row: an uploaded test
    # name of 20k characters on 1,000 rows made 80 MB of hover text (4 bytes a character)
    # from 40 kB of text. Its size stays within a few times the text's own.
    n = 1_000
    rows = pd.DataFrame({"test": ["x" * 20_000] + [f"t{i}" for i in range(1, n)],
                         "study": "s", "finding": "f", "model": "m"})
    lines = rep_figures._hover_lines(rows, {})
    text = sum(len(line) for line in lines)
    assert lines.nbytes <= 8 * (text + 56 * n)
    assert list(lines[:2]) == ["<b>" + "x" * 20_000 + "</b><br>s · f<br>m",
                               "<b>t1</b><br>s · f<br>m"]
    usual = rep_figures._hover_lines(rows.iloc[1:], {"s": "s: A study's title"})
    assert usual[0] == "<b>t1</b><br>s: A study's title · f<br>m"


# ------------------------------------------------------------------ issue 37 item 9


def test_leaderboard_score_axis_spans_what_is_drawn_and_clears_the_cost_axis() -> None:
    """The published PAS and ECS are drawn (no interval); the mean of the per-study values,
    not drawn, has an interval down to -0.66 that put the axis at [-0.68, 1.05], half of it
    empty. The axis is now min(0, 0.10) - 0.02 = -0.02 to max(1, 0.50) * 1.05 = 1.05, and the
    cost axis starts 0.12 of the width later (0.04 put "1" and "0" 2 px apart: "10")."""
    from kbench_core.figures.replication import summary_leaderboard

    board = pd.DataFrame({
        "model": ["a", "b", "c"], "rank": [1, 2, 3], "no_scores": False,
        "config_pas": [0.50, 0.30, 0.10], "config_ecs": [0.20, 0.25, 0.30],
        "mean_study_pas": [0.40, 0.20, 0.05], "mean_study_pas_low": [-0.10, -0.40, -0.66],
        "mean_study_pas_high": [0.80, 0.70, 0.60], "cost": [1.0, 2.5, 10.0]})
    fig = summary_leaderboard(board)
    assert list(fig.layout.xaxis.range) == pytest.approx([0.0 - 0.02, 1.0 * 1.05])
    assert {t.name for t in fig.data if t.type == "bar"} == {"PAS (published)",
                                                             "ECS (published)"}
    assert fig.layout.xaxis2.domain[0] - fig.layout.xaxis.domain[1] == pytest.approx(0.12)


def test_fixed_versions_beyond_24_rows_name_every_row() -> None:
    """28 detector rows (7 detectors × 3 judges and the majority) drew a scatter whose
    points only the hover named ("hover names them" in a printed figure): every row is now
    a named category of the y axis, with both of its values, lowest claim rate on top."""
    from kbench_core.figures.vuln import fixed_claims_chart

    rng = np.random.default_rng(3)
    table = pd.DataFrame([(f"detector-{d}", judge) for d in "abcdefg"
                          for judge in ("judge-one", "judge-two", "judge-three", "majority")],
                         columns=["model", "judge"])
    rate, tdr = rng.uniform(0, 1, len(table)), rng.uniform(0, 1, len(table))
    table = table.assign(fixed_claim_rate=rate, fixed_claim_rate_low=rate / 2,
                         fixed_claim_rate_high=(1 + rate) / 2, tdr=tdr, tdr_low=tdr / 2,
                         tdr_high=(1 + tdr) / 2, n_fixed=10, n_vulnerable=10)
    fig = fixed_claims_chart(table)
    labels = [f"{m} · {j}" for m, j in zip(table["model"], table["judge"], strict=True)]
    assert sorted(fig.layout.yaxis.tickvals) == sorted(labels)
    assert len(fig.layout.yaxis.ticktext) == 28
    for trace in fig.data:
        assert sorted(trace.y) == sorted(labels)
    order = list(fig.layout.yaxis.categoryarray)
    assert order[0] == labels[int(np.argmin(rate))] and fig.layout.yaxis.autorange == \
        "reversed"
    shown = " ".join([fig.layout.title.text or "", *(a.text for a in fig.layout.annotations)])
    assert "hover" not in shown.lower()


REPORTS = Path(__file__).resolve().parent.parent / "sample_data" / "real" / "kahnebench"


@pytest.fixture(scope="module")
def kahnebench_reports():
    from kbench_core.io import load_run

    if not REPORTS.is_dir():
        pytest.skip("no real KahneBench reports in sample_data/real")
    return load_run(REPORTS)


def test_heatmap_columns_are_one_line_whole_and_turned_rows_never_cut(
        kahnebench_reports) -> None:
    """The fingerprint of the eleven real KahneBench reports at one column cut
    "overconfidence_effect" to "overconfidence_eff" and turned "grok-4-1-fast-<br>reasoning"
    in two lines, its second line under the next column. Columns are now one line, whole;
    a row label too long for its share breaks into two lines (the rows grow), never cut."""
    from kbench_core.families import items_for
    from kbench_core.figures.base import fit_to_width
    from kbench_core.figures.labels import display_labels

    item = next(i for i in items_for("bias_summary") if i.name == "fingerprint_heatmap")
    ((_, fig),) = list(item.objects(kahnebench_reports.frame, meta=kahnebench_reports.meta))
    for width in (None, 336, 672):
        shown = fig if width is None else fit_to_width(fig, width)
        columns = list(shown.layout.xaxis.ticktext)
        assert not any("<br>" in c for c in columns)
        assert columns == display_labels(list(shown.layout.xaxis.tickvals))
        assert "grok-4-1-fast-reasoning" in columns
        rows = [r.replace("<br>", "") for r in shown.layout.yaxis.ticktext]
        assert rows == list(shown.layout.yaxis.tickvals)  # whole, in one or two lines
    narrow = fit_to_width(fig, 336)
    assert "overconfidence_<br>effect" in list(narrow.layout.yaxis.ticktext)
    # 15 rows grown from 22 px to two lines of 10 px type: 2 * ceil(12.5) + 4 = 30 px
    assert narrow.layout.height - fit_to_width_without_rows(fig, 336) == 15 * (30 - 22)


def fit_to_width_without_rows(fig, width: int) -> int:
    """The height ``fit_to_width`` gives ``fig`` at ``width`` with its row labels short
    enough to need no second line: what the rows' growth is measured against."""
    import copy

    from kbench_core.figures.base import fit_to_width

    short = copy.deepcopy(fig)
    meta = dict(short.layout.meta)
    ticks = dict(meta["kbench_ticks"])
    ticks["yaxis"] = dict(ticks["yaxis"], labels=[f"b{i}" for i in range(
        len(ticks["yaxis"]["labels"]))])
    meta["kbench_ticks"] = ticks
    short.update_layout(meta=meta)
    return int(fit_to_width(short, width).layout.height)


def test_fit_labels_breaks_what_it_would_cut_into_two_lines() -> None:
    from kbench_core.figures.labels import fit_labels, shorten

    labels = ["anchoring_effect (1.00)", "overconfidence_effect (0.54)", "loss_aversion (1)"]
    cut = shorten(labels, 18)
    assert cut[0] != labels[0]  # what the rows showed: 'anchoring_effect ('-like cuts
    two = fit_labels(labels, 18, two_lines=True)
    assert [t.replace("<br>", " ").replace("_ ", "_") for t in two] == labels
    assert all(t.count("<br>") <= 1 for t in two)
    assert two[2] == "loss_aversion (1)"  # 17 characters: one line: one line, as it was
    assert fit_labels(labels, 18) == cut  # thin rows: as before


def test_intensity_panels_keep_their_level_labels_over_their_own_panel(
        kahnebench_reports) -> None:
    """'strong' of one panel and 'weak' of the next were 3 px apart at one column (eleven
    real reports, a panel each): the levels sit half a level in from each panel's edge
    (range [-0.5, 2.5] for three)."""
    from kbench_core.families import items_for

    run = kahnebench_reports
    item = next(i for i in items_for("bias_summary") if i.name == "intensity_curves")
    _, fig = next(iter(item.objects(run.frame, meta=run.meta)))
    axes = [k for k in fig.layout.to_plotly_json() if k.startswith("xaxis")]
    assert len(axes) >= 2
    for axis in axes:
        levels = list(fig.layout[axis].categoryarray)
        assert list(fig.layout[axis].range) == [-0.5, len(levels) - 0.5]


def test_heatmap_columns_that_fit_unturned_get_no_turned_margin() -> None:
    """At an export width the columns' room is known: short labels that fit their column
    keep a one-line margin (40 + ceil(1.3 * 12) = 56 px), long ones the margin of the turned
    label (40 + int(len * 0.66 * 12 * 0.8))."""
    import math

    from kbench_core.figures.base import fit_to_width, heatmap_figure

    def heat(columns):
        grid = pd.DataFrame([[0.1] * len(columns)] * 3, index=["r1", "r2", "r3"],
                            columns=columns)
        return fit_to_width(heatmap_figure(grid, title="t", zmin=0, zmax=1,
                                           colorbar_title="v"), 672)

    short, long = heat(["a", "b", "c"]), heat([f"a-long-column-name-{i}" for i in range(10)])
    assert short.layout.margin.b == 40 + math.ceil(1.3 * 12)
    assert long.layout.margin.b == 40 + int(len("a-long-column-name-0") * 0.66 * 12 * 0.8)
