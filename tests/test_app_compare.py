"""The Compare panel (kbench_app.compare) on the bundled sample runs, with AppTest.

The panel runs alone in tests/apps/compare_panel_app.py; the numbers it shows are checked
against values computed here with pandas, scipy and statsmodels, not with kbench_core.compare.
"""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests
from streamlit.testing.v1 import AppTest

from kbench_app import compare as compare_view
from kbench_core.io import load_run
from kbench_core.tables import format_value

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "tests" / "apps" / "compare_panel_app.py"
BIAS_ITEM = ["bias", "domain", "condition", "intensity", "method", "trial"]


def start(**session: object) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    for name, value in session.items():
        at.session_state[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def decoded(value):
    """Plotly's typed arrays ({"dtype", "bdata", "shape"}) back to lists."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(s) for s in str(value.get("shape", len(array))).split(",")]
        return array.reshape(shape).tolist()
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


def charts(at: AppTest) -> dict[str, dict]:
    """The page's plotly charts by widget key suffix (``cmp_forest_chart`` ...)."""
    return {c.proto.id.rsplit("-", 1)[-1]: decoded(json.loads(c.proto.spec))
            for c in at.get("plotly_chart")}


def verdicts(at: AppTest) -> list[str]:
    return [s.value for s in at.success] + [i.value for i in at.info]


def unescape(text: str) -> str:
    return text.replace("\\", "")


def bias_differences(a: str, b: str) -> pd.DataFrame:
    """Per-item a − b of the sample bias run, by hand: trials averaged within the item key."""
    trials = load_run(ROOT / "sample_data" / "bias.csv").frame
    keys = trials[BIAS_ITEM].astype(object).fillna("")
    means = trials.assign(**keys).groupby([*BIAS_ITEM, "model"])["score"].mean().unstack()
    both = means[[a, b]].dropna()
    return (both[a] - both[b]).rename("diff").reset_index()


def clustered(diff: pd.DataFrame) -> tuple[float, float, float, float]:
    """Mean, 95% bounds and p of the differences clustered by bias (statsmodels' CR1, G − 1
    df: the sample run's biases hold equal numbers of items, where CR2 with Bell–McCaffrey df,
    which kbench uses, is exactly this)."""
    groups = pd.factorize(diff["bias"])[0]
    fit = sm.OLS(diff["diff"].to_numpy(), np.ones(len(diff))).fit(
        cov_type="cluster", cov_kwds={"groups": groups})
    g = groups.max() + 1
    mean, se = fit.params[0], fit.bse[0]
    half = stats.t.ppf(0.975, g - 1) * se
    return mean, mean - half, mean + half, 2 * stats.t.sf(abs(mean / se), g - 1)


def sign_flip_p(diff: pd.DataFrame) -> float:
    """The exact sign-flip p over the biases' summed 0/1 differences, by enumerating the
    2^G flips (issue 38, item 1: clustered 0/1 outcomes)."""
    sums = diff.groupby("bias")["diff"].sum().to_numpy()
    flips = np.array(list(itertools.product([-1, 1], repeat=sums.size)))
    return float(np.mean(np.abs(flips @ sums) >= abs(sums.sum()) - 1e-9))


def test_bias_panel_shows_verdict_numbers_and_forest_plot() -> None:
    from kbench_core import compare

    at = start()
    alpha_beta = bias_differences("synthetic-alpha", "synthetic-beta")
    mean = alpha_beta["diff"].mean()
    # 0/1 trial scores clustered by bias: the exact sign-flip test over the 6 biases (every
    # bias favours alpha: 2 · 0.5⁶) and Newcombe's interval on Kish's effective n (worked in
    # tests/test_stats_round3_compare.py)
    p_ab = sign_flip_p(alpha_beta)
    assert p_ab == pytest.approx(2 * 0.5**6)
    est = compare.paired_difference(load_run(ROOT / "sample_data" / "bias.csv").frame,
                                    "score", "synthetic-alpha", "synthetic-beta",
                                    cluster="bias")
    low, high = est.low, est.high
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Difference A − B"] == f"{mean:+.3f}"
    assert metrics["95% interval"] == f"[{low:+.2f}, {high:+.2f}]"
    assert metrics["Shared items"] == f"{len(alpha_beta):,}"
    # One pair asked for: its p, unadjusted (issue 23, item 11)
    assert metrics["p (one pair, unadjusted)"] == f"{p_ab:.3g}"
    # alpha planted more biased than beta: a direction is claimed, and it is "worse"
    text = unescape(at.success[0].value)
    assert low > 0 and "synthetic-alpha scores higher than synthetic-beta" in text
    assert "worse" in text and f"exact sign-flip test over biases, p = {p_ab:.3g}" in text
    assert "one pair compared, unadjusted" in text and "Holm" not in text

    # sample size: closed form, times the design effect (clustered / independent SE)²
    sd = alpha_beta["diff"].std(ddof=1)
    need = int(np.ceil(((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * sd / mean) ** 2))
    se_clustered = sm.OLS(alpha_beta["diff"].to_numpy(), np.ones(len(alpha_beta))).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(alpha_beta["bias"])[0]}).bse[0]
    deff = (se_clustered / (sd / np.sqrt(len(alpha_beta)))) ** 2
    caption = " ".join(c.value for c in at.caption)
    assert f"about {need:,} shared items if they were independent" in caption
    assert f"design effect {deff:.2f}), so about {int(np.ceil(need * deff)):,}" in caption

    found = charts(at)
    forest = found["cmp_forest_chart"]["data"][0]
    per_bias = alpha_beta.groupby("bias")["diff"].mean()
    assert sorted(forest["y"]) == sorted(per_bias.index)
    assert forest["x"] == pytest.approx(sorted(per_bias.to_numpy()))  # sorted by difference
    assert "cmp_pairs_chart" not in found  # every pair is the other mode


