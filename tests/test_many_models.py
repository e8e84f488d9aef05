"""Many models (issue 29, item 5): ``compare_models`` computes every pair in one vectorised
pass, identical to the per-pair path it replaced (kept here as the reference), and a family
page with hundreds of models opens on the top and bottom of its leaderboard."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from streamlit.testing.v1 import AppTest

from kbench_core import compare
from kbench_core.compare import _adjust, _item_means, _paired_values
from kbench_core.stats import Estimate


def _directions_per_row(table: pd.DataFrame, correction, alpha: float = 0.05) -> pd.Series:
    """The per-row loop behind ``direction`` before issue 29: claims_direction per pair."""
    directions = []
    for row in table.itertuples(index=False):
        p = float(row.p_value) if pd.notna(row.p_value) else None
        est = Estimate(row.delta, row.delta_low, row.delta_high, int(row.n), p)
        adjusted = float(row.p_adjusted) if pd.notna(row.p_adjusted) else None
        claimed = compare.claims_direction(est, adjusted_p=adjusted if correction else None,
                                           alpha=alpha)
        directions.append(("lower" if row.delta < 0 else "higher") if claimed
                          else "undecided")
    return pd.Series(directions, index=table.index, dtype=object)


def compare_models_per_pair(frame: pd.DataFrame, value: str, *, item=None, cluster=None,
                            correction="holm", level: float = 0.95,
                            alpha: float = 0.05) -> pd.DataFrame:
    """The per-pair loop ``compare_models`` ran before issue 29: one ``_paired_values`` (the
    function behind ``paired_difference``) per pair, and ``claims_direction`` per pair."""
    means, models, keys, arrays = _item_means(frame, value, item, cluster)
    codes = pd.factorize(arrays[keys.index(cluster)])[0] if cluster is not None else None
    order = np.argsort(models, kind="stable")
    rows = []
    for i, j in combinations(order, 2):
        est = _paired_values(means[:, i], means[:, j], codes, level)
        rows.append((models[i], models[j], est.value, est.low, est.high, est.p_value,
                     est.test or "", est.df, est.n, est.n_clusters, est.n_dropped,
                     est.n_discordant))
    out = pd.DataFrame(rows, columns=["model_a", "model_b", "delta", "delta_low", "delta_high",
                                      "p_value", "test", "df", "n", "n_clusters", "n_dropped",
                                      "n_discordant"])
    out["p_value"] = out["p_value"].astype(float)
    out["n_clusters"] = out["n_clusters"].astype("Int64")
    out["n_discordant"] = out["n_discordant"].astype("Int64")
    out.insert(6, "p_adjusted", _adjust(out["p_value"], correction))
    out["direction"] = _directions_per_row(out, correction, alpha)
    # the adjusted intervals: each pair's own interval at the adjusted level (Bonferroni
    # for Holm, Benjamini–Yekutieli for BH), widened to 0 where the pair is undecided
    m = int(out["p_value"].notna().sum())
    decided = int((out["p_adjusted"] < alpha).sum())
    adjusted = {"holm": 1 - (1 - level) / max(m, 1), None: level,
                "fdr_bh": 1 - max(decided, 1) * (1 - level) / max(m, 1)}[correction]
    out["adjusted_level"] = np.where(out["p_value"].notna(), adjusted, level)
    lows, highs = [], []
    for (i, j), row in zip(combinations(order, 2), out.itertuples(), strict=True):
        est = _paired_values(means[:, i], means[:, j], codes, row.adjusted_level)
        low, high = est.low, est.high
        if row.direction == "undecided":
            low, high = min(low, 0.0), max(high, 0.0)
        lows.append(low)
        highs.append(high)
    out["delta_adj_low"], out["delta_adj_high"] = lows, highs
    return out


def _run(rng: np.random.Generator, *, n_models: int, n_items: int, n_clusters: int,
         binary: bool, missing: float, degenerate: bool, repeats: int = 1) -> pd.DataFrame:
    """A run of ``n_models`` models over ``n_items`` items in ``n_clusters`` unequal clusters
    (``cluster`` column), 0/1 or continuous scores, a share of cells missing, and (with
    ``degenerate``) some models that are copies of another shifted by a constant (every
    difference alike) or identical."""
    sizes = rng.multinomial(n_items - n_clusters, np.ones(n_clusters) / n_clusters) + 1
    cluster = np.repeat(np.arange(n_clusters), sizes)
    base = rng.normal(size=n_items)
    rows = []
    previous = base
    for m in range(n_models):
        if binary:
            values = (rng.random(n_items) < 1 / (1 + np.exp(-base - 0.3 * m))).astype(float)
        else:
            values = base + rng.normal(0.2 * m, 1, n_items)
        if degenerate and m % 3 == 1:
            values = previous + (0 if binary else 0.5)  # the previous model, shifted
        previous = values.copy()
        values = values.copy()
        values[rng.random(n_items) < missing] = np.nan
        for r in range(repeats):
            rows.append(pd.DataFrame({"model": f"m{m:02d}", "item": np.arange(n_items),
                                      "cluster": cluster, "trial": r, "score": values}))
    return pd.concat(rows, ignore_index=True)


DESIGNS = [
    dict(n_models=6, n_items=40, n_clusters=8, binary=False, missing=0.0, degenerate=False),
    dict(n_models=7, n_items=30, n_clusters=5, binary=True, missing=0.1, degenerate=False),
    dict(n_models=8, n_items=25, n_clusters=25, binary=True, missing=0.2, degenerate=True),
    dict(n_models=6, n_items=12, n_clusters=3, binary=False, missing=0.3, degenerate=True),
    dict(n_models=5, n_items=4, n_clusters=2, binary=True, missing=0.5, degenerate=True),
    dict(n_models=9, n_items=60, n_clusters=12, binary=False, missing=0.05, degenerate=True),
    dict(n_models=5, n_items=3, n_clusters=1, binary=False, missing=0.4, degenerate=False),
]


def _same(fast: pd.DataFrame, slow: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fast, slow, check_exact=False, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_pair_at_once_matches_the_per_pair_reference(design, clustered, seed):
    frame = _run(np.random.default_rng(seed), **design)
    cluster = "cluster" if clustered else None
    fast = compare.compare_models(frame, "score", item=["item"], cluster=cluster)
    slow = compare_models_per_pair(frame, "score", item=["item"], cluster=cluster)
    _same(fast, slow)


def test_the_designs_reach_every_test_and_no_test():
    """The random designs above exercise each branch: every test, and pairs without one."""
    seen = set()
    for design in DESIGNS:
        for cluster in (None, "cluster"):
            frame = _run(np.random.default_rng(0), **design)
            seen |= set(compare.compare_models(frame, "score", item=["item"],
                                               cluster=cluster)["test"])
    assert seen == {"paired t", "CR2 t", "exact McNemar", "cluster sign-flip", "exact sign", ""}


def test_repeated_trials_level_and_fdr_match_the_reference():
    frame = _run(np.random.default_rng(5), n_models=6, n_items=20, n_clusters=4, binary=True,
                 missing=0.1, degenerate=True, repeats=3)
    frame.loc[frame.index % 7 == 0, "score"] = np.nan  # per-item means of 0/1: not 0/1
    for cluster in (None, "cluster"):
        options = dict(item=["item"], cluster=cluster, correction="fdr_bh", level=0.9)
        _same(compare.compare_models(frame, "score", **options),
              compare_models_per_pair(frame, "score", **options))


def _issue_run(n_models: int) -> pd.DataFrame:
    """The issue's run: 2 biases × control/treatment per model, 0/1 scores."""
    rng = np.random.default_rng(0)
    rows = [(f"model-{m:03d}", b, c, i, "social", float(rng.integers(0, 2)))
            for m in range(n_models) for b in ("anchoring_effect", "gain_loss_framing")
            for c, i in (("control", ""), ("treatment", "weak"))]
    return pd.DataFrame(rows, columns=["model", "bias", "condition", "intensity", "domain",
                                       "score"])


