"""The judge audit (kbench_core.audit): the sample, the labels, each judge's accuracy, the
corrected rates and their coverage, the labels needed, where the judge goes wrong, the store.

Reference values are worked by hand in the tests or computed by scikit-learn, statsmodels and
ppi-python inside them; intervals are checked by small coverage simulations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from kbench_core import audit
from kbench_core.audit.errors import judge_errors, overruled
from kbench_core.audit.estimate import _judge_only, _poststratified
from kbench_core.audit.sampling import allocate
from kbench_core.audit.store import LabelStore
from kbench_core.io import load_run
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "judged.csv"
KEY = ["sample", "model", "prompt_type"]


# ---------------------------------------------------------------------------- builders


def judged(truth: np.ndarray, decisions: dict[str, np.ndarray], *, models=None,
           contracts=None, prompts=None) -> pd.DataFrame:
    """A judged frame: one row per item and judge; ``truth`` only makes the reviewers' labels
    (it is not a column), every item is about a vulnerable contract."""
    n = len(truth)
    models = np.asarray(models if models is not None else ["m"] * n, dtype=object)
    contracts = np.asarray(contracts if contracts is not None else
                           [f"c{i:04d}" for i in range(n)], dtype=object)
    prompts = np.asarray(prompts if prompts is not None else ["direct"] * n, dtype=object)
    parts = [pd.DataFrame({"sample": contracts, "model": models, "prompt_type": prompts,
                           "judge": name, "is_vulnerable": True, "said_vulnerable": True,
                           "target_found": pd.array(values, dtype="boolean")})
             for name, values in decisions.items()]
    return pd.concat(parts, ignore_index=True)


def labels_for(frame_items: pd.DataFrame, truth: pd.Series, reviewer: str = "ann"
               ) -> pd.DataFrame:
    """Labels of ``frame_items`` (item key columns) by ``reviewer``, from ``truth`` (indexed
    like ``frame_items``)."""
    out = frame_items[KEY].astype(str).copy()
    out["target_found"] = pd.array(truth.to_numpy(bool), dtype="boolean")
    out["reviewer"] = reviewer
    out["labelled_at"] = ""
    out["note"] = ""
    out["run_sha256"] = ""
    return out.reset_index(drop=True)


@pytest.fixture(scope="module")
def sample_run():
    return load_run(SAMPLE)


# ------------------------------------------------------------------------------ sample


def test_allocation_gives_every_stratum_an_item_then_follows_the_square_root() -> None:
    # 10 items over strata of 100, 4 and 25: one each, then 7 in proportion to 10 : 2 : 5
    # (7 x 10/17 = 4.12, 7 x 2/17 = 0.82, 7 x 5/17 = 2.06 -> 4, 0, 2, and the remainder (0.82
    # is the largest fraction) to the second stratum): 1+4+1, 1+1, 1+2.
    assert allocate(np.array([100, 4, 25]), 10).tolist() == [6, 1, 3]
    assert allocate(np.array([3, 1]), 4).tolist() == [3, 1]  # capped at each size
    assert allocate(np.array([5, 5, 5]), 2).sum() == 2  # fewer items than strata
    with pytest.raises(ValueError):
        allocate(np.array([1, 2]), 4)


@given(st.lists(st.integers(0, 40), min_size=1, max_size=8), st.data())
def test_allocation_is_within_every_stratum_and_sums_to_n(sizes, data) -> None:
    sizes = np.array(sizes)
    n = data.draw(st.integers(0, int(sizes.sum())))
    out = allocate(sizes, n)
    assert out.sum() == n and (out >= 0).all() and (out <= sizes).all()
    if n >= (sizes > 0).sum():
        assert (out[sizes > 0] >= 1).all()


def test_sample_is_stratified_deterministic_and_never_draws_a_labelled_item(sample_run
                                                                            ) -> None:
    frame = sample_run.frame
    first = audit.sample(frame, 40, seed=7)
    assert first.equals(audit.sample(frame.sample(frac=1, random_state=1), 40, seed=7))
    assert not first.equals(audit.sample(frame, 40, seed=8))
    pop = audit.population(frame)
    sizes = pop["stratum"].astype(str).value_counts()
    drawn = first["stratum"].astype(str).value_counts()
    assert set(drawn.index) == set(sizes.index)  # every (model, decision) is audited
    for stratum, count in drawn.items():
        p = first.loc[first["stratum"].astype(str) == stratum, "p_include"]
        assert np.allclose(p, count / sizes[stratum])
    assert not first[KEY].duplicated().any()
    labelled = labels_for(first.head(25), pd.Series(True, index=first.head(25).index))
    second = audit.sample(frame, 30, seed=7, labels=labelled)
    keys = set(map(tuple, labelled[KEY].to_numpy()))
    assert not keys & set(map(tuple, second[KEY].astype(str).to_numpy()))
    # the second draw samples what is left of each stratum: p = n_h / (N_h - labelled_h)
    left = sizes.copy()
    for stratum in first.head(25)["stratum"].astype(str):
        left[stratum] -= 1
    counts = second["stratum"].astype(str).value_counts()
    for stratum, count in counts.items():
        p = second.loc[second["stratum"].astype(str) == stratum, "p_include"].iloc[0]
        assert p == pytest.approx(count / left[stratum])


def test_sample_refuses_more_items_than_are_left(sample_run) -> None:
    frame = sample_run.frame
    total = len(audit.population(frame))  # 252 answers about vulnerable contracts
    assert total == 252
    with pytest.raises(ValueError, match="n = 253 is more than the 252 items left"):
        audit.sample(frame, 253)
    with pytest.raises(ValueError, match="n must be a whole number"):
        audit.sample(frame, 0)
    with pytest.raises(ValueError, match="no judge 'nobody'"):
        audit.sample(frame, 5, judge="nobody")


def test_sample_shows_the_evidence_and_every_judge(sample_run) -> None:
    drawn = audit.sample(sample_run.frame, 10, seed=1)
    for column in ("judge_decision", "is_vulnerable", "severity", "vuln_type", "true_lines",
                   "detector_verdict", "claimed_lines", "judges"):
        assert column in drawn
    assert drawn["judges"].str.count(";").eq(2).all()  # three judges each
    sheet = audit.blank_sheet(drawn, run_sha256="ab" * 32)
    assert list(sheet.columns[:8]) == [*KEY, "target_found", "reviewer", "labelled_at",
                                       "note", "run_sha256"]
    assert (sheet["run_sha256"] == "ab" * 32).all() and (sheet["target_found"] == "").all()


def test_the_detector_verdict_is_read_from_a_judge_that_did_not_fail() -> None:
    """A failed judgement carries no verdict: the evidence reads the detector's verdict and
    claimed lines from a judge who read the answer, even when the judge first by name failed
    (the verdict was blank: issue 37 walkthrough, DS mirror, glm-4.7 failed)."""
    frame = judged(np.array([True, True]), {"a": np.array([True, True]),
                                            "b": np.array([True, False]),
                                            "c": np.array([True, False])})
    frame = frame.astype({"said_vulnerable": object, "target_found": object})
    frame["claimed_lines"] = [[3, 4], [7]] * 3
    frame["failed_judgement"] = None
    failed = (frame["judge"] == "a") & (frame["sample"] == "c0000")
    frame.loc[failed, ["said_vulnerable", "target_found", "failed_judgement"]] = [
        None, None, "error: Failed to parse JSON response"]
    frame.loc[failed, "claimed_lines"] = None
    drawn = audit.sample(frame, 2, seed=0).set_index("sample")
    assert drawn.loc["c0000", "detector_verdict"] == "vulnerable"
    assert list(drawn.loc["c0000", "claimed_lines"]) == [3, 4]
    assert drawn.loc["c0000", "judges"] == "a: failed; b: found; c: found"
    assert drawn.loc["c0001", "detector_verdict"] == "vulnerable"


def test_the_evidence_shows_the_detectors_findings_and_a_readable_verdict() -> None:
    """What the reviewer reads of one item: the detector's verdict from a judge who read the
    answer (the judge first by name failed: it was blank), and the detector's findings as the
    detector wrote them (claimed type, severity, location, description), without any judge's
    classification: without them nobody can tell whether the target was found (issue-37
    walkthrough, DS mirror, Judge audit page)."""
    import json

    findings = json.dumps([{"finding_id": 0, "vulnerability_type_claimed": "Reentrancy",
                            "severity_claimed": "high", "location_claimed": "line 12",
                            "description": "withdraw() calls out before it updates",
                            "classification": "TARGET_MATCH", "reasoning": "the judge's"}])
    frame = pd.DataFrame({
        "sample": "c0", "model": "m", "prompt_type": "direct", "judge": ["a", "b", "c"],
        "is_vulnerable": True, "said_vulnerable": [None, True, True],
        "confidence": [None, 0.8, 0.8], "target_found": [None, True, False],
        "findings": [None, findings, findings.replace("TARGET_MATCH", "HALLUCINATED")],
        "failed_judgement": ["error: Failed to parse JSON response", None, None]})
    shown = audit.evidence(frame, ("c0", "m", "direct"))
    assert shown["detector"]["said_vulnerable"] is True or shown["detector"]["said_vulnerable"]
    assert shown["detector"]["confidence"] == 0.8
    claims = shown["findings"]
    assert claims.to_dict("records") == [{
        "finding_id": "0", "vulnerability_type_claimed": "Reentrancy",
        "severity_claimed": "high", "location_claimed": "line 12",
        "description": "withdraw() calls out before it updates"}]
    assert shown["judges"]["judge"].tolist() == ["a", "b", "c"]


# ------------------------------------------------------------------------------ labels


def _sheet(sample_run, rows: list[dict]) -> bytes:
    base = {"sample": "", "model": "", "prompt_type": "", "target_found": "",
            "reviewer": "ann", "labelled_at": "", "note": "",
            "run_sha256": sample_run.content_hash}
    frame = pd.DataFrame([{**base, **r} for r in rows])
    return frame.to_csv(index=False).encode()


def test_labels_round_trip_through_csv_with_hostile_notes(sample_run) -> None:
    drawn = audit.sample(sample_run.frame, 6, seed=2)
    labels = labels_for(drawn, pd.Series([True, False] * 3, index=drawn.index))
    labels["note"] = ["=cmd|' /C calc'!A0", "+1", "@SUM(A1)", "plain, with comma",
                      "line\nbreak", "\u202eevil"]
    labels["labelled_at"] = "2026-12-06T09:30:00Z"
    text = audit.labels_csv(audit.labels_frame(labels.to_dict("records")))
    assert "\n'=cmd" in text.replace(",'=", "\n'=") or ",'=cmd" in text  # neutralised
    back, warnings = audit.read_labels(("x.csv", text.encode()), judged=sample_run.frame)
    assert warnings == []
    assert back["note"].tolist()[:4] == ["=cmd|' /C calc'!A0", "+1", "@SUM(A1)",
                                         "plain, with comma"]
    assert back["target_found"].tolist() == [True, False] * 3
    assert back[KEY].astype(str).to_numpy().tolist() == \
        drawn[KEY].astype(str).to_numpy().tolist()


@pytest.mark.parametrize(("row", "field", "words"), [
    ({"target_found": "maybe"}, "target_found", "is not a label"),
    ({"target_found": "yes", "labelled_at": "yesterday"}, "labelled_at", "is not a time"),
    ({"target_found": "yes", "run_sha256": "f" * 64}, "run_sha256", "for another run"),
    ({"target_found": "yes", "reviewer": ""}, "reviewer", "say who labelled"),
    ({"target_found": "yes", "sample": "no-such-contract"}, "sample", "no item"),
    ({"target_found": "yes", "p_include": "2"}, "p_include", "not a probability"),
])
def test_a_bad_labels_sheet_names_file_row_and_field(sample_run, row, field, words) -> None:
    item = audit.sample(sample_run.frame, 1, seed=0).iloc[0]
    good = {"sample": item["sample"], "model": item["model"],
            "prompt_type": item["prompt_type"], "target_found": "no"}
    data = _sheet(sample_run, [good, {**good, **row}])
    with pytest.raises(audit.LabelError) as info:
        audit.read_labels(("sheet.csv", data), run_sha256=sample_run.content_hash,
                          judged=sample_run.frame)
    text = str(info.value)
    assert "sheet.csv" in text and "row 3" in text and f"field '{field}'" in text
    assert words in text


def test_labels_file_limits_and_duplicates(sample_run, tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024**2)
    with pytest.raises(audit.LabelError, match=r"big\.csv: the file is 50\.0 MB, over the 20 MB"):
        audit.read_labels(big)
    item = audit.sample(sample_run.frame, 1, seed=0).iloc[0]
    row = {"sample": item["sample"], "model": item["model"],
           "prompt_type": item["prompt_type"], "target_found": "yes"}
    data = _sheet(sample_run, [row, row, {**row, "target_found": "no"}, {"target_found": ""}])
    labels, warnings = audit.read_labels(("d.csv", data), judged=sample_run.frame)
    assert len(labels) == 2  # the identical row kept once; the blank row is not a label
    assert any("1 duplicated row kept once" in w for w in warnings)
    assert any("corrected by a later row" in w for w in warnings)
    assert any("without a target_found label" in w for w in warnings)
    assert audit.latest(labels)["target_found"].tolist() == [False]  # the later row counts
    with pytest.raises(audit.LabelError, match="not UTF-8"):
        audit.read_labels(("latin.csv", "sample,model,target_found\n\xe9,m,yes\n"
                           .encode("latin-1")))
    with pytest.raises(audit.LabelError, match="field 'target_found': missing column"):
        audit.read_labels(("cols.csv", b"sample,model\na,b\n"))


def test_two_reviewers_mean_and_kappa() -> None:
    items = pd.DataFrame({"sample": ["a", "b", "c", "d"], "model": "m", "prompt_type": ""})
    one = labels_for(items, pd.Series([True, True, False, False]), "ann")
    two = labels_for(items, pd.Series([True, False, False, True]), "bo")
    both = pd.concat([one, two], ignore_index=True)
    human = audit.human_labels(both)
    assert human["human"].tolist() == [1.0, 0.5, 0.0, 0.5]
    kappa = audit.reviewer_kappa(both)
    want = cohen_kappa_score([1, 1, 0, 0], [1, 0, 0, 1])  # 0.0: chance agreement
    assert kappa["kappa"].iloc[0] == pytest.approx(want)


# ---------------------------------------------------------------------- judge accuracy


def test_judge_accuracy_against_scikit_learn_on_a_simple_random_sample() -> None:
    rng = np.random.default_rng(0)
    n = 200
    truth = rng.random(n) < 0.5
    a = np.where(truth, rng.random(n) < 0.9, rng.random(n) < 0.2)
    b = np.where(truth, rng.random(n) < 0.7, rng.random(n) < 0.05)
    frame = judged(truth, {"a": a, "b": b})
    labelled = frame[frame["judge"] == "a"][KEY].reset_index(drop=True)
    # every item labelled: each cell's weight N_h / n_h is 1, so the rates are plain counts
    table = audit.judge_accuracy(frame, labels_for(labelled, pd.Series(truth)),
                                 design_judge="a")
    for name, decided in (("a", a), ("b", b)):
        row = table.set_index("judge").loc[name]
        tn, fp, fn, tp = confusion_matrix(truth, decided).ravel()
        assert row["sensitivity"] == pytest.approx(tp / (tp + fn))
        assert row["specificity"] == pytest.approx(tn / (tn + fp))
        assert row["accuracy"] == pytest.approx((tp + tn) / n)
        assert row["kappa"] == pytest.approx(cohen_kappa_score(truth, decided))
        assert row["kappa_low"] < row["kappa"] < row["kappa_high"]
        assert row["n_labelled"] == n


def test_judge_accuracy_weights_the_stratified_sample_back_to_the_run() -> None:
    # 100 items: the judge says found on 80 (70 truly found) and not found on 20 (10 truly
    # found). Stratified sample: 8 of the 80 "found" (7 true), 10 of the 20 "not found" (5
    # true): weights 10 and 2. Weighted: found & true 7*10 = 70, found & false 1*10 = 10,
    # not found & true 5*2 = 10, not found & false 5*2 = 10: sensitivity 70/80 = 0.875,
    # specificity 10/20 = 0.5 (the unweighted sample would say 7/12 and 5/6).
    decision = np.r_[np.ones(80, bool), np.zeros(20, bool)]
    truth = np.r_[np.ones(70, bool), np.zeros(10, bool), np.ones(10, bool), np.zeros(10, bool)]
    frame = judged(truth, {"a": decision})
    items = frame[KEY]
    chosen = np.r_[np.arange(0, 7), [70], np.arange(80, 85), np.arange(90, 95)]
    labels = labels_for(items.iloc[chosen], pd.Series(truth[chosen], index=chosen))
    row = audit.judge_accuracy(frame, labels).iloc[0]
    assert row["sensitivity"] == pytest.approx(0.875)
    assert row["specificity"] == pytest.approx(0.5)
    assert row["accuracy"] == pytest.approx(0.8)  # (70 + 10) / 100


# ------------------------------------------------------------------------ corrected


def test_corrected_rate_is_the_post_stratified_estimate_worked_by_hand() -> None:
    # The same run: the judge's rate is 80/100 = 0.8. The reviewers confirm 7 of 8 "found"
    # and 5 of 10 "not found": corrected = 0.8 x 7/8 + 0.2 x 5/10 = 0.7 + 0.1 = 0.8; with 4 of
    # 8 confirmed instead: 0.8 x 0.5 + 0.1 = 0.5.
    decision = np.r_[np.ones(80, bool), np.zeros(20, bool)]
    truth = np.r_[np.ones(70, bool), np.zeros(10, bool), np.ones(10, bool), np.zeros(10, bool)]
    frame = judged(truth, {"a": decision})
    items = frame[KEY]
    chosen = np.r_[np.arange(0, 7), [70], np.arange(80, 85), np.arange(90, 95)]
    labels = labels_for(items.iloc[chosen], pd.Series(truth[chosen], index=chosen))
    row = audit.corrected(frame, labels).iloc[0]
    assert row["judge_only"] == pytest.approx(0.8)
    assert row["corrected"] == pytest.approx(0.8)
    assert row["n_items"] == 100 and row["n_labelled"] == 18 and row["method"] == "ppi++"
    labels.loc[labels.index[3:6], "target_found"] = False
    row = audit.corrected(frame, labels).iloc[0]
    assert row["corrected"] == pytest.approx(0.8 * 4 / 8 + 0.2 * 5 / 10)
    assert row["corrected_low"] < row["corrected"] < row["corrected_high"]
    # human-only: the labels weighted back (10 per "found" label, 2 per "not found" one)
    assert row["human_only"] == pytest.approx((4 * 10 + 5 * 2) / (8 * 10 + 10 * 2))


def test_no_label_where_the_judge_said_found_gives_no_corrected_rate() -> None:
    decision = np.r_[np.ones(10, bool), np.zeros(10, bool)]
    frame = judged(decision, {"a": decision})
    items = frame[KEY].iloc[12:15]
    row = audit.corrected(frame, labels_for(items, pd.Series(False, index=items.index))
                          ).iloc[0]
    assert np.isnan(row["corrected"]) and "no label where the judge said m · found" in \
        row["note"]


def _simulate(rng, *, contracts: int, prompts: int, labels: int, sensitivity: float,
              false_found: float, a: float = 2.0, b: float = 3.0):
    """A run of ``contracts`` x ``prompts`` answers of one model (a contract's answers
    share its chance of being found, Beta(a, b)), a judge with the given error rates, and a
    stratified sample of ``labels`` items as :func:`kbench_core.audit.sample` allocates it."""
    p = rng.beta(a, b, contracts)
    y = (rng.random((contracts, prompts)) < p[:, None]).astype(float).ravel()
    yhat = np.where(y == 1, rng.random(y.size) < sensitivity,
                    rng.random(y.size) < false_found).astype(float)
    cluster = np.repeat(np.arange(contracts), prompts)
    cell = yhat.astype(int)
    take = allocate(np.bincount(cell, minlength=2), labels)
    labelled = np.full(y.size, np.nan)
    for h in (0, 1):
        pick = rng.choice(np.flatnonzero(cell == h), take[h], replace=False)
        labelled[pick] = y[pick]
    return yhat, labelled, cluster, cell


@pytest.mark.parametrize(("contracts", "prompts", "labels", "sensitivity", "false_found"), [
    (100, 3, 30, 0.9, 0.25),    # lenient judge, few labels
    (100, 3, 60, 0.9, 0.25),
    (300, 3, 600, 0.9, 0.25),   # many labels
    (100, 3, 100, 0.7, 0.05),   # strict judge
    (20, 3, 30, 0.9, 0.25),     # few contracts
    (60, 5, 120, 0.85, 0.3),    # more prompt types per contract
])
def test_corrected_interval_covers_where_the_judge_only_one_fails(
        contracts, prompts, labels, sensitivity, false_found) -> None:
    rng = np.random.default_rng(contracts * 1000 + labels)
    truth = 2.0 / 5.0  # the rate the contracts stand for: E[Beta(2, 3)]
    reps, covered, judge_covered = 400, 0, 0
    for _ in range(reps):
        yhat, y, cluster, cell = _simulate(rng, contracts=contracts, prompts=prompts,
                                           labels=labels, sensitivity=sensitivity,
                                           false_found=false_found)
        rate, note = _poststratified(yhat, y, cluster, cell, 0.95)
        assert note == ""
        covered += rate.low <= truth <= rate.high
        j = _judge_only(yhat, np.zeros(yhat.size, bool), cluster, 0.95)
        judge_covered += j.low <= truth <= j.high
    assert covered / reps >= 0.93, covered / reps
    assert judge_covered / reps < 0.7, judge_covered / reps


def test_a_perfect_judge_costs_little_width_with_enough_labels() -> None:
    rng = np.random.default_rng(5)
    ratios = []
    for _ in range(100):
        yhat, y, cluster, cell = _simulate(rng, contracts=200, prompts=3, labels=300,
                                           sensitivity=1.0, false_found=0.0)
        rate, _ = _poststratified(yhat, y, cluster, cell, 0.95)
        j = _judge_only(yhat, np.zeros(yhat.size, bool), cluster, 0.95)
        ratios.append((rate.high - rate.low) / (j.high - j.low))
    assert np.median(ratios) <= 1.10, np.median(ratios)


def test_corrected_through_the_api_covers_with_three_judges_and_two_models() -> None:
    rng = np.random.default_rng(11)
    covered = total = 0
    for rep in range(60):
        frames, truths = [], {}
        for model, base in (("a", 0.35), ("b", 0.65)):
            p = rng.beta(base * 4, (1 - base) * 4, 50)
            y = (rng.random((50, 3)) < p[:, None]).ravel()
            truths[model] = pd.Series(y)
            votes = {f"j{k}": np.where(y, rng.random(y.size) < 0.85,
                                       rng.random(y.size) < 0.2) for k in range(3)}
            frames.append(judged(y, votes, models=[model] * y.size,
                                 contracts=np.repeat([f"c{i}" for i in range(50)], 3),
                                 prompts=np.tile(["p0", "p1", "p2"], 50)))
        frame = pd.concat(frames, ignore_index=True)
        drawn = audit.sample(frame, 80, seed=rep)
        truth = pd.concat(truths, names=["model", "i"])
        position = (drawn["sample"].str[1:].astype(int) * 3
                    + drawn["prompt_type"].str[1:].astype(int))
        found = [truth[(m, i)] for m, i in zip(drawn["model"], position, strict=True)]
        table = audit.corrected(frame, labels_for(drawn, pd.Series(found, index=drawn.index)))
        for row in table.itertuples():
            total += 1
            covered += row.corrected_low <= {"a": 0.35, "b": 0.65}[row.model] <= \
                row.corrected_high
    assert covered / total >= 0.93, covered / total


def test_difference_method_matches_ppi_python_on_a_simple_random_sample() -> None:
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(3)
    n_items, n_labels = 2000, 200
    truth = rng.random(n_items) < 0.4
    decision = np.where(truth, rng.random(n_items) < 0.9, rng.random(n_items) < 0.2)
    frame = judged(truth, {"a": decision})
    chosen = rng.choice(n_items, n_labels, replace=False)
    items = frame[KEY].iloc[chosen]
    labels = labels_for(items, pd.Series(truth[chosen], index=items.index))
    # equal weights (a simple random sample): the classic PPI estimate and interval
    from kbench_core.audit.estimate import _difference

    assert len(labels) == n_labels
    y = np.full(n_items, np.nan)
    y[chosen] = truth[chosen]
    rate = _difference(decision.astype(float), y, np.ones(n_labels), np.arange(n_items), 0.95)
    want = ppi_mean_pointestimate(truth[chosen].astype(float), decision[chosen].astype(float),
                                  decision.astype(float), lam=1)
    low, high = ppi_mean_ci(truth[chosen].astype(float), decision[chosen].astype(float),
                            decision.astype(float), alpha=0.05, lam=1)
    assert rate.value == pytest.approx(float(np.squeeze(want)))
    assert rate.high - rate.low == pytest.approx(float(high[0] - low[0]), rel=0.05)


def test_rogan_gladen_undoes_known_error_rates() -> None:
    # Every item labelled, judge sensitivity 0.8 and specificity 0.9 exactly: the judge says
    # found on 0.8 x 50 + 0.1 x 50 = 45 of 100; (0.45 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.5.
    truth = np.r_[np.ones(50, bool), np.zeros(50, bool)]
    decision = np.r_[np.ones(40, bool), np.zeros(10, bool), np.ones(5, bool),
                     np.zeros(45, bool)]
    frame = judged(truth, {"a": decision})
    labels = labels_for(frame[KEY], pd.Series(truth))
    row = audit.corrected(frame, labels, method="rogan_gladen").iloc[0]
    assert row["judge_only"] == pytest.approx(0.45)
    assert row["corrected"] == pytest.approx(0.5)
    assert row["corrected_low"] < 0.5 < row["corrected_high"]


# --------------------------------------------------------------------- labels needed


def test_labels_needed_reaches_the_half_width_it_promises() -> None:
    rng = np.random.default_rng(8)
    yhat, y, cluster, cell = _simulate(rng, contracts=400, prompts=3, labels=40,
                                       sensitivity=0.85, false_found=0.2)
    frame = judged(np.zeros(yhat.size), {"a": yhat.astype(bool)},
                   contracts=[f"c{c}" for c in cluster])
    labelled = ~np.isnan(y)
    items = frame[KEY][labelled]
    labels = labels_for(items, pd.Series(y[labelled].astype(bool), index=items.index))
    need = audit.labels_needed(frame, labels, half_width=0.06).iloc[0]
    assert need["half_width_now"] > 0.06 and need["labels_needed"] > 0
    widths = []
    for _ in range(20):  # label that many more (the same allocation) and look again
        _, y2, _, _ = _simulate(np.random.default_rng(rng.integers(1 << 30)), contracts=400,
                                prompts=3, labels=40 + int(need["labels_needed"]),
                                sensitivity=0.85, false_found=0.2)
        rate, _ = _poststratified(yhat, np.where(np.isnan(y2), np.nan, y2), cluster, cell,
                                  0.95)
        widths.append((rate.high - rate.low) / 2)
    assert np.median(widths) <= 0.066, np.median(widths)


# -------------------------------------------------------------------- judge errors


def test_judge_errors_flag_the_factor_that_matters() -> None:
    rng = np.random.default_rng(2)
    n = 600
    truth = rng.random(n) < 0.5
    prompts = np.tile(["direct", "adversarial"], n // 2)
    wrong = np.where(prompts == "adversarial", rng.random(n) < 0.4, rng.random(n) < 0.05)
    decision = np.where(wrong, ~truth, truth)
    frame = judged(truth, {"a": decision}, prompts=prompts)
    labels = labels_for(frame[KEY], pd.Series(truth))
    table = judge_errors(frame, labels)
    flagged = set(table.loc[table["flagged"], "factor"])
    assert flagged == {"prompt_type"}
    rates = table[table["factor"] == "prompt_type"].set_index("level")["error_rate"]
    assert rates["adversarial"] == pytest.approx(wrong[prompts == "adversarial"].mean())
    over = overruled(frame, labels)
    assert len(over) == wrong.sum()
    assert set(over["judge_decision"]) <= {"found", "not found"}


# -------------------------------------------------------------------------- the store


def test_store_appends_per_reviewer_and_survives_a_torn_line(tmp_path: Path,
                                                             sample_run) -> None:
    store = LabelStore(tmp_path, sample_run.content_hash)
    drawn = audit.sample(sample_run.frame, 3, seed=0)
    rows = labels_for(drawn, pd.Series([True, False, True], index=drawn.index))
    rows["run_sha256"] = sample_run.content_hash
    records = rows.to_dict("records")
    store.append(records[:2], reviewer="ann", session="s1")
    store.append(records[2:], reviewer="ann", session="s1")
    store.append([{**records[0], "reviewer": "bo", "target_found": False}], reviewer="bo",
                 session="s2")
    labels, warnings = store.read(sample_run.frame)
    assert len(labels) == 4 and warnings == []
    assert sorted(p.name.split("-")[0] for p in store.folder.iterdir()) == ["ann", "bo"]
    path = store.file_for("ann", "s1")
    path.write_bytes(path.read_bytes() + b"c0001,synthetic-detector-sharp,dir")  # a crash
    labels, warnings = store.read(sample_run.frame)
    assert len(labels) == 4 and any("cut short" in w for w in warnings)
    with pytest.raises(ValueError, match="SHA-256"):
        LabelStore(tmp_path, "../../etc")


def test_two_processes_append_at_once_and_keep_every_label(tmp_path: Path, sample_run
                                                           ) -> None:
    script = (
        "import sys\n"
        "from kbench_core.audit.store import LabelStore\n"
        "store = LabelStore(sys.argv[1], sys.argv[2])\n"
        "for i in range(200):\n"
        "    store.append([{'sample': f's{i}', 'model': 'm', 'prompt_type': '',\n"
        "                   'target_found': i % 2 == 0, 'reviewer': sys.argv[3],\n"
        "                   'labelled_at': '', 'note': 'x' * 50, 'run_sha256': sys.argv[2]}],\n"
        "                 reviewer=sys.argv[3], session=sys.argv[4])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path),
                               sample_run.content_hash, who, "same"], env=env)
             for who in ("ann", "bo")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    labels, warnings = LabelStore(tmp_path, sample_run.content_hash).read()
    assert len(labels) == 400 and warnings == []
    assert labels.groupby("reviewer").size().tolist() == [200, 200]


# ------------------------------------------------------------------ review: hostile sheets


def _one_item_sheet(sample_run, tail: str) -> bytes:
    item = audit.sample(sample_run.frame, 1, seed=0).iloc[0]
    head = "sample,model,prompt_type,target_found,reviewer,labelled_at,note,run_sha256\n"
    key = f"{item['sample']},{item['model']},{item['prompt_type']}"
    return (head + f"{key},no,ann,,,\n" + key + tail).encode()


@pytest.mark.parametrize(("tail", "words"), [
    (f',yes,ann,,"{"x" * 200_000}",\n', "longer than"),  # past the csv module's cell limit
    (',yes,ann,,"no end quote,\n', "quote"),  # the rest of the file would become one note
    (',yes,ann,,"a"b,\n', "quote"),
])
def test_a_sheet_that_is_not_csv_names_file_and_row(sample_run, tail, words) -> None:
    with pytest.raises(audit.LabelError) as info:
        audit.read_labels(("sheet.csv", _one_item_sheet(sample_run, tail)),
                          judged=sample_run.frame)
    assert "sheet.csv: row 3" in str(info.value) and words in str(info.value)


def test_a_reviewer_name_has_a_length_limit(sample_run) -> None:
    data = _one_item_sheet(sample_run, f",yes,{'r' * 5000},,,\n")
    with pytest.raises(audit.LabelError, match=r"row 3, field 'reviewer': 5,000 characters"):
        audit.read_labels(("sheet.csv", data), judged=sample_run.frame)


def test_one_odd_row_in_the_store_never_hides_a_sessions_other_labels(tmp_path: Path,
                                                                       sample_run) -> None:
    store = LabelStore(tmp_path, sample_run.content_hash)
    drawn = audit.sample(sample_run.frame, 3, seed=0)
    rows = labels_for(drawn, pd.Series([True, False, True], index=drawn.index))
    rows["run_sha256"] = sample_run.content_hash
    records = rows.to_dict("records")
    # a note the page allows (2,000 characters) that the store writes escaped, longer
    records[1]["note"] = "\u202e" * 2000
    store.append(records, reviewer="ann", session="s1")
    path = store.file_for("ann", "s1")
    path.write_bytes(path.read_bytes() + b"c0001,m,direct,maybe,ann,,,\n")  # tampered
    labels, warnings = store.read(sample_run.frame)
    assert len(labels) == 3, warnings
    assert any("row 5, field 'target_found'" in w and "left out" in w for w in warnings)


def test_the_store_reads_no_file_swapped_for_a_link_or_a_fifo_after_its_check(
        tmp_path: Path, sample_run, monkeypatch) -> None:
    store = LabelStore(tmp_path / "ws", sample_run.content_hash)
    drawn = audit.sample(sample_run.frame, 1, seed=0)
    rows = labels_for(drawn, pd.Series([True], index=drawn.index))
    rows["run_sha256"] = sample_run.content_hash
    outside = LabelStore(tmp_path / "elsewhere", sample_run.content_hash)
    secret = outside.append(rows.to_dict("records"), reviewer="eve", session="x")
    store.folder.mkdir(parents=True)
    (store.folder / "eve-link.csv").symlink_to(secret)
    os.mkfifo(store.folder / "pipe.csv")
    regular = secret.lstat()
    monkeypatch.setattr(Path, "lstat", lambda self: regular)  # the check passes, then ...
    labels, warnings = store.read(sample_run.frame)
    assert labels.empty
    assert sum("not a regular file" in w for w in warnings) == 2, warnings


def test_the_store_neither_reads_nor_writes_through_a_linked_folder(tmp_path: Path,
                                                                    sample_run) -> None:
    elsewhere = LabelStore(tmp_path / "elsewhere", sample_run.content_hash)
    elsewhere.append([{"sample": "c0001", "model": "m", "prompt_type": "",
                       "target_found": True, "reviewer": "eve",
                       "run_sha256": sample_run.content_hash}], reviewer="eve", session="x")
    store = LabelStore(tmp_path / "ws", sample_run.content_hash)
    store.folder.parent.mkdir(parents=True)
    store.folder.symlink_to(elsewhere.folder)
    labels, warnings = store.read()
    assert labels.empty and any("a link" in w for w in warnings)
    with pytest.raises(OSError, match="a link"):
        store.append([{"sample": "c0002", "target_found": True}], reviewer="ann", session="s")


# ------------------------------------------------- review: the sample's design, kept


def _three_judges_one_useless() -> tuple[pd.DataFrame, np.ndarray]:
    """1,000 items; j1 and j2 say found on the first 100, which are the truly found ones;
    j0 says found on every item (a useless judge). The majority's strata: 100 "found" and
    900 "not found"; audit.sample(60) takes √-allocated 15 and 45 of them."""
    truth = np.r_[np.ones(100, bool), np.zeros(900, bool)]
    frame = judged(truth, {"j0": np.ones(1000, bool), "j1": truth, "j2": truth})
    return frame, truth


def test_labels_drawn_with_the_majority_and_corrected_for_another_judge_keep_their_weights(
        ) -> None:
    frame, truth = _three_judges_one_useless()
    drawn = audit.sample(frame, 60, seed=1)
    position = drawn["sample"].str[1:].astype(int).to_numpy()
    labels = labels_for(drawn, pd.Series(truth[position], index=drawn.index))
    assert (drawn["judge_decision"] == "found").sum() == 15
    # j0's one cell holds both of the majority's strata: its labels weighted 100/15 and
    # 900/45 give the run's rate, 100 / 1,000 (unweighted, 15 / 60 = 0.25)
    row = audit.corrected(frame, labels, judge="j0", design_judge="majority").iloc[0]
    assert row["corrected"] == pytest.approx(0.1)
    assert row["human_only"] == pytest.approx(0.1)
    assert row["corrected_low"] <= 0.1 <= row["corrected_high"]


def test_the_failed_judgements_stratum_keeps_its_own_weight() -> None:
    # 400 items; the judge found the first 100 (all truly found), said not found on 280
    # (none found) and failed on 20 (all truly found). The sample's strata are found / not
    # found / failed; the corrected rate's cells put a failure with "not found" (the judge
    # credits nothing it failed on), so the failed stratum's labels need their own weight:
    # rate = (100 + 20) / 400 = 0.3.
    truth = np.r_[np.ones(100, bool), np.zeros(280, bool), np.ones(20, bool)]
    decision = pd.array(np.r_[np.ones(100, bool), np.zeros(300, bool)], dtype="boolean")
    decision[380:] = pd.NA
    frame = judged(truth, {"a": decision})
    drawn = audit.sample(frame, 40, seed=3)
    position = drawn["sample"].str[1:].astype(int).to_numpy()
    labels = labels_for(drawn, pd.Series(truth[position], index=drawn.index))
    row = audit.corrected(frame, labels).iloc[0]
    assert row["corrected"] == pytest.approx(0.3)
    assert row["human_only"] == pytest.approx(0.3)
    need = audit.labels_needed(frame, labels).iloc[0]
    assert np.isfinite(need["half_width_now"])


def test_the_api_takes_labels_without_time_note_or_hash_and_without_prompt_types() -> None:
    # SPEC 7: labels whose run_sha256, labelled_at and note are absent; a run without
    # prompt_type (its items' prompt type is empty)
    rng = np.random.default_rng(4)
    truth = rng.random(200) < 0.4
    decision = np.where(truth, rng.random(200) < 0.9, rng.random(200) < 0.2)
    frame = judged(truth, {"a": decision, "b": truth}).drop(columns="prompt_type")
    drawn = audit.sample(frame, 40, seed=0, judge="a")
    position = drawn["sample"].str[1:].astype(int).to_numpy()
    labels = pd.DataFrame({"sample": drawn["sample"], "model": drawn["model"],
                           "prompt_type": drawn["prompt_type"],
                           "target_found": truth[position], "reviewer": "ann"})
    assert audit.corrected(frame, labels, judge="a")["corrected"].notna().all()
    assert len(audit.judge_accuracy(frame, labels)) == 3
    assert len(audit.labels_needed(frame, labels, judge="a")) == 1
    assert len(judge_errors(frame, labels, judge="a")) >= 0
    assert (overruled(frame, labels, judge="a")["notes"] == "").all()
    assert audit.reviewer_kappa(labels).empty
    more = audit.sample(frame, 40, seed=1, judge="a", labels=labels.drop(columns="prompt_type"))
    assert not set(more["sample"]) & set(drawn["sample"])


def test_the_accuracy_chart_lists_the_judges_top_down_as_the_table_does() -> None:
    from kbench_core.figures.audit import accuracy_chart

    rng = np.random.default_rng(1)
    truth = rng.random(120) < 0.5
    frame = judged(truth, {"a": truth, "b": ~truth, "c": truth})
    labels = labels_for(frame[KEY].iloc[:120], pd.Series(truth))
    table = audit.judge_accuracy(frame, labels)
    fig = accuracy_chart(table)
    assert list(fig.data[0].y) == table["judge"].tolist()  # majority first ...
    assert fig.layout.yaxis.autorange == "reversed"  # ... and at the top


def test_two_reviewers_who_disagree_do_not_overrule_the_judge() -> None:
    # item c0000: the judge said not found; ann says found, bo says not found (a tie, mean
    # 0.5): no majority of reviewers against the judge, so not an overruled item nor an error
    truth = np.zeros(4, bool)
    frame = judged(truth, {"a": np.array([False, False, True, True])})
    items = frame[KEY]
    one = labels_for(items, pd.Series([True, False, True, False]), "ann")
    two = labels_for(items, pd.Series([False, False, True, True]), "bo")
    both = pd.concat([one, two], ignore_index=True)
    table = overruled(frame, both)
    # c0003: judge found, ann not found, bo found: a tie too; none is overruled
    assert table.empty, table
    errors = judge_errors(frame, both, factors=("model",))
    assert errors.empty or errors["errors"].sum() == 0


def test_labelling_as_many_more_as_labels_needed_says_reaches_the_half_width() -> None:
    # 60 contracts x 3 prompt types (few contracts: the judge's decisions over them, and
    # their covariance with the labels' part, are a large share of the variance, which more
    # labels do not shrink). Label 40, ask how many more reach ± 0.10, label them (a second
    # draw of audit.sample) and look again: about half the runs reach it, the median does.
    rng = np.random.default_rng(12)
    after = []
    for rep in range(16):
        p = rng.beta(2, 3, 60)
        truth = (rng.random((60, 3)) < p[:, None]).ravel()
        decision = np.where(truth, rng.random(180) < 0.85, rng.random(180) < 0.2)
        frame = judged(truth, {"a": decision}, contracts=np.repeat(
            [f"c{i:04d}" for i in range(60)], 3), prompts=np.tile(["p0", "p1", "p2"], 60))
        index = {k: i for i, k in enumerate(map(tuple, frame[KEY].to_numpy()))}

        def label(drawn: pd.DataFrame, index=index, truth=truth) -> pd.DataFrame:
            rows = [index[k] for k in map(tuple, drawn[KEY].to_numpy())]
            return labels_for(drawn, pd.Series(truth[rows], index=drawn.index))

        first = label(audit.sample(frame, 40, seed=rep))
        need = audit.labels_needed(frame, first, half_width=0.10).iloc[0]
        more = int(need["labels_needed"])
        if more == 0:
            continue
        both = pd.concat([first, label(audit.sample(frame, more, seed=rep + 100,
                                                    labels=first))])
        after.append(audit.labels_needed(frame, both, half_width=0.10)
                     .iloc[0]["half_width_now"])
    assert len(after) >= 12 and np.median(after) <= 0.10, (np.median(after), after)


def test_the_store_parses_again_only_the_files_that_changed(tmp_path: Path, sample_run,
                                                           monkeypatch) -> None:
    # each label the page makes re-reads the store: a file that has not changed is not
    # parsed again (100,000 labels take seconds to parse)
    from kbench_core.audit import store as store_module

    store = LabelStore(tmp_path, sample_run.content_hash)
    drawn = audit.sample(sample_run.frame, 3, seed=0)
    rows = labels_for(drawn, pd.Series([True, False, True], index=drawn.index))
    rows["run_sha256"] = sample_run.content_hash
    records = rows.to_dict("records")
    store.append(records[:1], reviewer="ann", session="s1")
    store.append(records[1:2], reviewer="bo", session="s2")
    parsed: list[str] = []
    real = store_module.read_labels
    monkeypatch.setattr(store_module, "read_labels",
                        lambda source, **kw: parsed.append(source[0]) or real(source, **kw))
    assert len(store.read(sample_run.frame)[0]) == 2 and len(parsed) == 2
    store.append(records[2:], reviewer="ann", session="s1")
    labels, _ = store.read(sample_run.frame)
    assert len(labels) == 3
    assert parsed[2:] == [store.file_for("ann", "s1").name]


def test_judge_accuracy_intervals_cover_when_the_judge_errs_by_contract() -> None:
    # 60 contracts x 5 prompt types, 150 labelled (a simple random sample); the judge is
    # fooled by a hard contract (a third of them) on every prompt type: its errors are
    # clustered, so 150 labels hold fewer independent checks than 150. Sensitivity
    # 1/3 x 0.5 + 2/3 x 0.95 = 0.8, specificity 1/3 x 0.5 + 2/3 x 0.95 = 0.8.
    from kbench_core.audit.accuracy import _accuracy_row

    rng = np.random.default_rng(21)
    covered = {"sensitivity": 0, "specificity": 0}
    reps = 1000
    for _ in range(reps):
        p = rng.beta(2, 3, 60)
        truth = (rng.random((60, 5)) < p[:, None]).ravel()
        hard = np.repeat(rng.random(60) < 1 / 3, 5)
        right = rng.random(300) < np.where(hard, 0.5, 0.95)
        decision = np.where(right, truth, ~truth)
        chosen = rng.choice(300, 150, replace=False)
        part = pd.DataFrame({"human": truth[chosen].astype(float),
                             "d": decision[chosen].astype(float), "w": 1.0,
                             "sample": np.repeat(np.arange(60), 5)[chosen]})
        row = _accuracy_row(part, 0.95)
        for name in covered:
            covered[name] += row[f"{name}_low"] <= 0.8 <= row[f"{name}_high"]
    assert min(covered.values()) / reps >= 0.93, covered


def test_rogan_gladen_takes_the_judges_accuracy_weighted_by_the_samples_own_strata() -> None:
    # 1,000 items, the first 100 truly found; j1 and j2 say so; j0 says found on 0-49 and
    # 100-149 (sensitivity 0.5, specificity 850/900). Drawn with j0's strata, the rate
    # (0.1 + 0.944 - 1) / (0.5 + 0.944 - 1) = 0.1; with the majority's weights j0's
    # sensitivity reads about 0.75 and the corrected rate about 0.064.
    truth = np.r_[np.ones(100, bool), np.zeros(900, bool)]
    j0 = np.zeros(1000, bool)
    j0[:50] = j0[100:150] = True
    frame = judged(truth, {"j0": j0, "j1": truth, "j2": truth})
    rates = []
    for seed in range(4):
        drawn = audit.sample(frame, 200, judge="j0", seed=seed)
        position = drawn["sample"].str[1:].astype(int).to_numpy()
        labels = labels_for(drawn, pd.Series(truth[position], index=drawn.index))
        rates.append(audit.corrected(frame, labels, judge="j0", method="rogan_gladen",
                                     design_judge="j0").iloc[0]["corrected"])
    assert np.mean(rates) == pytest.approx(0.1, abs=0.02), rates


def test_judge_accuracy_on_labels_of_two_contracts_has_an_interval() -> None:
    from kbench_core.audit.accuracy import _share

    p, low, high = _share(np.array([0.0, 1.0, 1.0]), np.array([42.0, 15.0, 0.0]), 0.95,
                          np.array(["c1", "c2", "c3"]))
    assert p == pytest.approx(15 / 57) and 0 <= low < p < high <= 1


def test_the_exports_weigh_the_labels_as_kbench_audit_does() -> None:
    # kbench figures/report --labels and kbench audit --judge J: the same numbers (the
    # sample drawn with J's strata)
    from kbench_core.audit.exports import audit_objects

    truth = np.r_[np.ones(100, bool), np.zeros(900, bool)]
    j0 = np.zeros(1000, bool)
    j0[:50] = j0[100:150] = True
    frame = judged(truth, {"j0": j0, "j1": truth, "j2": truth})
    drawn = audit.sample(frame, 200, judge="j0", seed=0)
    position = drawn["sample"].str[1:].astype(int).to_numpy()
    labels = labels_for(drawn, pd.Series(truth[position], index=drawn.index))
    objects = {stem: obj for stem, _, obj, _ in audit_objects(frame, labels, judge="j0")}
    want = audit.corrected(frame, labels, judge="j0", design_judge="j0")
    pd.testing.assert_frame_equal(objects["audit_corrected_rates"], want)
    pd.testing.assert_frame_equal(objects["audit_judge_accuracy"],
                                  audit.judge_accuracy(frame, labels, design_judge="j0"))


def test_a_sheet_records_its_judge_and_the_weights_follow_it(sample_run) -> None:
    frame = sample_run.frame
    drawn = audit.sample(frame, 40, seed=4, judge="judge-three")
    sheet = audit.blank_sheet(drawn, run_sha256=sample_run.content_hash)
    assert set(sheet["drawn_with"]) == {"judge-three"}
    sheet["target_found"] = np.where(np.arange(len(sheet)) % 3, "yes", "no")
    sheet["reviewer"] = "ann"
    labels, _ = audit.read_labels(("s.csv", audit.labels_csv(sheet).encode()),
                                  run_sha256=sample_run.content_hash, judged=frame)
    assert audit.drawn_judge(labels, "majority") == "judge-three"
    # analysed for the majority, weighed by judge-three's strata (what the sheet says)
    from kbench_core.audit.exports import audit_objects

    table = next(obj for stem, what, obj, _ in audit_objects(frame, labels, judge="majority")
                 if stem == "audit_corrected_rates")
    want = audit.corrected(frame, labels, judge="majority", design_judge="judge-three")
    assert table["corrected"].tolist() == pytest.approx(want["corrected"].tolist(), nan_ok=True)
    other = audit.corrected(frame, labels, judge="majority", design_judge="majority")
    assert not np.allclose(other["human_only"], want["human_only"], equal_nan=True)
    # a sheet naming a judge the run does not have is refused, naming row and field
    sheet["drawn_with"] = "nobody"
    with pytest.raises(audit.LabelError, match="field 'drawn_with'"):
        audit.read_labels(("s.csv", audit.labels_csv(sheet).encode()), judged=frame)


def test_a_partial_match_is_a_found_target(sample_run) -> None:
    drawn = audit.sample(sample_run.frame, 2, seed=0)
    sheet = audit.blank_sheet(drawn)
    sheet["target_found"] = ["yes", "no"]
    sheet["partial_found"] = ["yes", ""]
    sheet["reviewer"] = "ann"
    labels, _ = audit.read_labels(("p.csv", audit.labels_csv(sheet).encode()))
    assert labels["partial_found"].tolist() == [True, pd.NA] or \
        labels["partial_found"].isna().tolist() == [False, True]
    sheet["partial_found"] = ["", "yes"]  # partial yet not found: a contradiction
    with pytest.raises(audit.LabelError, match="row 3, field 'partial_found'"):
        audit.read_labels(("p.csv", audit.labels_csv(sheet).encode()))
