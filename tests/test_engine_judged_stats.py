"""The tiers' per-group statistics computed in the engine (``engines.judged_stats``) against
the same statistics of the same cells in memory (``vuln.cells.CellStats``, through
``stats.Clusters``), on random cells: one sample, a sample holding every answer, rates at 0
and 1, unequal clusters, cells with only failed judgements, a missing group key. And the
jackknife's centred form against the delete-one-sample jackknife written out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kbench_core.engines.judged_cells import _codes_of, _grouped, _key_lookup
from kbench_core.engines.judged_stats import EngineStats
from kbench_core.stats import Clusters
from kbench_core.vuln.cells import (
    MOMENTS,
    CellStats,
    GroupStats,
    JudgedCells,
    Moment,
    moment_names,
    sum_names,
)

NAMES = sum_names(severity=False)
SPECS = [("tp", "said", "said", False), ("correct", "n", "n", False),
         ("credit_weight", "vul_weight", "vulnerable", False),
         ("valid_credit", "findings", "findings", False),
         ("f2_num", "f2_den", "counted", True)]


def _cells(draw_counts: list[tuple[int, int, int]], seed: int) -> pd.DataFrame:
    """A cell table as the engine holds it: per (model, sample), the failed judgements and
    every sum (flags no larger than the cell's answers, moments with their counts)."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, sample, n in draw_counts:
        row: dict = {"model": None if model == 3 else f"m{model}", "sample": f"s{sample}",
                     "__kbench_failed": int(rng.integers(0, 2))}
        for name in NAMES:
            row[name] = int(rng.integers(0, n + 1)) if n else 0
        row["n"] = n
        for name in MOMENTS:
            total, count, m2 = moment_names(name)
            used = int(rng.integers(0, n + 1))
            values = rng.random(used)
            row[total] = float(values.sum()) if used else None
            row[count] = used
            row[m2] = float(((values - values.mean()) ** 2).sum()) if used else None
        rows.append(row)
    frame = pd.DataFrame(rows).drop_duplicates(["model", "sample"])
    for name in NAMES:
        frame[name] = (frame[name].astype(float) if name.endswith(("_sum", "_m2"))
                       else frame[name].astype("int32"))
    frame["model"] = frame["model"].astype("string")  # text, also when every key is missing
    return frame


def _memory(frame: pd.DataFrame) -> CellStats:
    """The cells with an answer, sorted by (group, sample), as ``JudgedCells``."""
    gid, keys, size = _grouped(frame, ("model",))
    missing = np.bincount(gid, weights=frame["__kbench_failed"].to_numpy(float),
                          minlength=size).astype(np.int64)
    kept = frame["n"].to_numpy() > 0
    sample = pd.factorize(frame["sample"], sort=True)[0]
    order = np.lexsort((sample[kept], gid[kept]))
    sums = {name: frame[name].fillna(0).to_numpy()[kept][order] for name in NAMES}
    table = JudgedCells(keys=keys, size=size, missing=missing, group=gid[kept][order],
                        sample=sample[kept][order], n_samples=int(sample.max(initial=0)) + 1,
                        sums=sums, singletons=bool((sums["n"] <= 1).all()), severity=False)
    return CellStats(table)


def _engine(frame: pd.DataFrame) -> EngineStats:
    import ibis

    con = ibis.duckdb.connect()
    table = con.create_table("cells", frame)
    return EngineStats(lambda: table, ("model",), severity=False, grouped=_grouped,
                       coded=lambda got, groups: _codes_of(got, ("model",),
                                                          _key_lookup(groups, ("model",))))


_CELL = st.tuples(st.integers(0, 3), st.integers(0, 7), st.integers(0, 6))


@settings(max_examples=20, deadline=None)
@given(st.lists(_CELL, min_size=1, max_size=30), st.integers(0, 2**16))
def test_the_engine_s_group_statistics_are_the_cells_in_memory(cells, seed) -> None:
    frame = _cells(cells, seed)
    memory, engine = _memory(frame), _engine(frame)
    assert engine.size == memory.size
    np.testing.assert_array_equal(engine.missing, memory.missing)
    np.testing.assert_array_equal(engine.n_clusters(), memory.n_clusters())
    assert engine.singletons == memory.singletons
    for name in ("n", "tp", "credit_weight", "valid_credit", "f2_den", "invalid"):
        np.testing.assert_allclose(engine.total(name, 0.5, None),
                                   memory.total(name, 0.5, None), rtol=1e-12)
    for credit in (1.0, 0.5):
        got, want = engine.rates(SPECS, credit, None), memory.rates(SPECS, credit, None)
        for left, right in zip(got, want, strict=True):
            np.testing.assert_allclose(left, right, rtol=1e-9, atol=1e-12)
    for name in MOMENTS:
        left, right = engine.moment(name), memory.moment(name)
        for part in ("n", "mean", "var"):
            np.testing.assert_allclose(getattr(left, part), getattr(right, part),
                                       rtol=1e-9, atol=1e-12)
        if not memory.singletons:
            np.testing.assert_allclose(left.k, right.k)
            np.testing.assert_allclose(left.v_cluster, right.v_cluster, rtol=1e-9,
                                       atol=1e-15)


@pytest.mark.parametrize("sizes", [[1, 1, 1, 1], [5, 1, 1], [2, 3], [9], [1, 40, 2, 2, 7]])
def test_the_centred_jackknife_is_the_delete_one_sample_jackknife(sizes) -> None:
    """``Clusters.jackknife`` (the centred sums the engine takes too) against the textbook
    form written out: p̂_(−c) = (Y − y_c)/(N − n_c), V = (G − 1)/G Σ (p̂_(−c) − mean)²."""
    rng = np.random.default_rng(len(sizes))
    n_c = np.array(sizes, dtype=float)
    y_c = np.array([rng.integers(0, s + 1) for s in sizes], dtype=float)
    clusters = Clusters.of(np.zeros(len(sizes), dtype=np.int64), np.arange(len(sizes)),
                           len(sizes), 1)
    k, v = clusters.jackknife(y_c, n_c)
    g = len(sizes)
    if g < 2:
        assert np.isnan(v[0])
        return
    left = (y_c.sum() - y_c) / (n_c.sum() - n_c)
    by_hand = (g - 1) / g * ((left - left.mean()) ** 2).sum()
    assert k[0] == g
    assert v[0] == pytest.approx(by_hand, rel=1e-12, abs=1e-18)


class _Residue(GroupStats):
    """One group of 1.1M equal reasoning scores (0.9) in 370,370 samples, as an engine's sums
    leave them: a standard deviation of 2.2e-12 (rounding), a jackknife of the same size."""

    singletons = False

    def moment(self, name: str) -> Moment:
        return Moment(n=np.array([1_111_110.0]), mean=np.array([0.9]),
                      var=np.array([2.2e-12 ** 2]), k=np.array([370_370.0]),
                      v_cluster=np.array([2.2e-12 ** 2 / 370_370]))


def test_equal_values_with_an_engine_s_rounding_residue_get_the_wilson_bound() -> None:
    """Equal values never print the zero-width [m, m] (``stats.t_interval``), also when an
    engine summed them with a residue above t_interval's 1e-12 (the 10M-row profile printed
    mean_rcir [0.9, 0.9] and a narrower SUI for it): Wilson's score interval of 0.9 on the
    370,370 samples, written out here, and a standard deviation of 0."""
    from scipy.stats import norm

    from kbench_core.vuln.tiers import _Totals

    totals = _Totals(stats=_Residue(), table=None, bins=None, partial_credit=1.0,  # type: ignore[arg-type]
                     severity=None, s={}, core=None, zero_division=0.0)  # type: ignore[arg-type]
    out: dict = {}
    totals.mean_t(out, "mean_rcir", "rcir")
    z, k, p = norm.ppf(0.975), 370_370.0, 0.9
    centre = (p + z * z / (2 * k)) / (1 + z * z / k)
    half = z / (1 + z * z / k) * np.sqrt(p * (1 - p) / k + z * z / (4 * k * k))
    np.testing.assert_allclose(out["mean_rcir_low"], [centre - half], rtol=1e-12)
    np.testing.assert_allclose(out["mean_rcir_high"], [centre + half], rtol=1e-12)
    assert totals.mean_sd("rcir")[2][0] == 0.0
    # a real spread, however small for a score, keeps its t interval
    spread = _Residue()
    spread.moment = lambda name: Moment(  # type: ignore[method-assign]
        n=np.array([1000.0]), mean=np.array([0.9]), var=np.array([1e-6]),
        k=np.array([100.0]), v_cluster=np.array([1e-9]))
    out = {}
    _Totals(stats=spread, table=None, bins=None, partial_credit=1.0,  # type: ignore[arg-type]
            severity=None, s={}, core=None, zero_division=0.0).mean_t(  # type: ignore[arg-type]
        out, "mean_rcir", "rcir")
    assert out["mean_rcir_high"][0] - out["mean_rcir_low"][0] < 2 * half
