"""The vulnerability page recomputes only what a widget change touches (issue 25): its
tier tables are built in one pass, and each figure is keyed on the options it depends on, so
the figure a change leaves alone is reused, and the figures shown are those of a fresh
session opened with the same widgets."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_app import cache, state
from kbench_app import vuln as page
from kbench_core import vuln
from kbench_core.families.judged import TierOptions, leaderboard
from kbench_core.figures import vuln as vuln_figures
from kbench_core.io import load_run
from kbench_core.samples import big_judged_samples

ROOT = Path(__file__).resolve().parent.parent
VIEWS = (("headline", page.HEADLINE), *vuln.TIERS.items())


def _tables(frame: pd.DataFrame, by: tuple[str, ...], options: TierOptions) -> pd.DataFrame:
    judge = vuln.judges_of(frame)[0]
    rows = frame[frame["judge"].astype(str) == judge]
    return leaderboard(vuln.tiers(rows, by=by, **options.tiers()))


@pytest.mark.parametrize("by", [("model",), ("model", "prompt_type")])
@pytest.mark.parametrize("source", ["sample", "big"])
def test_tier_views_equal_one_tier_view_per_tab(by, source, tmp_path) -> None:
    if source == "sample":
        frame = load_run(ROOT / "sample_data" / "judged.csv").frame
        options = TierOptions(bootstrap=True)  # rank and composite intervals shown too
    else:
        path = tmp_path / "big.parquet"
        big_judged_samples(5_400).to_parquet(path)
        frame = load_run(path).frame
        options = TierOptions(partial_credit=0.5, zero_division="nan")
    table = _tables(frame, by, options)
    views = page.tier_views(table, VIEWS, keys=by)
    assert list(views) == [name for name, _ in VIEWS]
    for name, metrics in VIEWS:
        view, config = views[name]
        expected, expected_config = page.tier_view(table, metrics, keys=by)
        assert list(view.columns) == list(expected.columns), name
        pd.testing.assert_frame_equal(view.reset_index(drop=True), expected, rtol=1e-12,
                                      atol=1e-12)
        assert config == expected_config, name


def test_lucky_options_keep_what_the_chart_depends_on() -> None:
    options = TierOptions(partial_credit=0.5, severity_weighted=True, n_bins=15,
                          binning="quantile", sui_weights=(("tdr", 0.9),))
    kept = page.lucky_options(options)
    assert (kept.partial_credit, kept.severity_weighted, kept.zero_division) == (0.5, True,
                                                                                 "seed")
    assert kept == page.lucky_options(TierOptions(partial_credit=0.5, severity_weighted=True))
    assert kept != page.lucky_options(TierOptions(partial_credit=1.0, severity_weighted=True))


def _open(monkeypatch, calls: dict[str, int], **widgets) -> AppTest:
    """The page on the sample run, each figure builder counted, the widgets set first."""
    for name in ("lucky_guess_chart", "reliability_diagram", "sui_leaderboard"):
        original = getattr(vuln_figures, name)

        @functools.wraps(original)
        def counted(*args, _original=original, _name=name, **kwargs):
            calls[_name] = calls.get(_name, 0) + 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(vuln_figures, name, counted)
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    state._cached_load.clear()
    cache.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    for key, value in widgets.items():
        kind = {"vuln_bins": "slider", "vuln_partial": "slider", "vuln_split": "toggle"}[key]
        getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _specs(at: AppTest) -> dict[str, str]:
    """The page's charts by their key (kit.chart's download names differ per options)."""
    return {c.proto.id.split("-")[-1]: c.proto.spec for c in at.get("plotly_chart")}


@pytest.mark.parametrize(("change", "value", "left_alone"), [
    ("vuln_bins", 7, "lucky_guess_chart"),           # bins: not tiers 1-2
    ("vuln_partial", 0.5, "reliability_diagram"),    # credit: not the confidences
    ("vuln_split", True, "sui_leaderboard"),         # split: the leaderboard only
])
def test_a_change_redraws_only_the_figures_it_touches(monkeypatch, change, value,
                                                      left_alone) -> None:
    calls: dict[str, int] = {}
    at = _open(monkeypatch, calls)
    before = dict(calls)
    assert before.get(left_alone, 0) >= 1
    kind = {"vuln_bins": "slider", "vuln_partial": "slider", "vuln_split": "toggle"}[change]
    getattr(at, kind)(key=change).set_value(value).run()
    assert not at.exception
    assert calls.get(left_alone, 0) == before[left_alone], calls
    # and the page shows what a fresh session with that widget set shows (nothing cached)
    fresh = _open(monkeypatch, {}, **{change: value})
    assert sorted(_specs(at).values()) == sorted(_specs(fresh).values())


def _judged(source: str, tmp_path: Path):
    if source == "sample":
        return load_run(ROOT / "sample_data" / "judged.csv")
    if source == "records":  # several judges, difficulty tiers in the ids, fixed versions
        return load_run(ROOT.parent / "shared" / "formats" / "blockbench_multi_judge_records.json")
    path = tmp_path / "big.parquet"
    big_judged_samples(5_400).to_parquet(path)
    return load_run(path)


@pytest.mark.parametrize("by", [("model",), ("model", "prompt_type"), ("model", "difficulty")])
@pytest.mark.parametrize("source", ["sample", "big", "records"])
def test_tiers_cut_from_every_detector_equal_the_tiers_of_the_chosen(by, source,
                                                                     tmp_path) -> None:
    run = _judged(source, tmp_path)
    frame = run.frame
    cache.clear()
    everyone = sorted(map(str, frame["model"].unique()))
    judges = page.judge_choices(frame)
    compared = 0
    for options in (TierOptions(), TierOptions(partial_credit=0.5, severity_weighted=True,
                                               zero_division="nan", n_bins=7,
                                               binning="quantile",
                                               sui_weights=(("tdr", 0.9),))):
        for judge in judges[:2]:
            for models in (everyone, everyone[1:], everyone[:1], everyone[::-1][:2]):
                selected = page.selected_rows(frame, models, judge, runs=[run])
                if by[1:] and (by[1] not in selected or selected[by[1]].isna().all()):
                    continue
                selection = (tuple(models), judge, None)
                pool = page.judge_pool(frame, selected, models, judge, runs=[run])
                cut = page.tiers(selected, runs=[run], selection=selection, options=options,
                                 by=by, pool=pool)
                cache.clear()  # the direct computation shares nothing with the cut
                direct = page.tiers(selected, runs=[run], selection=selection,
                                    options=options, by=by)
                assert len(cut) == len(direct) > 0
                assert set(cut["model"].astype(str)) == set(models)
                pd.testing.assert_frame_equal(cut, direct, rtol=1e-12, atol=1e-12,
                                              check_categorical=False)
                compared += 1
    if not compared:
        pytest.skip(f"the {source} run has no {by[1]}")


@pytest.mark.parametrize("kind", ["str", "category", "object", "numbers"])
def test_label_codes_sort_like_the_text_of_the_labels(kind) -> None:
    from kbench_core.vuln._prepare import _label_codes

    values = ["ds_t2_010", "b", None, "ds_t1_002", "B", "é", "b", "ds_t1_002 ", "10", "9"]
    if kind == "numbers":
        values = [10, 9, None, 100, 9, 1.5]
    series = {"str": pd.Series(values, dtype="str"),
              "category": pd.Series(values, dtype="category").cat.add_categories(["zz"]),
              "object": pd.Series(values, dtype=object),
              "numbers": pd.Series(values, dtype=object)}[kind]
    codes, labels = _label_codes(series)
    present = [v for v in values if v is not None]
    expected = sorted(set(present) | ({"zz"} if kind == "category" else set()), key=str)
    assert labels == [*expected, None]
    # each row's code is its label's place in the text order; missing last
    assert codes.tolist() == [expected.index(v) if v is not None else len(expected)
                              for v in values]