def test_forest_plot_and_verdict_follow_the_widgets() -> None:
    at = start()
    before_forest = charts(at)["cmp_forest_chart"]["data"][0]["x"]
    before_verdict = at.success[0].value
    at.selectbox(key="cmp_a").set_value("synthetic-gamma").run()
    after = charts(at)["cmp_forest_chart"]["data"][0]
    gamma_beta = bias_differences("synthetic-gamma", "synthetic-beta")
    assert after["x"] == pytest.approx(sorted(gamma_beta.groupby("bias")["diff"].mean()))
    assert after["x"] != pytest.approx(before_forest)
    text = unescape(at.success[0].value)
    assert text != unescape(before_verdict)
    assert "synthetic-gamma scores lower than synthetic-beta" in text and "better" in text
    assert "synthetic-gamma − synthetic-beta" in charts(at)["cmp_forest_chart"]["layout"][
        "title"]["text"].replace("<br>", " ")  # the title wraps

    at.selectbox(key="cmp_b").set_value("synthetic-gamma").run()
    assert any("two different models" in w.value for w in at.warning)
    assert "cmp_forest_chart" not in charts(at)


def test_every_pair_mode_shows_all_pairs_with_holm_p() -> None:
    at = start()
    at.radio(key="cmp_mode").set_value("Every pair").run()
    assert not at.exception
    found = charts(at)
    assert "cmp_forest_chart" not in found
    pairs = found["cmp_pairs_chart"]["data"][0]
    expected = {}
    for a, b in [("synthetic-alpha", "synthetic-beta"), ("synthetic-alpha", "synthetic-gamma"),
                 ("synthetic-beta", "synthetic-gamma")]:
        expected[f"{a} − {b}"] = clustered(bias_differences(a, b))
    assert sorted(pairs["y"]) == sorted(expected)
    by_pair = dict(zip(pairs["y"], pairs["x"], strict=True))
    for pair, (mean, *_rest) in expected.items():
        assert by_pair[pair] == pytest.approx(mean)
    # 0/1 scores in 6 biases: each pair's exact sign-flip p is at best 2 · 0.5⁶ = 0.031,
    # which Holm over 3 pairs takes to 0.094: six biases cannot order three models
    raw = [sign_flip_p(bias_differences(*pair.split(" − "))) for pair in expected]
    holm = multipletests(raw, method="holm")[1]
    sentences = unescape(" ".join(m.value for m in at.markdown))
    for pair, adjusted in zip(expected, holm, strict=True):
        a, b = pair.split(" − ")
        assert adjusted >= 0.05 and f"cannot tell {a} and {b} apart" in sentences
        assert f"Holm-adjusted p = {adjusted:.3g}" in sentences
    # six equal biases: every verdict says the clusters are few (issue 23, item 3)
    assert sentences.count("Few clusters: only 6 biases (Bell–McCaffrey df 5.0)") == 3
    # both intervals named (issue 37, item 6)
    assert sentences.count("(this pair alone; 95% simultaneous over the 3 pairs "
                           "(Bonferroni):") == 3
    assert "0 of 3 pairs differ" in found["cmp_pairs_chart"]["layout"]["title"]["text"]