def test_the_issue_run_matches_the_reference():
    frame = _issue_run(60)
    fast = compare.compare_models(frame, "score", cluster="bias")
    assert len(fast) == 60 * 59 // 2
    _same(fast, compare_models_per_pair(frame, "score", cluster="bias"))


def test_every_pair_is_one_pass_not_one_test_per_pair(monkeypatch):
    """Fails on the per-pair loop: 435 pairs called the per-pair test (and scipy's binomtest
    and t quantile) once each; now scipy is called on arrays, a few times per table."""
    calls = {"pair": 0, "binomtest": 0, "ppf": 0}
    paired, binomtest, ppf = compare._paired_values, stats.binomtest, stats.t.ppf

    def counted(name, function):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(compare, "_paired_values", counted("pair", paired))
    monkeypatch.setattr(compare.stats, "binomtest", counted("binomtest", binomtest))
    monkeypatch.setattr(compare.stats.t, "ppf", counted("ppf", ppf))
    frame = _issue_run(30).assign(score=lambda f: f["score"] * 0.5 + 0.1 * (f.index % 3))
    out = compare.compare_models(frame, "score", cluster="bias")
    assert len(out) == 435 and set(out["test"]) >= {"CR2 t"}
    # ppf twice: the pairs' own intervals and the adjusted (simultaneous) ones, on arrays
    assert calls == {"pair": 0, "binomtest": 0, "ppf": 2}


