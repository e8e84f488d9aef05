"""Issue 38 (statistics round 3), items 3-8: MCE's simultaneous interval, bounded means over
few units, monotone composite intervals, rank intervals with few clusters, the difficulty
mean's interval and the tier rates' monotone bounds. Each test fails on the code before the
round (checked); coverage claims are checked by small seeded simulations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from kbench_core import calibration, vuln
from tests.test_stats_round2_vuln import design  # the round-2 simulated designs


def covers(low: np.ndarray, high: np.ndarray, truth: float | np.ndarray) -> float:
    return float(np.mean((np.asarray(low) <= truth) & (truth <= np.asarray(high))))


# ------------------------------------------------------------------ item 3: MCE


def mce_runs(reps: int, n: int, gap: float, seed: int, lowest: float = 0.5):
    """``reps`` detectors of ``n`` answers, confidence uniform on [lowest, 1], right with
    probability confidence − gap: every bin's true gap is ``gap``, so the true MCE is too
    (given the confidences drawn, the bin's expected accuracy is its mean confidence − gap)."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(max(lowest, gap), 1.0, (reps, n))
    return conf, rng.random((reps, n)) < conf - gap


def test_mce_interval_by_hand() -> None:
    # Two bins: (0.2, 0.2, 0.2, 0.2) with 1 right, (0.9 x 6) with 6 right. Bonferroni over
    # B = 2 bins: each Wilson interval at 97.5 %. Bin 1: conf 0.2, Wilson(1 of 4) =
    # [L1, U1]; bin 2: conf 0.9, Wilson(6 of 6) = [L2, 1]. MCE = max(|0.25 - 0.2|, 0.1) = 0.1;
    # low = max(dist(0.2, [L1, U1]), dist(0.9, [L2, 1])) = 0 (both hold their confidence);
    # high = max(max(U1 - 0.2, 0.2 - L1), max(1 - 0.9, 0.9 - L2)).
    conf = [0.2] * 4 + [0.9] * 6
    correct = [1, 0, 0, 0] + [1] * 6
    est = calibration.mce(conf, correct, n_bins=2, ci="bootstrap")
    l1, u1 = proportion_confint(1, 4, alpha=0.025, method="wilson")
    l2, _ = proportion_confint(6, 6, alpha=0.025, method="wilson")
    assert float(est) == pytest.approx(0.1)
    assert est.low == 0.0
    assert est.high == pytest.approx(max(u1 - 0.2, 0.2 - l1, 0.1, 0.9 - l2))
    # a bin whose interval excludes its confidence sets the lower end: 0 of 6 at 0.9
    est = calibration.mce([0.9] * 6, [0] * 6, n_bins=2, ci="bootstrap")
    _, u = proportion_confint(0, 6, alpha=0.05, method="wilson")
    assert (float(est), est.low, est.high) == pytest.approx((0.9, 0.9 - u, 0.9))


@pytest.mark.parametrize(("gap", "lowest"), [(0.0, 0.5), (0.1, 0.5), (0.0, 0.0), (0.1, 0.0)])
def test_mce_interval_covers_zero_and_a_real_gap(gap, lowest) -> None:
    # The issue: 500 answers, 10 bins; the bootstrap covered a true MCE of 0 in 0 % of runs
    # and 0.10 in 9-30 %. Now >= 90 % (measured 95-97 % on 300 runs).
    conf, right = mce_runs(120, 500, gap, seed=int(100 * gap + 10 * lowest))
    ests = [calibration.mce(c, y, ci="bootstrap") for c, y in zip(conf, right, strict=True)]
    low = np.array([e.low for e in ests])
    high = np.array([e.high for e in ests])
    value = np.array([float(e) for e in ests])
    assert covers(low, high, gap) >= 0.90
    assert ((low <= value) & (value <= high)).all()  # the plug-in MCE is inside


def test_mce_interval_of_the_tiers_is_clustered_and_covers() -> None:
    # 120 detectors x 250 contracts x 2 prompt types with the same answer (identical verdicts,
    # one confidence per contract): Wilson on the answers would count every contract twice;
    # clustered by sample it is Wilson on the contracts.
    rng = np.random.default_rng(3)
    reps, contracts = 120, 250
    conf = rng.uniform(0.5, 1.0, (reps, contracts))
    right = rng.random((reps, contracts)) < conf - 0.1
    frame = pd.DataFrame({
        "model": np.repeat([f"m{r:03d}" for r in range(reps)], 2 * contracts),
        "sample": np.tile(np.repeat([f"c{c}" for c in range(contracts)], 2), reps),
        "prompt_type": np.tile(["a", "b"], reps * contracts), "judge": "j",
        "is_vulnerable": True, "said_vulnerable": np.repeat(right.ravel(), 2),
        "target_found": False, "confidence": np.repeat(conf.ravel(), 2)})
    table = vuln.tiers(frame, ci="bootstrap", n_boot=20)
    assert covers(table["mce_low"], table["mce_high"], 0.1) >= 0.90
    one = frame[frame["prompt_type"] == "a"]
    single = calibration.mce(one.loc[one["model"] == "m000", "confidence"],
                             one.loc[one["model"] == "m000", "said_vulnerable"],
                             ci="bootstrap")
    row = table.iloc[0]
    # Wilson on each bin's contracts (the jackknife's effective n is G - 1 of G contracts,
    # so a shade wider), not on twice as many answers
    assert row["mce_low"] <= single.low and single.high <= row["mce_high"] < single.high + 0.01
    items = calibration.mce(frame.loc[frame["model"] == "m000", "confidence"],
                            frame.loc[frame["model"] == "m000", "said_vulnerable"],
                            items=frame.loc[frame["model"] == "m000", "sample"],
                            ci="bootstrap")
    assert (items.low, items.high) == pytest.approx((row["mce_low"], row["mce_high"]))
    naive = calibration.mce(frame.loc[frame["model"] == "m000", "confidence"],
                            frame.loc[frame["model"] == "m000", "said_vulnerable"],
                            ci="bootstrap")
    assert naive.high - naive.low < single.high - single.low


# ------------------------------------------------------------------ item 8: monotone rates


def with_wrong(frame: pd.DataFrame, rows: list[int]) -> pd.DataFrame:
    out = frame.copy()
    out.loc[rows, ["said_vulnerable", "target_found"]] = False
    return out


def test_a_tier_rate_lower_bound_never_drops_when_the_score_becomes_perfect() -> None:
    # 40 contracts x 3 prompt types. 120/120: full correlation (Kish's effective number of
    # clusters, 40), Wilson(40 of 40) = [0.912, 1]. 119/120 was Wilson on the jackknife's
    # effective n (about 120): [0.954, 0.9985], above the perfect score's bound.
    perfect = design(1, [3] * 40, 1.0)
    top = vuln.tiers(perfect).iloc[0]
    low40, _ = proportion_confint(40, 40, method="wilson")
    assert top["accuracy_low"] == pytest.approx(low40)
    for wrong in ([0], [0, 1], [0, 3], [0, 1, 2], [5, 50, 100]):
        row = vuln.tiers(with_wrong(perfect, wrong)).iloc[0]
        for rate in ("accuracy", "recall", "tdr"):
            assert row[f"{rate}_low"] <= top[f"{rate}_low"] + 1e-12, (wrong, rate)
            assert row[f"{rate}_low"] <= row[rate] <= row[f"{rate}_high"]
    # and the mirror image at 0: a zero score's upper bound is the lowest
    none = design(1, [3] * 40, 0.0)
    bottom = vuln.tiers(none).iloc[0]
    for right in ([0], [0, 3], [5, 50, 100]):
        changed = none.copy()
        changed.loc[right, ["said_vulnerable", "target_found"]] = True
        row = vuln.tiers(changed).iloc[0]
        assert row["accuracy_high"] >= bottom["accuracy_high"] - 1e-12


def test_one_answer_per_contract_keeps_the_plain_wilson_interval() -> None:
    frame = design(1, [1] * 120, 1.0)
    row = vuln.tiers(with_wrong(frame, [0])).iloc[0]
    assert (row["accuracy_low"], row["accuracy_high"]) == pytest.approx(
        proportion_confint(119, 120, method="wilson"))


def test_fixed_claims_bounds_are_monotone_too() -> None:
    base = design(1, [3] * 40, 1.0).assign(is_vulnerable=False, claims_fixed_target=True)
    top = vuln.fixed_claims(base).iloc[0]
    one = base.copy()
    one.loc[0, "claims_fixed_target"] = False
    row = vuln.fixed_claims(one).iloc[0]
    assert row["fixed_claim_rate_low"] <= top["fixed_claim_rate_low"] + 1e-12


# ------------------------------------------------------------------ item 7: difficulty mean


def difficulty_design(reps: int, sizes: list[int], rates: list[float], prompts: int = 1,
                      seed: int = 0) -> pd.DataFrame:
    """``reps`` detectors (one replicate each) on difficulty tiers of ``sizes`` vulnerable
    contracts, found with probability ``rates`` per tier, the same verdict for each of a
    contract's ``prompts`` prompt types."""
    rng = np.random.default_rng(seed)
    tier = np.repeat(np.arange(len(sizes)), sizes)
    found = rng.random((reps, tier.size)) < np.asarray(rates)[tier]
    model = np.repeat(np.arange(reps), tier.size * prompts)
    contract = np.tile(np.repeat(np.arange(tier.size), prompts), reps)
    return pd.DataFrame({
        "model": [f"m{m:04d}" for m in model],
        "sample": [f"ds_t{tier[k] + 1}_{k:03d}" for k in contract],
        "prompt_type": np.tile(np.arange(prompts), reps * tier.size).astype(str),
        "difficulty": [f"t{tier[k] + 1}" for k in contract], "judge": "j",
        "is_vulnerable": True, "said_vulnerable": True,
        "target_found": np.repeat(found.ravel(), prompts)})


def test_difficulty_mean_interval_by_hand() -> None:
    # Detector "a": t1 4 of 4, t2 1 of 2; mean (1 + 0.5)/2 = 0.75. MOVER over the tiers'
    # Jeffreys intervals, each tier weighing 1/2:
    #   low = 0.75 - sqrt(((1 - l1)/2)^2 + ((0.5 - l2)/2)^2), high = 0.75 + (u2 - 0.5)/2
    # (t1's upper bound is 1 at 4 of 4, so it adds nothing above).
    from scipy import stats as sps

    from tests.test_stats_round2_vuln import difficulty_run

    row = vuln.tiers(difficulty_run()).set_index("model").loc["a"]
    l1 = sps.beta.ppf(0.025, 4.5, 0.5)
    l2, u2 = sps.beta.ppf([0.025, 0.975], 1.5, 1.5)
    assert row["tdr_difficulty_mean"] == 0.75
    assert row["tdr_difficulty_mean_low"] == pytest.approx(
        0.75 - np.hypot((1 - l1) / 2, (0.5 - l2) / 2))
    assert row["tdr_difficulty_mean_high"] == pytest.approx(0.75 + (u2 - 0.5) / 2)


@pytest.mark.parametrize(("rates", "prompts"), [
    ([0.9, 0.7, 0.5, 0.3], 1), ([0.99, 0.97, 0.95, 0.9], 1), ([0.5] * 4, 1),
    ([0.9, 0.7, 0.5, 0.3], 3)])
def test_difficulty_mean_interval_covers(rates, prompts) -> None:
    # Tiers of 20/10/5/3 contracts (the issue): the pooled TDR's interval held the tier mean
    # in about half of the runs where the tiers differ; the mean's own interval >= 92 %.
    table = vuln.tiers(difficulty_design(300, [20, 10, 5, 3], rates, prompts, seed=7))
    truth = float(np.mean(rates))
    assert covers(table["tdr_difficulty_mean_low"], table["tdr_difficulty_mean_high"],
                  truth) >= 0.92
    for rate in ("accuracy", "recall", "precision"):
        assert f"{rate}_difficulty_mean_low" in table
    if rates[0] - rates[-1] > 0.5:  # tiers far apart: the pooled rate is another number
        assert covers(table["tdr_low"], table["tdr_high"], truth) < 0.7


def test_difficulty_mean_interval_reaches_the_page_and_exports() -> None:
    from kbench_core import families
    from tests.test_stats_round2_vuln import difficulty_run

    frame = difficulty_run()
    item = next(i for i in families.items_for("judged") if i.name == "difficulty")
    [(_, exported)] = list(item.objects(frame))
    assert exported["tdr_difficulty_mean_low"].notna().all()
    tiers_item = next(i for i in families.items_for("judged") if i.name == "tiers")
    [(_, leaderboard)] = list(tiers_item.objects(frame))
    assert {"tdr_difficulty_mean_low", "tdr_difficulty_mean_high"} <= set(leaderboard)


# ------------------------------------------------------------------ item 5: composites


def sample_consensus() -> pd.DataFrame:
    from kbench_core import agreement
    from kbench_core.io import load_run

    root = Path(__file__).resolve().parent.parent
    return agreement.consensus(load_run(root / "sample_data" / "judged.csv").frame)


SHARP = "synthetic-detector-sharp"


def test_composite_intervals_move_with_the_detector() -> None:
    # The sample's perfect detector, then missing 1, 2, 3 of its 28 targets (all prompt
    # types of a contract): before, SUI 0.940 [0.821, 0.982] and, one target missed,
    # 0.931 [0.910, 0.940] (the lower bound rose as the detector got worse).
    frame = sample_consensus()
    found = frame[(frame["model"] == SHARP) & frame["target_found"].astype(bool)]
    contracts = list(dict.fromkeys(found["sample"]))
    rows = []
    for missed in range(4):
        changed = frame.copy()
        lost = (changed["model"] == SHARP) & changed["sample"].isin(contracts[:missed])
        changed.loc[lost, "target_found"] = False
        table = vuln.tiers(changed, ci="bootstrap", n_boot=50).set_index("model")
        rows.append(table.loc[SHARP])
    for name in ("sui", "tus", "tus_geometric"):
        for worse, better in zip(rows[1:], rows[:-1], strict=True):
            assert worse[name] < better[name]
            assert worse[f"{name}_low"] <= better[f"{name}_low"] + 1e-12, name
            assert worse[f"{name}_high"] <= better[f"{name}_high"] + 1e-12, name
        for row in rows:
            assert row[f"{name}_low"] < row[name] <= row[f"{name}_high"], name
    # LGI = accuracy - TDR rises as targets are missed (the answers stay right)
    for worse, better in zip(rows[1:], rows[:-1], strict=True):
        assert worse["lgi_low"] >= better["lgi_low"] - 1e-12


def test_sui_interval_by_hand() -> None:
    # SUI's interval is the weighted mean of its components' bounds (MOVER, correlation 1)
    table = vuln.tiers(sample_consensus(), ci="bootstrap", n_boot=20)
    row = table.set_index("model").loc["synthetic-detector-eager"]
    reasoning_low = np.mean([row[f"mean_{k}_low"] for k in ("rcir", "ava", "fsv")])
    low = (0.25 * row["f2_low"] + 0.25 * row["tdr_low"] + 0.15 * row["finding_precision_low"]
           + 0.25 * reasoning_low + 0.10 * (1 - row["ece_high"]))
    assert row["sui_low"] == pytest.approx(low)


def sui_design(reps: int, a: float, b: float, c: float, prompts: int = 1, *, n_vul: int = 28,
               n_safe: int = 12, seed: int = 0) -> pd.DataFrame:
    """Detectors that say "vulnerable" on a vulnerable contract with probability a, find its
    target with probability b when they do, and on a safe contract with probability c;
    reasoning (rcir) Beta(8, 2) on found targets; confidence 0.9 everywhere."""
    rng = np.random.default_rng(seed)
    n = n_vul + n_safe
    vulnerable = np.arange(n) < n_vul
    said = np.where(vulnerable, rng.random((reps, n)) < a, rng.random((reps, n)) < c)
    found = said & vulnerable & (rng.random((reps, n)) < b)
    rcir = np.where(found, rng.beta(8, 2, (reps, n)), np.nan)

    def spread(x: np.ndarray) -> np.ndarray:
        return np.repeat(x.ravel(), prompts)

    return pd.DataFrame({
        "model": np.repeat([f"m{r:04d}" for r in range(reps)], n * prompts),
        "sample": np.tile(np.repeat([f"c{k:03d}" for k in range(n)], prompts), reps),
        "prompt_type": np.tile(np.arange(prompts), reps * n).astype(str), "judge": "j",
        "is_vulnerable": np.tile(np.repeat(vulnerable, prompts), reps),
        "said_vulnerable": spread(said), "target_found": spread(found), "rcir": spread(rcir),
        "confidence": 0.9})


def sui_truth(a: float, b: float, c: float, n_vul: int = 28, n_safe: int = 12) -> dict:
    tp, fn, fp = n_vul * a, n_vul * (1 - a), n_safe * c
    f2 = 5 * tp / (5 * tp + 4 * fn + fp)
    tdr = a * b
    accuracy = (tp + n_safe * (1 - c)) / (n_vul + n_safe)
    ece = abs(accuracy - 0.9)  # one bin: every confidence is 0.9
    # no findings: finding precision 1 by BlockBench's convention; reasoning E[Beta(8, 2)]
    sui = 0.25 * f2 + 0.25 * tdr + 0.15 * 1.0 + 0.25 * 0.8 + 0.10 * (1 - ece)
    return {"sui": sui, "f2": f2, "tdr": tdr, "lgi": accuracy - tdr, "tus": tdr * 0.8}


@pytest.mark.parametrize(("a", "b", "c", "prompts"), [
    (0.98, 0.98, 0.02, 1), (0.98, 0.98, 0.02, 3), (0.8, 0.7, 0.2, 1), (0.995, 0.995, 0.0, 1)])
def test_composite_intervals_cover_near_the_boundary(a, b, c, prompts) -> None:
    table = vuln.tiers(sui_design(200, a, b, c, prompts, seed=5), ci="bootstrap", n_boot=20)
    truth = sui_truth(a, b, c)
    for name in ("sui", "tus", "lgi"):
        assert covers(table[f"{name}_low"], table[f"{name}_high"], truth[name]) >= 0.93, name
    if (a, c) != (0.995, 0.0):  # there F2 near 1 meets Wilson's known dip (docs)
        assert covers(table["f2_low"], table["f2_high"], truth["f2"]) >= 0.93


# ------------------------------------------------------------------ item 6: rank intervals


def identical_models(k: int, clusters: int, per: int, seed: int, *,
                     binary: bool = False) -> pd.DataFrame:
    """``k`` identical models on ``clusters`` clusters of ``per`` items: a shared cluster
    and item difficulty, a model × cluster effect and noise of mean 0 (0/1 outcomes by a
    logistic draw when ``binary``)."""
    rng = np.random.default_rng(seed)
    c = np.repeat(np.arange(clusters), per)
    base = rng.normal(0, 1, clusters)[c] + rng.normal(0, 0.5, c.size)
    values = (base[:, None] + rng.normal(0, 0.5, (clusters, k))[c]
              + rng.normal(0, 1, (c.size, k)))
    if binary:
        values = (rng.random(values.shape) < 1 / (1 + np.exp(-values))).astype(float)
    return pd.DataFrame({"item": np.tile(np.arange(c.size), k), "cl": np.tile(c, k),
                         "model": np.repeat([f"m{j}" for j in range(k)], c.size),
                         "v": values.T.ravel()})


def apart(ranks: pd.DataFrame) -> bool:
    low, high = ranks["rank_low"].to_numpy(), ranks["rank_high"].to_numpy()
    return bool((high[:, None] < low[None, :]).any())


@pytest.mark.parametrize(("k", "clusters", "per", "binary"), [
    (3, 4, 10, False), (3, 4, 10, True), (5, 6, 5, False)])
def test_rank_intervals_keep_identical_models_together_with_few_clusters(
        k, clusters, per, binary) -> None:
    # The issue: 11.4 % of runs set identical models apart with 4 clusters x 10 items
    # (measured here before: 17 %, 12 %, 18.5 % on 200 runs); now <= 5 % (0-1 %).
    from kbench_core.compare import rank_intervals

    runs = 80
    separated = sum(apart(rank_intervals(identical_models(k, clusters, per, seed, binary=binary),
                                         "v", item="item", cluster="cl",
                                         lower_is_better=False))
                    for seed in range(runs))
    assert separated / runs <= 0.05


def test_rank_intervals_from_holm_decisions_by_hand() -> None:
    # Three models 10 clusters x 4 items; C is 1 above B above A on every item plus noise
    # (clear), D equals C: the Holm-decided pairs give A [4, 4], B [3, 3], C and D [1, 2].
    from kbench_core.compare import compare_models, rank_intervals

    rng = np.random.default_rng(2)
    c = np.repeat(np.arange(10), 4)
    base = rng.normal(0, 1, c.size)
    shift = {"A": 0.0, "B": 1.0, "C": 2.0, "D": 2.0}
    frame = pd.DataFrame({
        "item": np.tile(np.arange(c.size), 4), "cl": np.tile(c, 4),
        "model": np.repeat(list(shift), c.size),
        "v": np.concatenate([base + s + rng.normal(0, 0.1, c.size) for s in shift.values()])})
    ranks = rank_intervals(frame, "v", item="item", cluster="cl",
                           lower_is_better=False).set_index("model")
    pairs = compare_models(frame, "v", item="item", cluster="cl", correction="holm")
    decided = pairs[pairs["direction"] != "undecided"]
    assert len(decided) == 5 and ranks["n_decided"].iloc[0] == 5
    assert ranks.loc["A", ["rank_low", "rank_high"]].tolist() == [4.0, 4.0]
    assert ranks.loc["B", ["rank_low", "rank_high"]].tolist() == [3.0, 3.0]
    assert ranks.loc["C", ["rank_low", "rank_high"]].tolist() == [1.0, 2.0]
    assert ranks.loc["D", ["rank_low", "rank_high"]].tolist() == [1.0, 2.0]


# ------------------------------------------------------------------ item 4: bounded means


def skewed_studies(reps: int, studies: int, seed: int, *, a: float = 20.0,
                   b: float = 0.5) -> pd.DataFrame:
    """``reps`` configurations of ``studies`` studies whose PAS is Beta(a, b) (near 1 for the
    default, mean a/(a + b) = 0.9756): one finding of one test each, the human posterior 1,
    so the study's PAS is the agent's posterior (PAS = pi_h pi_a + (1 - pi_h)(1 - pi_a))."""
    rng = np.random.default_rng(seed)
    pas_values = rng.beta(a, b, (reps, studies)).ravel()
    return pd.DataFrame({
        "model": np.repeat([f"c{r:04d}" for r in range(reps)], studies),
        "study": np.tile([f"s{s}" for s in range(studies)], reps), "finding": "f1",
        "test": "t1", "human_pi": 1.0, "agent_pi": pas_values, "n_eff": 100.0,
        "pas": pas_values})


@pytest.mark.parametrize("studies", [4, 6, 12])
def test_mean_pas_over_few_studies_covers(studies) -> None:
    # Plain t over 4-6 studies of Beta(20, 0.5): 0.82-0.84 (the issue), 0.88 with 12.
    from kbench_core import replication

    truth = 20 / 20.5
    frame = skewed_studies(300, studies, seed=studies)
    model = replication.pas(frame[["model", "study", "finding", "test", "human_pi",
                                   "agent_pi", "n_eff"]]).model
    assert covers(model["pas_low"], model["pas_high"], truth) >= 0.92
    board = replication.summary_leaderboard(frame[["model", "study", "pas"]])
    assert covers(board["mean_study_pas_low"], board["mean_study_pas_high"], truth) >= 0.92
    # the same number, the same interval, in both tables
    both = model.set_index("model")[["pas_low", "pas_high"]].join(
        board.set_index("model")[["mean_study_pas_low", "mean_study_pas_high"]])
    np.testing.assert_allclose(both["pas_low"], both["mean_study_pas_low"], atol=1e-9)


def test_bounded_mean_interval_is_wilsons_below_30_values() -> None:
    from kbench_core.stats import bounded_mean_interval

    # 4 values spread over [0, 1] (mean 0.5, sd 0.42): Wilson(2 of 4) = [0.150, 0.850];
    # round 2's union with the t interval (t(3) * 0.42 / 2 = 0.67) was [0, 1]
    values = np.array([0.0, 0.3, 0.7, 1.0])
    low, high = bounded_mean_interval(values.mean(), values.std(ddof=1), 4, bounds=(0, 1))
    assert (float(low), float(high)) == pytest.approx(proportion_confint(2, 4, method="wilson"))
    # on [0, cap] the share is rescaled: a mean BMS of 0.5 on [0, 2] over 5 biases
    low, high = bounded_mean_interval(0.5, 0.3, 5, bounds=(0.0, 2.0))
    wl, wh = proportion_confint(0.25 * 5, 5, method="wilson")
    assert (float(low), float(high)) == pytest.approx((2 * wl, 2 * wh))


def test_fingerprint_and_susceptibility_table_show_one_interval() -> None:
    # synthetic-alpha's susceptibility was [0.359, 0.629] in fingerprint.models (t) and
    # [0.184, 0.809] in susceptibility_table: the same number with two intervals.
    from kbench_core import kahne
    from kbench_core.families.bias import susceptibility_table
    from kbench_core.io import load_run

    root = Path(__file__).resolve().parent.parent
    fingerprint = kahne.fingerprint(load_run(root / "sample_data" / "bias.csv").frame)
    models = fingerprint.models.set_index("model")
    table = susceptibility_table(fingerprint).set_index("model")
    for column in ("susceptibility", "susceptibility_low", "susceptibility_high"):
        np.testing.assert_allclose(models[column], table.loc[models.index, column])
    alpha = models.loc["synthetic-alpha"]
    wl, wh = proportion_confint(alpha["susceptibility"] * 6, 6, method="wilson")  # cap 1
    assert (alpha["susceptibility_low"], alpha["susceptibility_high"]) == pytest.approx((wl, wh))


# ------------------------------------------------------------------ item 8: words


def test_items_needed_sentence_says_clusters_in_words() -> None:
    # A cluster column named "clu" read "about 1,733 clus of this run's mean size".
    from kbench_core import compare

    rng = np.random.default_rng(8)
    groups = np.repeat(np.arange(12), 5)
    diff = rng.normal(0, 0.3, 12)[groups] + rng.normal(0.05, 0.3, 60)
    frame = pd.DataFrame({"item": np.tile(np.arange(60), 2), "clu": np.tile(groups, 2),
                          "model": np.repeat(["A", "B"], 60),
                          "value": np.concatenate([diff, np.zeros(60)])})
    verdict = compare.compare_pair(frame, "value", "A", "B", item="item", cluster="clu").verdict
    assert "clusters of this run's mean size" in verdict and " clus " not in verdict
    from kbench_core.words import unit_plural

    assert unit_plural("sample") == "samples" and unit_plural("group") == "groups"


def test_latex_bolds_a_best_row_only_when_its_interval_is_clear() -> None:
    # The app's LaTeX download and `kbench metrics --format latex` both write through
    # export.to_latex: a best point estimate whose interval overlaps the runner-up's was bold.
    from kbench_core.export import table_bytes

    frame = pd.DataFrame({"model": ["a", "b", "c"], "sui": [0.80, 0.78, 0.50],
                          "sui_low": [0.70, 0.68, 0.40], "sui_high": [0.88, 0.86, 0.60]})
    text = table_bytes(frame, "latex", best={"sui": "max"}).decode()
    assert "textbf" not in text
    clear = frame.assign(sui_low=[0.75, 0.60, 0.40], sui_high=[0.85, 0.70, 0.60])
    text = table_bytes(clear, "latex", best={"sui": "max"}).decode()
    assert r"\textbf{0.8000 [0.7500, 0.8500]}" in text and text.count("textbf") == 1
    assert "**0.8000 [0.7500, 0.8500]**" in table_bytes(clear, "markdown",
                                                         best={"sui": "max"}).decode()
