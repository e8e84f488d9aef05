"""The batched bootstrap of the vulnerability composites (``kbench_core.vuln.bootstrap``)
gives, bit for bit, what the per-replicate loop it replaced gave.

:func:`old_bootstrap` below is a faithful copy of ``_bootstrap`` as it was before the batching
(one ``statistic(counts)`` call per replicate through ``kbench_core.stats.bootstrap_groups``),
kept here as the reference; ``tiers`` is run once with it patched in and once as shipped.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.stats import rankdata

from kbench_core import samples, stats, vuln
from kbench_core.calibration import Binned, bin_calibration, sort_answers
from kbench_core.vuln import bootstrap as vuln_bootstrap
from kbench_core.vuln._formulas import _core
from kbench_core.vuln._prepare import _Q, _Prepared
from kbench_core.vuln.bootstrap import _BOOTSTRAPPED, _RANGES, _with_width

tiers_module = importlib.import_module("kbench_core.vuln.tiers")


def old_bootstrap(table: pd.DataFrame, prep: _Prepared, weights: Mapping[str, float],
                  zero_division: float, n_bins: int, binning: str, n_boot: int,
                  random_state: int, no_target_reasoning: str = "zero") -> None:
    """``kbench_core.vuln.bootstrap._bootstrap`` before the batching, unchanged."""
    size = prep.n_groups
    cell_key = prep.gid * max(prep.n_samples, 1) + prep.sample
    cells, cell_of_row = np.unique(cell_key, return_inverse=True)
    cell_of_row = cell_of_row.ravel()
    q_cells = np.column_stack([np.bincount(cell_of_row, weights=prep.q[:, j],
                                           minlength=cells.size) for j in range(len(_Q))])
    cell_group = cells // max(prep.n_samples, 1)
    cell_sample = cells % max(prep.n_samples, 1)
    to_group = sparse.csr_matrix((np.ones(cells.size), (cell_group, np.arange(cells.size))),
                                 shape=(size, cells.size))
    conf_group = prep.gid[prep.conf_rows]
    conf_sample = prep.sample[prep.conf_rows]
    uniform = binning == "uniform"
    if uniform:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        bin_of = np.searchsorted(edges[1:-1], prep.confidence, side="left")
        calib_key = (conf_group * max(prep.n_samples, 1) + conf_sample) * n_bins + bin_of
        calib_cells, calib_of_row = np.unique(calib_key, return_inverse=True)
        calib_of_row = calib_of_row.ravel()
        calib_sums = np.column_stack([
            np.bincount(calib_of_row, minlength=calib_cells.size),
            np.bincount(calib_of_row, weights=prep.confidence, minlength=calib_cells.size),
            np.bincount(calib_of_row, weights=prep.correct, minlength=calib_cells.size)])
        calib_bin = calib_cells % n_bins
        calib_gs = calib_cells // n_bins
        calib_sample = calib_gs % max(prep.n_samples, 1)
        calib_group = calib_gs // max(prep.n_samples, 1)
        to_bin = sparse.csr_matrix(
            (np.ones(calib_cells.size), (calib_group * n_bins + calib_bin,
                                         np.arange(calib_cells.size))),
            shape=(size * n_bins, calib_cells.size))
        edge_table = np.broadcast_to(edges, (size, n_bins + 1))
    else:
        answers = sort_answers(conf_group, prep.confidence, size, order=prep.conf_order)

    def statistic(counts: np.ndarray) -> np.ndarray:
        sums = to_group @ (q_cells * counts[cell_sample][:, None])
        if uniform:
            per_bin = to_bin @ (calib_sums * counts[calib_sample][:, None])
            binned = Binned(edge_table, per_bin[:, 0].reshape(size, n_bins),
                            per_bin[:, 1].reshape(size, n_bins),
                            per_bin[:, 2].reshape(size, n_bins))
        else:
            binned = bin_calibration(conf_group, prep.confidence, prep.correct,
                                     n_groups=size, n_bins=n_bins, strategy="quantile",
                                     weight=counts[conf_sample], order=answers)
        core = _core(np.asarray(sums), binned, weights, zero_division, no_target_reasoning)
        sui = np.where(np.isfinite(core.sui), core.sui, -np.inf)
        ranks = rankdata(-sui, method="average")
        return np.concatenate([*(getattr(core, name) for name in _BOOTSTRAPPED), ranks])

    low, high = stats.bootstrap_groups(max(prep.n_samples, 1), statistic, n_boot=n_boot,
                                       random_state=random_state)
    samples_n = (table["n_samples"].to_numpy(dtype=float) if "n_samples" in table
                 else np.full(size, float(prep.n_samples)))
    for k, name in enumerate(_BOOTSTRAPPED):
        position = table.columns.get_loc(name) + 1
        lo, hi = _with_width(table[name].to_numpy(dtype=float), low[k * size:(k + 1) * size],
                             high[k * size:(k + 1) * size], samples_n, _RANGES.get(name))
        table.insert(position, f"{name}_low", lo)
        table.insert(position + 1, f"{name}_high", hi)
    k = len(_BOOTSTRAPPED)
    table["sui_rank_low"] = low[k * size:(k + 1) * size]
    table["sui_rank_high"] = high[k * size:(k + 1) * size]


def both(frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch,
         **options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(batched, old) tables of ``tiers(frame, ci="bootstrap", **options)``."""
    new = vuln.tiers(frame, ci="bootstrap", **options)
    with monkeypatch.context() as patch:
        patch.setattr(tiers_module, "_bootstrap", old_bootstrap)
        old = vuln.tiers(frame, ci="bootstrap", **options)
    return new, old