@pytest.mark.parametrize("correction", ["holm", "fdr_bh", None])
@pytest.mark.parametrize("alpha", [0.05, 0.5])
def test_directions_match_claims_direction_row_by_row(correction, alpha):
    frame = _run(np.random.default_rng(4), **DESIGNS[5])
    for cluster in (None, "cluster"):
        out = compare.compare_models(frame, "score", item=["item"], cluster=cluster,
                                     correction=correction, alpha=alpha)
        pd.testing.assert_series_equal(out["direction"],
                                       _directions_per_row(out, correction, alpha),
                                       check_names=False)
    groups = compare.group_differences(frame.assign(g=frame["item"] % 4), "score", "m00",
                                       "m03", "g", item=["item"], correction=correction)
    pd.testing.assert_series_equal(groups["direction"], _directions_per_row(groups, correction),
                                   check_names=False)


def test_chunks_of_pairs_give_the_same_table(monkeypatch):
    frame = _run(np.random.default_rng(3), **DESIGNS[5])
    whole = compare.compare_models(frame, "score", item=["item"], cluster="cluster")
    monkeypatch.setattr(compare, "_PAIR_CELLS", 7)  # 1 pair per chunk
    pd.testing.assert_frame_equal(
        compare.compare_models(frame, "score", item=["item"], cluster="cluster"), whole)


@pytest.mark.parametrize("m", [1, 2, 5, 6, 17, 40, 101, 400])
def test_the_sign_p_is_binomtest(m):
    k = np.arange(m + 1)
    expected = [stats.binomtest(int(x), m, 0.5).pvalue for x in k]
    np.testing.assert_allclose(compare._sign_p(k, m - k), expected, rtol=1e-12)


