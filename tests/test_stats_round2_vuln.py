"""Issue 23 items 4 and 10, issue 24 item 4: tier intervals clustered by sample (coverage by
simulation), the debiased ECE and its interval, and BlockBench's difficulty tiers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from kbench_core import families, vuln

# ------------------------------------------------------------------ simulated designs


def design(reps: int, sizes: list[int], p: float, *, identical: bool = True,
           seed: int = 0) -> pd.DataFrame:
    """``reps`` independent replicates (one "model" each) of a run whose contracts have
    ``sizes`` prompt types; every contract is vulnerable and each answer is right (said
    vulnerable, target found) with probability ``p``: the same verdict for all of a
    contract's prompt types (``identical``) or independent ones. ``rcir`` is a score in
    [0, 1] with mean 0.5 shared by the contract's found answers (or independent)."""
    rng = np.random.default_rng(seed)
    sizes_a = np.asarray(sizes)
    per_rep = int(sizes_a.sum())
    model = np.repeat(np.arange(reps), per_rep)
    contract = np.tile(np.repeat(np.arange(sizes_a.size), sizes_a), reps)
    prompt = np.tile(np.concatenate([np.arange(k) for k in sizes_a]), reps)
    if identical:
        right = (rng.random((reps, sizes_a.size)) < p)[model, contract]
        score = rng.random((reps, sizes_a.size))[model, contract]
    else:
        right = rng.random(model.size) < p
        score = rng.random(model.size)
    return pd.DataFrame({
        "model": pd.Categorical([f"m{m:04d}" for m in model]),
        "sample": [f"c{c:03d}" for c in contract], "prompt_type": [f"p{k}" for k in prompt],
        "judge": "j", "is_vulnerable": True, "said_vulnerable": right, "target_found": right,
        "rcir": np.where(right, score, np.nan)})


def covers(table: pd.DataFrame, metric: str, truth: float) -> float:
    return float(((table[f"{metric}_low"] <= truth) & (truth <= table[f"{metric}_high"]))
                 .mean())


# ------------------------------------------------------------------ item 4: clustered rates


def test_identical_prompt_types_are_one_answer_per_contract() -> None:
    # 40 contracts x 3 prompt types with identical verdicts: the jackknife over contracts of
    # the rate (Y - 3 z_c) / 117 is p(1 - p)/39, so the effective n is 39 (not 120): Wilson
    # on 39 answers. Was Wilson on 120 (a third too narrow: coverage 77 %).
    frame = design(1, [3] * 40, 0.7, seed=5)
    table = vuln.tiers(frame).iloc[0]
    p = table["accuracy"]
    assert p == pytest.approx(frame.groupby("sample")["said_vulnerable"].first().mean())
    low, high = proportion_confint(p * 39, 39, method="wilson")
    assert (table["accuracy_low"], table["accuracy_high"]) == pytest.approx((low, high))
    assert (table["tdr_low"], table["tdr_high"]) == pytest.approx((low, high))
    # The mean reasoning score: the t interval of the contract means (scipy), G - 1 = df.
    means = frame[frame["target_found"]].groupby("sample")["rcir"].mean()
    low, high = sps.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=sps.sem(means))
    assert table["mean_rcir"] == pytest.approx(means.mean())
    assert (table["mean_rcir_low"], table["mean_rcir_high"]) == pytest.approx(
        (max(low, 0.0), min(high, 1.0)))


def test_one_answer_per_contract_keeps_the_plain_intervals() -> None:
    frame = design(1, [1] * 50, 0.6, seed=2)
    table = vuln.tiers(frame).iloc[0]
    k = int(frame["said_vulnerable"].sum())
    assert (table["accuracy_low"], table["accuracy_high"]) == pytest.approx(
        proportion_confint(k, 50, method="wilson"))
    scores = frame["rcir"].dropna()
    low, high = sps.t.interval(0.95, len(scores) - 1, loc=scores.mean(),
                               scale=sps.sem(scores))
    assert (table["mean_rcir_low"], table["mean_rcir_high"]) == pytest.approx(
        (max(low, 0.0), min(high, 1.0)))