def assert_same(new: pd.DataFrame, old: pd.DataFrame) -> None:
    interval = [c for c in old.columns if c.endswith(("_low", "_high"))
                and c.removesuffix("_low").removesuffix("_high") in (*_BOOTSTRAPPED, "sui_rank")]
    assert len(interval) == 2 * len(_BOOTSTRAPPED) + 2
    assert list(new.columns) == list(old.columns)
    # bit for bit, NaN where the old had NaN
    pd.testing.assert_frame_equal(new, old, check_exact=True)


# Confidences with short binary expansions (0.25) and without (0.1, 0.35, 0.85), whose sums
# round: the batched sums must round the same way. Scores likewise.
CONFIDENCES = st.sampled_from([0.0, 0.1, 0.25, 0.35, 0.5, 0.7, 0.85, 0.9, 1.0, np.nan])
SCORES = st.sampled_from([0.0, 0.2, 0.5, 0.7, 0.9, 1.0, np.nan])
SEVERITIES = st.sampled_from(["critical", "high", "medium", "low", None])


@st.composite
def judged_frames(draw) -> pd.DataFrame:
    n_samples = draw(st.integers(1, 7))
    models = ["a", "b", "c"][:draw(st.integers(1, 3))]
    prompts = ["direct", "naive"][:draw(st.integers(1, 2))]
    vulnerable = draw(st.lists(st.booleans(), min_size=n_samples, max_size=n_samples))
    severity = draw(st.lists(SEVERITIES, min_size=n_samples, max_size=n_samples))
    rows = []
    for s in range(n_samples):
        for model in models:
            for prompt in prompts:
                if draw(st.integers(0, 5)) == 0:  # unequal cells; a group may lose samples
                    continue
                said = draw(st.booleans())
                found = vulnerable[s] and said and draw(st.booleans())
                rows.append(dict(
                    sample=f"s{s}", model=model, prompt_type=prompt, judge="j",
                    is_vulnerable=vulnerable[s], said_vulnerable=said, target_found=found,
                    partial_found=found and draw(st.booleans()),
                    type_match=draw(st.sampled_from(["exact", "semantic", "partial", None]))
                    if found else None,
                    severity=severity[s], confidence=draw(CONFIDENCES),
                    rcir=draw(SCORES) if found else np.nan,
                    ava=draw(SCORES) if found else np.nan,
                    fsv=draw(SCORES) if found else np.nan,
                    n_target_match=int(found), n_partial_match=draw(st.integers(0, 1)),
                    n_bonus_valid=draw(st.integers(0, 2)), n_hallucinated=draw(st.integers(0, 2)),
                    n_mischaracterized=int(said and not found)))
    if not rows:  # at least one answer
        rows.append(dict(sample="s0", model="a", prompt_type="direct", judge="j",
                         is_vulnerable=True, said_vulnerable=True, target_found=False,
                         confidence=0.35))
    return pd.DataFrame(rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=judged_frames(),
       binning=st.sampled_from(["uniform", "quantile"]), n_bins=st.integers(1, 12),
       partial_credit=st.sampled_from([0.0, 0.5, 0.3]),
       severity=st.sampled_from([None, "default", "odd"]),
       zero_division=st.sampled_from([0.0, np.nan]),
       by=st.sampled_from([("model",), ("model", "prompt_type"), ()]),
       no_target=st.sampled_from(["zero", "renormalise"]),
       n_boot=st.integers(1, 45), seed=st.integers(0, 3), by_row=st.booleans())