@st.composite
def _runs(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    design = dict(n_models=draw(st.integers(2, 6)), n_items=draw(st.integers(2, 20)),
                  binary=draw(st.booleans()), missing=draw(st.sampled_from([0.0, 0.2, 0.5])),
                  degenerate=draw(st.booleans()))
    design["n_clusters"] = draw(st.integers(1, design["n_items"]))
    return _run(np.random.default_rng(seed), **design), draw(st.sampled_from([None,
                                                                             "cluster"]))


_COLUMNS = ["delta", "delta_low", "delta_high", "p_value", "p_adjusted", "df"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
def test_a_pair_read_the_other_way_round_is_its_negative(case):
    """Renaming the models reverses their sorted order, so every pair is computed as B − A:
    the difference and interval flip sign, everything else is unchanged."""
    frame, cluster = case
    flipped = frame.assign(model=frame["model"].map(lambda m: f"z{99 - int(m[1:]):02d}"))
    ahead = compare.compare_models(frame, "score", item=["item"], cluster=cluster)
    behind = compare.compare_models(flipped, "score", item=["item"], cluster=cluster)
    back = {(f"z{99 - int(a[1:]):02d}", f"z{99 - int(b[1:]):02d}"): row
            for a, b, row in zip(ahead["model_a"], ahead["model_b"], ahead.itertuples(),
                                 strict=True)}
    assert len(back) == len(behind)
    for row in behind.itertuples():
        other = back[(row.model_b, row.model_a)]
        np.testing.assert_allclose(
            [row.delta, row.delta_low, row.delta_high, row.p_value, row.p_adjusted, row.df],
            [-other.delta, -other.delta_high, -other.delta_low, other.p_value,
             other.p_adjusted, other.df], rtol=1e-9, atol=1e-12)
        assert (row.test, row.n, row.n_dropped) == (other.test, other.n, other.n_dropped)
        assert row.direction == {"lower": "higher", "higher": "lower"}.get(
            other.direction, other.direction)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs(), st.integers(0, 2**32 - 1))
def test_shuffling_the_rows_changes_nothing(case, seed):
    frame, cluster = case
    shuffled = frame.sample(frac=1, random_state=seed % 2**31).reset_index(drop=True)
    _same(compare.compare_models(shuffled, "score", item=["item"], cluster=cluster),
          compare.compare_models(frame, "score", item=["item"], cluster=cluster))


# --- pages -------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def _effect_board(frame: pd.DataFrame) -> list[str]:
    """Models by their mean over biases of (treatment mean − control mean) score, the bias
    family's per-item comparison (lower is better), ties by name."""
    means = frame.pivot_table(index=["model", "bias"], columns="condition", values="score",
                              aggfunc="mean")
    effect = (means["treatment"] - means["control"]).groupby(level="model").mean()
    board = pd.DataFrame({"model": effect.index, "effect": effect.to_numpy()})
    return board.sort_values(["effect", "model"], kind="stable")["model"].tolist()


def test_a_600_model_bias_run_opens_on_the_ends_of_the_leaderboard(tmp_path, monkeypatch):
    """Fails before issue 29: the page selected all 600 models (and compared 179,700 pairs)."""
    from kbench_app import state

    frame = _issue_run(600)
    path = tmp_path / "many600.csv"
    frame.to_csv(path, index=False)
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--no-samples {path}")
    state._cached_load.clear()
    at = AppTest.from_file(str(ROOT / "views" / "bias.py"), default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    chosen = at.multiselect(key="bias_models").value
    assert len(chosen) <= 10
    # the 5 lowest and the 5 highest mean bias effects (lower is better), ties by name
    board = _effect_board(frame)
    assert list(chosen) == board[:5] + board[-5:]
    assert any("600 models: showing the 5 best and 5 worst by mean bias effect" in c.value
               for c in at.caption)
    assert len(at.multiselect(key="bias_models").options) == 600


def _panel(frame: pd.DataFrame, **session) -> AppTest:
    """The Compare panel alone (tests/apps/compare_panel_app.py) on a bias-like ``frame``."""
    frame = frame.assign(domain="d", condition="treatment", trial=frame["item"])
    at = AppTest.from_file(str(ROOT / "tests" / "apps" / "compare_panel_app.py"),
                           default_timeout=120)
    at.session_state["cmp_frame"] = frame.to_csv(index=False)
    for name, value in session.items():
        at.session_state[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_pair_of_many_models_waits_for_a_request():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"model": np.repeat([f"m{m:02d}" for m in range(40)], 12),
                          "bias": np.tile(np.repeat(["a", "b", "c"], 4), 40),
                          "item": np.tile(np.arange(12), 40),
                          "score": rng.integers(0, 2, 480).astype(float)})
    at = _panel(frame)
    at.radio(key="cmp_mode").set_value("Every pair").run()
    assert not at.exception
    assert not at.dataframe and not at.get("plotly_chart")  # nothing computed yet
    at.toggle(key="cmp_all").set_value(True).run()
    assert not at.exception
    assert [len(t.value) for t in at.dataframe] == [40 * 39 // 2]
    assert not at.get("plotly_chart")  # 780 pairs: no forest plot, a caption instead
    assert any("Too many pairs to draw" in c.value for c in at.caption)


def test_a_few_models_still_compare_every_pair_at_once():
    frame = pd.DataFrame({"model": np.repeat(["x", "y", "z"], 6), "bias": "a",
                          "item": np.tile(np.arange(6), 3),
                          "score": np.tile([0.0, 1, 1, 0, 1, 0], 3)})
    at = _panel(frame)
    assert not at.get("toggle") or "cmp_all" not in [t.key for t in at.toggle]
    at.radio(key="cmp_mode").set_value("Every pair").run()
    assert [len(t.value) for t in at.dataframe] == [3]


def test_the_ends_of_a_judged_leaderboard_are_its_most_and_least_correct_models():
    from kbench_app import kit
    from kbench_core.samples import judged_samples

    frame = judged_samples(models=[f"d{i:02d}" for i in range(40)], seed=3)
    ends, label = kit.leaderboard_ends(frame, "judged")
    # correct verdict = said_vulnerable == is_vulnerable, unknown when no verdict; higher is
    # better, ties by name
    said = frame["said_vulnerable"]
    correct = (said.astype(float) == frame["is_vulnerable"].astype(float)).astype(float)
    correct[said.isna()] = np.nan
    means = correct.groupby(frame["model"].astype(str)).mean()
    board = pd.DataFrame({"model": means.index, "key": -means.to_numpy()}).sort_values(
        ["key", "model"])["model"].tolist()
    assert label == "correct verdict"
    assert ends == board[:5] + board[-5:]


def test_models_without_a_known_value_come_last():
    from kbench_app import kit

    frame = _issue_run(40)
    unknown = frame["model"].isin([f"model-{m:03d}" for m in range(34)])
    frame.loc[unknown, "score"] = np.nan  # 6 models with scores, 34 without
    ends, _ = kit.leaderboard_ends(frame, "bias")
    known = _effect_board(frame[~unknown])
    # the 5 best known, then the last known and the first 4 unknown (by name) as the "worst"
    assert ends == known[:5] + known[5:] + [f"model-{m:03d}" for m in range(4)]
    small = _issue_run(8)
    assert sorted(kit.leaderboard_ends(small, "bias")[0]) == sorted(small["model"].unique())