@pytest.mark.parametrize(("sizes", "p", "identical", "least"), [
    ([3] * 40, 0.7, True, 0.92),        # the design (was 0.77)
    ([3] * 40, 0.7, False, 0.92),       # independent prompt types: as before
    ([1] * 120, 0.7, True, 0.91),       # one answer per contract: the same intervals
    ([3] * 40, 0.03, True, 0.92),       # near 0 (was 0.89)
    ([3] * 40, 0.97, True, 0.92),       # near 1
    ([3] * 8, 0.5, True, 0.88),         # few contracts (was 0.67)
    ([40] + [2] * 9, 0.5, True, 0.90),  # one contract with most answers (was 0.00)
    (list(range(1, 6)) * 8, 0.6, True, 0.92),  # unequal sizes 1..5 (was 0.70)
])
def test_rate_intervals_cover_when_answers_share_a_contract(sizes, p, identical,
                                                            least) -> None:
    table = vuln.tiers(design(300, sizes, p, identical=identical, seed=1))
    for metric in ("accuracy", "tdr", "recall"):
        assert covers(table, metric, p) >= least, (metric, covers(table, metric, p))


def test_mean_intervals_cover_when_answers_share_a_contract() -> None:
    for sizes in ([3] * 40, list(range(1, 6)) * 8):
        table = vuln.tiers(design(300, sizes, 0.8, seed=3))
        assert covers(table, "mean_rcir", 0.5) >= 0.90  # was 0.75 and 0.69


def test_fixed_claims_are_clustered_by_sample() -> None:
    # 30 fixed contracts x 3 prompt types with identical claims: Wilson on 29 (the jackknife
    # of identical triples, as above with 30 contracts), not on 90 answers.
    rng = np.random.default_rng(0)
    claims = np.repeat(rng.random(30) < 0.4, 3)
    frame = pd.DataFrame({"model": "m", "judge": "j", "sample": np.repeat(
        [f"f{i}" for i in range(30)], 3), "prompt_type": ["a", "b", "c"] * 30,
        "is_vulnerable": False, "said_vulnerable": claims, "target_found": False,
        "claims_fixed_target": claims})
    row = vuln.fixed_claims(frame).iloc[0]
    p = claims.mean()
    assert (row["fixed_claim_rate_low"], row["fixed_claim_rate_high"]) == pytest.approx(
        proportion_confint(p * 29, 29, method="wilson"))


# ------------------------------------------------------------------ issue 24 item 4: difficulty


def test_reader_sets_difficulty_from_sample_ids() -> None:
    from kbench_core.native.blockbench import difficulty

    ids = pd.Series(["ds_t1_001", "ds_t4_014", "df_tc_001", "tc_001", "gs_t2", "ds_t12_003"])
    assert difficulty(ids).tolist() == ["t1", "t4", None, None, None, "t12"]
    assert difficulty(pd.Series(["tc_001", "gs_002"])) is None  # no column then


def test_multi_judge_records_carry_difficulty() -> None:
    from pathlib import Path

    from kbench_core.io import load_run

    path = Path(__file__).parent / "data" / "formats" / "blockbench_multi_judge_records.json"
    frame = load_run(path).frame
    by_sample = frame.drop_duplicates("sample").set_index("sample")["difficulty"]
    assert by_sample.to_dict() == {"ds_t1_001": "t1", "ds_t2_002": "t2", "df_tc_001": None}


def difficulty_run() -> pd.DataFrame:
    """Two detectors on tiers t1 (4 vulnerable contracts) and t2 (2), one prompt type: "a"
    finds 4/4 and 1/2, "b" finds 2/4 and 2/2."""
    found = {"a": [1, 1, 1, 1, 1, 0], "b": [1, 1, 0, 0, 1, 1]}
    samples_ = ["ds_t1_001", "ds_t1_002", "ds_t1_003", "ds_t1_004", "ds_t2_001", "ds_t2_002"]
    rows = [dict(model=m, sample=s, judge="j", difficulty=s.split("_")[1],
                 is_vulnerable=True, said_vulnerable=True, target_found=bool(f))
            for m, values in found.items() for s, f in zip(samples_, values, strict=True)]
    return pd.DataFrame(rows)


def test_tiers_by_difficulty_and_their_mean() -> None:
    frame = difficulty_run()
    per = vuln.tiers(frame, by=("model", "difficulty")).set_index(["model", "difficulty"])
    assert per["tdr"].to_dict() == {("a", "t1"): 1.0, ("a", "t2"): 0.5, ("b", "t1"): 0.5,
                                    ("b", "t2"): 1.0}
    table = vuln.tiers(frame).set_index("model")
    # pooled over answers: a 5/6, b 4/6; mean of the tiers: a (1 + .5)/2, b (.5 + 1)/2
    assert table["tdr"].to_dict() == pytest.approx({"a": 5 / 6, "b": 4 / 6})
    assert table["tdr_difficulty_mean"].to_dict() == {"a": 0.75, "b": 0.75}
    assert table["n_difficulties"].tolist() == [2, 2]
    cols = list(table.columns)
    assert cols.index("tdr_difficulty_mean") == cols.index("tdr_high") + 1
    assert "tdr_difficulty_mean" not in vuln.tiers(frame.drop(columns="difficulty"))