def test_rank_intervals_on_request() -> None:
    at = start()
    assert "cmp_rank_chart" not in charts(at)
    at.toggle(key="cmp_ranks").set_value(True).run()
    assert not at.exception
    rank = charts(at)["cmp_rank_chart"]["data"][0]
    by_model = dict(zip(rank["y"], rank["x"], strict=True))
    # mean item score: gamma (planted unbiased) < beta < alpha; lower is better
    trials = load_run(ROOT / "sample_data" / "bias.csv").frame
    order = trials.groupby("model")["score"].mean().sort_values().index
    assert [by_model[m] for m in order] == [1, 2, 3]


def test_single_model_shows_a_message_not_a_crash() -> None:
    at = start(cmp_only_model="synthetic-alpha")
    assert any("at least two models" in i.value for i in at.info)
    assert not at.get("plotly_chart") and not at.metric


def test_judged_panel_switches_metric() -> None:
    # the family's headline first: TDR's per-item target found (issue 37, item 6)
    at = start(cmp_kind="judged")
    at.selectbox(key="cmp_a").set_value("synthetic-detector-sharp")
    at.selectbox(key="cmp_b").set_value("synthetic-detector-timid").run()
    assert at.selectbox(key="cmp_metric").value == "TDR (target found, vulnerable samples)"
    frame = load_run(ROOT / "sample_data" / "judged.csv").frame
    frame = frame[frame["judge"] == sorted(frame["judge"].unique())[0]]
    vulnerable = frame[frame["is_vulnerable"].astype(bool)]
    found = vulnerable.assign(found=vulnerable["target_found"].astype(float)).pivot_table(
        index=["sample", "prompt_type"], columns="model", values="found")
    found_diff = found["synthetic-detector-sharp"] - found["synthetic-detector-timid"]
    assert {m.label: m.value for m in at.metric}["Shared answers"] == f"{len(found_diff):,}"
    assert {m.label: m.value for m in at.metric}["Difference A − B"] == \
        f"{found_diff.mean():+.3f}"
    forest = charts(at)["cmp_forest_chart"]["data"][0]["x"]
    assert forest == pytest.approx(sorted(found_diff.groupby(level="prompt_type").mean()))
    assert "in TDR (target found, vulnerable samples)" in unescape(" ".join(verdicts(at)))

    at.selectbox(key="cmp_metric").set_value("correct verdict").run()
    wide = frame.assign(correct=(frame["said_vulnerable"] == frame["is_vulnerable"])
                        .astype(float)).pivot_table(index=["sample", "prompt_type"],
                                                    columns="model", values="correct")
    diff = wide["synthetic-detector-sharp"] - wide["synthetic-detector-timid"]
    assert {m.label: m.value for m in at.metric}["Difference A − B"] == f"{diff.mean():+.3f}"
    correct_forest = charts(at)["cmp_forest_chart"]["data"][0]["x"]
    assert correct_forest == pytest.approx(sorted(diff.groupby(level="prompt_type").mean()))
    assert forest != pytest.approx(correct_forest)


def test_rank_column_puts_intervals_beside_a_leaderboard() -> None:
    leaderboard = pd.DataFrame({"model": ["b", "a", "c"], "score": [0.2, 0.1, 0.9]})
    ranks = pd.DataFrame({"model": ["a", "b"], "value": [0.1, 0.2], "rank": [1.0, 2.0],
                          "rank_low": [1.0, 1.0], "rank_high": [2.0, 2.0], "n": [10, 10]})
    out, config = compare_view.rank_column(leaderboard, ranks, position=1)
    assert list(out.columns) == ["model", "rank_text", "score"]
    assert out["rank_text"].tolist() == ["2 [1, 2]", "1 [1, 2]", ""]  # c has no rank
    assert "rank_text" in config
    assert compare_view.rank_column(leaderboard, None)[0]["rank_text"].tolist() == [""] * 3