def test_batched_equals_per_replicate_loop(frame, binning, n_bins, partial_credit, severity,
                                           zero_division, by, no_target, n_boot, seed,
                                           by_row) -> None:
    """``by_row``: the exact sums row by row (what a run of many samples takes) instead of
    one dense product."""
    weights = {None: None, "default": vuln.SEVERITY_WEIGHTS,
               "odd": {"critical": 0.7, "high": 0.3, "medium": 0.1, "low": 1.0}}[severity]
    with pytest.MonkeyPatch.context() as monkeypatch:
        if by_row:
            monkeypatch.setattr(vuln_bootstrap, "_DENSE_FLOATS", 0)
        new, old = both(frame, monkeypatch, binning=binning, n_bins=n_bins,
                        partial_credit=partial_credit, severity_weights=weights,
                        zero_division=zero_division, by=by, no_target_reasoning=no_target,
                        n_boot=n_boot, random_state=seed)
    assert_same(new, old)


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
@pytest.mark.parametrize("by", [("model",), ("model", "prompt_type")])
@pytest.mark.parametrize("dense_floats", [vuln_bootstrap._DENSE_FLOATS, 0])
def test_batched_equals_loop_on_planted_runs_over_many_chunks(binning, by, dense_floats,
                                                               monkeypatch) -> None:
    """Planted runs (prompt types with identical answers: SUI ties in every replicate, so
    the rank intervals test that ties survive the batching) with confidences that round, and
    chunks of a few replicates (the last one shorter) so the chunking is exercised; the
    exact sums in one dense product and row by row (``dense_floats=0``)."""
    frame = samples.judged_samples(n_samples=30, seed=5, judges=("judge-three",))
    frame["confidence"] = np.round(np.random.default_rng(2).random(len(frame)), 2)
    monkeypatch.setattr(vuln_bootstrap, "_CHUNK_FLOATS", 7_000)
    monkeypatch.setattr(vuln_bootstrap, "_DENSE_FLOATS", dense_floats)
    new, old = both(frame, monkeypatch, binning=binning, by=by, n_bins=7, n_boot=50,
                    partial_credit=0.3)
    assert_same(new, old)
    assert np.isfinite(new[["sui_rank_low", "sui_rank_high"]].to_numpy()).all()


def test_batched_equals_loop_on_real_files(monkeypatch) -> None:
    from kbench_core.io import load_run

    frame = load_run("sample_data/judged.csv").frame
    for binning in ("uniform", "quantile"):
        new, old = both(frame, monkeypatch, judge="judge-one", binning=binning, n_boot=40)
        assert_same(new, old)