def test_difficulty_mean_skips_a_tier_where_the_rate_is_undefined() -> None:
    frame = difficulty_run()
    extra = frame[frame["sample"] == "ds_t2_001"].assign(sample="ds_t3_001", difficulty="t3",
                                                         is_vulnerable=False,
                                                         said_vulnerable=False,
                                                         target_found=False)
    table = vuln.tiers(pd.concat([frame, extra], ignore_index=True)).set_index("model")
    assert table["tdr_difficulty_mean"].to_dict() == {"a": 0.75, "b": 0.75}  # t3 has no TDR
    assert table["n_difficulties"].tolist() == [3, 3]


# The paper's DS "Avg" (mean of the four majority tier TDRs), from the real gen-2 records when
# they are present: in $KBENCH_REAL_DATA, sample_data/real or ../shared/data/real, a folder
# whose name holds "blockbench" with multi-judge records (JSON lists, optionally .gz).
PUBLISHED_DS_AVG = {("claude",): 86.5, ("gemini",): 73.9,
                    ("gpt-5.2", "gpt-5-2", "gpt_5_2", "gpt52"): 62.9}


def _gen2_files() -> list:
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    bases = [os.environ.get("KBENCH_REAL_DATA", ""), root / "sample_data" / "real",
             root.parent / "shared" / "data" / "real"]
    found = []
    for base in bases:
        if base and Path(base).is_dir():
            for folder in Path(base).iterdir():
                if folder.is_dir() and "blockbench" in folder.name.lower():
                    found += sorted(p for p in folder.rglob("*")
                                    if p.name.endswith((".json", ".json.gz")))
    return found


@pytest.mark.skipif(not _gen2_files(), reason="the real BlockBench gen-2 records are not here")
def test_real_gen2_difficulty_mean_is_the_papers_ds_avg() -> None:
    import inspect

    from kbench_core.agreement import consensus
    from kbench_core.io import RunFormatError, load_run

    frames = []
    for path in _gen2_files():
        try:
            run = load_run(path)
        except (RunFormatError, ValueError, OSError):
            continue
        if run.kind == "judged" and "difficulty" in run.frame:
            frames.append(run.frame)
    assert frames, "no gen-2 DS records loaded"
    judged = pd.concat(frames, ignore_index=True)
    judged = judged[judged["difficulty"].notna()]
    conventions = {"missing": {}}
    if "failed_as" in inspect.signature(consensus).parameters:
        conventions["not_found"] = {"failed_as": "not_found"}
    reproduced = {}
    for name, options in conventions.items():
        table = vuln.tiers(consensus(judged, **options))
        means = dict(zip(table["model"].astype(str).str.lower(),
                         100 * table["tdr_difficulty_mean"], strict=True))
        reproduced[name] = all(
            any(round(value, 1) == published for model, value in means.items()
                if any(k in model for k in keys))
            for keys, published in PUBLISHED_DS_AVG.items())
    assert any(reproduced.values()), reproduced


# ------------------------------------------------------------------ item 10: debiased ECE