def test_content_hash_follows_the_content() -> None:
    frame = pd.DataFrame({"model": ["a", "b"], "score": [0.1, 0.2]})
    same = frame.copy()
    assert compare_view.content_hash(frame) == compare_view.content_hash(same)
    changed = frame.assign(score=[0.1, 0.3])
    swapped = frame.iloc[::-1].reset_index(drop=True)
    assert compare_view.content_hash(changed) != compare_view.content_hash(frame)
    assert compare_view.content_hash(swapped) != compare_view.content_hash(frame)


def test_verdict_box_adjusts_over_the_pairs_asked_for() -> None:
    # 4 models, 40 items: A − B's raw p is 0.024, Holm's over the six pairs 0.145. Asking for
    # A and B is one comparison: its own p, a direction claimed (issue 23, item 11); asking
    # for every pair adjusts over all six, and A − B is then undecided.
    rng = np.random.default_rng(2)
    base = rng.normal(0.5, 0.3, 40)
    values = {"A": base + 0.35 + rng.normal(0, 1.1, 40), "B": base,
              "C": base + rng.normal(0, 0.3, 40), "D": base + rng.normal(0, 0.3, 40)}
    frame = pd.DataFrame({"model": np.repeat(list(values), 40), "bias": "b",
                          "domain": "d", "condition": "treatment",
                          "item": np.tile(np.arange(40), 4),
                          "score": np.concatenate(list(values.values()))})
    frame["trial"] = frame["item"]  # one item per trial: the bias item key tells them apart
    at = start(cmp_frame=frame.to_csv(index=False))
    at.selectbox(key="cmp_a").set_value("A")
    at.selectbox(key="cmp_b").set_value("B").run()
    assert not at.exception
    raw = {(a, b): stats.ttest_rel(values[a], values[b]).pvalue
           for a, b in [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"),
                        ("C", "D")]}
    holm = multipletests(list(raw.values()), method="holm")[1][0]
    assert raw["A", "B"] < 0.05 <= holm
    text = unescape(" ".join(i.value for i in at.success))
    assert "A scores higher than B" in text and f"p = {raw['A', 'B']:.3g}" in text
    assert "one pair compared, unadjusted" in text
    at.radio(key="cmp_mode").set_value("Every pair").run()
    assert not at.exception
    sentences = unescape(" ".join(m.value for m in at.markdown))
    assert ("cannot tell A and B apart" in sentences
            and f"Holm-adjusted p = {holm:.3g} (paired t test; Holm-adjusted over all 6 pairs "
                "compared)" in sentences)


def test_every_pair_section_of_two_models_is_computed_once_opened(monkeypatch) -> None:
    from kbench_core import compare
    from tests.conftest import clear_app_caches, count_calls

    clear_app_caches()
    calls: dict[str, int] = {}
    count_calls(monkeypatch, compare, "compare_models", calls)
    at = start()
    assert calls["compare_models"] == 0
    assert not any("p (Holm" in str(c) for d in at.dataframe for c in d.value.columns)
    at.session_state["cmp_every"] = True  # the user opens "Every pair of models (3)"
    at.run()
    assert not at.exception
    assert calls["compare_models"] == 1
    pairs = next(d.value for d in at.dataframe if "model_a" in d.value.columns)
    expected = {(a, b): sign_flip_p(bias_differences(a, b)) for a, b in [
        ("synthetic-alpha", "synthetic-beta"), ("synthetic-alpha", "synthetic-gamma"),
        ("synthetic-beta", "synthetic-gamma")]}
    holm = dict(zip(expected, multipletests(list(expected.values()), method="holm")[1],
                    strict=True))
    for row in pairs.itertuples():
        key = (row.model_a, row.model_b) if (row.model_a, row.model_b) in holm else (
            row.model_b, row.model_a)
        # written as the exports write p ("< 1e-12" below that, never 0)
        assert row.p_adjusted == format_value(holm[key], "p")
    clear_app_caches()