def test_batched_draws_are_the_loops_draws() -> None:
    """bootstrap_groups_batched hands over the count vectors bootstrap_groups draws, in
    order, for odd and even item counts and a last chunk shorter than the others."""
    for n_items in (1, 7, 10):
        seen: list[np.ndarray] = []
        seen_batched: list[np.ndarray] = []

        def one(counts: np.ndarray, seen: list = seen) -> np.ndarray:
            seen.append(counts.copy())
            return counts.astype(float)

        def many(counts: np.ndarray, seen_batched: list = seen_batched) -> np.ndarray:
            seen_batched.extend(counts.copy())
            return counts.astype(float)

        low, high = stats.bootstrap_groups(n_items, one, n_boot=23, random_state=4)
        low_b, high_b = stats.bootstrap_groups_batched(n_items, many, n_boot=23,
                                                       random_state=4, chunk=5)
        assert len(seen_batched) == 23
        np.testing.assert_array_equal(np.vstack(seen), np.vstack(seen_batched))
        np.testing.assert_array_equal(low, low_b)
        np.testing.assert_array_equal(high, high_b)
    with pytest.raises(ValueError, match="chunk must be a whole number >= 1; got 0"):
        stats.bootstrap_groups_batched(3, lambda c: c, chunk=0)


def test_a_group_of_zero_weight_leaves_the_other_groups_bins_alone() -> None:
    """A bootstrap replicate that draws none of a group's samples gives that group zero
    weight. Its equal-mass edges are NaN; before the fix its cut landed at the end of the
    answers and moved the last group's last answer one bin up (out of range when it was in
    the top bin: ``tiers(..., binning="quantile", ci="bootstrap")`` raised). The last
    group's bins must be numpy.percentile's of its answers repeated by their weights."""
    from kbench_core.calibration import bin_calibration

    group = np.array([0, 0, 1, 1, 1, 1])
    confidence = np.array([0.3, 0.6, 0.1, 0.2, 0.4, 0.8])
    correct = np.array([1, 0, 0, 1, 1, 1])
    weight = np.array([0, 0, 2, 1, 1, 1])  # group 0 not drawn
    for n_bins in (2, 3):
        binned = bin_calibration(group, confidence, correct, n_groups=2, n_bins=n_bins,
                                 strategy="quantile", weight=weight)
        repeated = np.repeat(confidence[2:], weight[2:])
        edges = np.percentile(repeated, np.linspace(0, 100, n_bins + 1))
        bins = np.searchsorted(edges[1:-1], confidence[2:], side="left")
        np.testing.assert_allclose(binned.edges[1], edges, rtol=1e-12)
        np.testing.assert_array_equal(
            binned.count[1], np.bincount(bins, weights=weight[2:], minlength=n_bins))
        np.testing.assert_array_equal(
            binned.correct_sum[1],
            np.bincount(bins, weights=weight[2:] * correct[2:], minlength=n_bins))
        assert binned.count[0].sum() == 0 and np.isnan(binned.edges[0]).all()
    # n_bins = 2: edges 0.1, 0.2, 0.8; the top answer (0.8) stays in bin 1 of 2
    frame = pd.DataFrame(dict(sample=["s1", "s2", "s3", "s3"], model=["b", "b", "a", "b"],
                              judge="j", is_vulnerable=True, said_vulnerable=False,
                              target_found=False, confidence=[0.0, 0.0, 0.0, 0.1]))
    table = vuln.tiers(frame, ci="bootstrap", binning="quantile", n_bins=2, n_boot=20)
    assert np.isfinite(table["ece_high"]).all()


def test_replicates_too_heavy_to_pack_are_binned_one_by_one(monkeypatch) -> None:
    frame = samples.judged_samples(n_samples=12, seed=1, judges=("judge-one",))
    frame["confidence"] = np.round(np.random.default_rng(3).random(len(frame)), 2)
    monkeypatch.setattr(vuln_bootstrap._QuantileBins, "PACK_LIMIT", 0)
    new, old = both(frame, monkeypatch, binning="quantile", n_bins=5, n_boot=30)
    assert_same(new, old)


def test_cells_read_from_the_runs_when_many_answers_move(monkeypatch) -> None:
    frame = samples.judged_samples(n_samples=12, seed=2, judges=("judge-one",))
    frame["confidence"] = np.round(np.random.default_rng(5).random(len(frame)), 2)
    monkeypatch.setattr(vuln_bootstrap._QuantileBins, "MOVED_LIMIT", 0.0)
    new, old = both(frame, monkeypatch, binning="quantile", n_bins=6, n_boot=30,
                    by=("model", "prompt_type"))
    assert_same(new, old)