def kumar_l2_squared(conf: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> float:
    """Kumar, Liang & Ma (2019)'s unbiased_square_ce, one bin at a time as their library
    writes it (bins right-closed, 0 in the first)."""
    edges = np.linspace(0, 1, n_bins + 1)
    bins = np.searchsorted(edges[1:-1], conf, side="left")
    total = 0.0
    for b in range(n_bins):
        y, c = correct[bins == b], conf[bins == b]
        if len(y) < 2:
            continue
        total += len(y) / len(conf) * ((y.mean() - c.mean()) ** 2
                                       - y.mean() * (1 - y.mean()) / (len(y) - 1))
    return total


def calibrated_run(groups: int, n: int, seed: int, gap: float = 0.0) -> pd.DataFrame:
    """``groups`` detectors of ``n`` answers each (one per contract), confidence uniform on
    [0.5, 1], right with probability confidence − ``gap`` (0: calibrated)."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(0.5, 1.0, (groups, n))
    right = rng.random((groups, n)) < conf - gap
    return pd.DataFrame({
        "model": np.repeat([f"m{g:03d}" for g in range(groups)], n),
        "sample": [f"s{g}_{i}" for g in range(groups) for i in range(n)], "judge": "j",
        "is_vulnerable": True, "said_vulnerable": right.ravel(), "target_found": False,
        "confidence": conf.ravel()})


def test_ece_l2_debiased_is_kumars_estimator() -> None:
    from kbench_core import calibration

    rng = np.random.default_rng(4)
    conf = rng.uniform(0, 1, 300)
    correct = (rng.random(300) < conf ** 1.5).astype(float)
    squared = kumar_l2_squared(conf, correct)
    est = calibration.ece_l2_debiased(conf, correct)
    assert float(est) == pytest.approx(np.sign(squared) * np.sqrt(abs(squared)))
    frame = calibrated_run(1, 300, 4)
    frame["confidence"], frame["said_vulnerable"] = conf, correct.astype(bool)
    table = vuln.tiers(frame)
    assert table["ece_l2_debiased"].iloc[0] == pytest.approx(float(est))
    assert table["ece"].iloc[0] == pytest.approx(float(calibration.ece(conf, correct)))


@pytest.mark.parametrize(("gap", "least"), [(0.0, 0.90), (0.1, 0.90)])
def test_debiased_interval_covers_a_calibrated_detector(gap, least) -> None:
    # 150 detectors of 500 answers in 10 bins; the truth is the gap itself (every bin's gap
    # is `gap`, so the l2 and l1 errors are both `gap`). The plug-in ECE's interval misses a
    # calibrated detector every time; the debiased one covers it.
    table = vuln.tiers(calibrated_run(150, 500, 11, gap), ci="bootstrap", n_boot=200)
    debiased = covers(table, "ece_l2_debiased", gap)
    assert debiased >= least, debiased
    if gap == 0.0:
        # the plug-in's bootstrap interval covered 0 in none of the runs (what the issue
        # found); since issue 38 its interval is the simultaneous one, which covers
        assert covers(table, "ece", 0.0) >= least
        assert table["ece"].mean() > 0.02 > abs(table["ece_l2_debiased"].mean())


def test_difficulty_table_of_the_page_and_exports() -> None:
    from kbench_core.families.judged import difficulty_tdr

    frame = difficulty_run()
    table = difficulty_tdr(vuln.tiers(frame), vuln.tiers(frame, by=("model", "difficulty")))
    row = table.set_index("model").loc["a"]
    assert (row["tdr_t1"], row["tdr_t2"], row["n_vulnerable_t1"], row["n_vulnerable_t2"]) == (
        1.0, 0.5, 4, 2)
    assert row["tdr_difficulty_mean"] == 0.75 and row["tdr"] == pytest.approx(5 / 6)
    item = next(i for i in families.items_for("judged") if i.name == "difficulty")
    [(stem, exported)] = list(item.objects(frame))
    assert stem.endswith("j") and exported["tdr_difficulty_mean"].tolist() == [0.75, 0.75]
    assert list(next(i for i in families.items_for("judged") if i.name == "difficulty")
                .objects(frame.drop(columns="difficulty"))) == []


def test_a_composite_bootstrap_never_prints_a_zero_width_interval() -> None:
    """The sample's perfect detector: every bootstrap replicate gives SUI 0.94 and TUS 0.8,
    and the percentile interval was [0.94, 0.94] (issue 23 item 7). It was then the
    Wilson-type bound of a value in [0, 1] on its 40 samples; since issue 38 item 5 it is
    built from the components' intervals (MOVER; tests/test_stats_round3.py), which have
    width too."""
    from pathlib import Path

    from kbench_core import agreement
    from kbench_core.io import load_run

    run = load_run(Path(__file__).resolve().parent.parent / "sample_data" / "judged.csv")
    table = vuln.tiers(agreement.consensus(run.frame), ci="bootstrap", n_boot=200)
    sharp = table.set_index("model").loc["synthetic-detector-sharp"]
    for name in ("sui", "tus"):
        low, high = sharp[f"{name}_low"], sharp[f"{name}_high"]
        assert low < sharp[name] < high, name
    for name in ("sui", "tus", "tus_geometric", "lgi", "ece", "mce", "f1", "f2"):
        width = table[f"{name}_high"] - table[f"{name}_low"]
        assert not (width <= 1e-12).any(), (name, width.tolist())
