"""BlockBench's seven tiers, one row per group: :func:`tiers` checks its options, prepares one
judge's answers, sums them per group, then writes each tier's columns in a named step
(``_detection`` … ``_location``) and, on request, the bootstrap intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from kbench_core.calibration import ece_interval, mce_interval
from kbench_core.schema import SEVERITIES
from kbench_core.stats import check_choice, jeffreys_effective
from kbench_core.vuln._formulas import (
    _Columns,
    _Core,
    _core,
    _interval_columns,
    _ratio,
    _t,
)
from kbench_core.vuln._prepare import (
    _Q,
    _QI,
    _Answers,
    _answers,
    _one_judge,
    _prepare,
    _weights,
)
from kbench_core.vuln._tier_columns import (
    _calibration,
    _composite,
    _detection,
    _findings,
    _identity,
    _location,
    _reasoning,
    _target,
    _type_match,
)
from kbench_core.vuln.bootstrap import CellInputs, _bootstrap
from kbench_core.vuln.cells import (
    Bins,
    CellSource,
    CellStats,
    GroupStats,
    JudgedCells,
    Moment,
    bins_from_answers,
    read_sums,
)
from kbench_core.vuln.cells import from_answers as answers_cells
from kbench_core.vuln.composite import composite_intervals
from kbench_core.vuln.definitions import (
    DIFFICULTY_MEAN_RATES,
    SUI_WEIGHTS,
    Binning,
)

# The quantity matrix's columns (_Q) by the names of the cells' sums: what the composites
# total and the bootstrap draws per cell.
_DRAWN = tuple({"invalid": "invalid_sum"}.get(q, q) for q in _Q)


@dataclass(frozen=True)
class PreparedAnswers:
    """One judge's answers read once for :func:`tiers` (:func:`prepare_answers`): calling
    :func:`tiers` on it with another partial credit, severity weighting, bins, weights or
    ``zero_division`` re-weighs arrays instead of reading the frame again (the Vulnerability
    page's options on a big run). Treat it as opaque; ``frame`` is the judge's rows."""

    frame: pd.DataFrame = field(metadata={"shared": True})  # the rows handed in, not a copy
    judge: str | None
    by: tuple[str, ...]
    answers: _Answers = field(repr=False)


def prepare_answers(judged: pd.DataFrame, *, by: Sequence[str] = ("model",),
                    judge: str | None = None) -> PreparedAnswers:
    """The answers of ``judge`` (required when the frame holds several) grouped ``by``, read
    into arrays once: hand the result to :func:`tiers` in place of the frame, with the same
    ``by``, as often as options change. Numbers are identical to :func:`tiers` on the frame."""
    by = (by,) if isinstance(by, str) else tuple(by)
    _checked_options(judged, by, None, 1.0, None, 10, "uniform", None, "zero")
    frame, judge_name = _one_judge(judged, judge)
    return PreparedAnswers(frame=frame, judge=judge_name, by=by, answers=_answers(frame, by))


def tiers(judged: pd.DataFrame | PreparedAnswers, *, by: Sequence[str] = ("model",),
          sui_weights: Mapping[str, float] | None = None, partial_credit: float = 1.0,
          severity_weights: Mapping[str, float] | None = None, n_bins: int = 10,
          binning: Binning = "uniform", zero_division: float = 0.0,
          judge: str | None = None, ci: Literal["bootstrap"] | None = None,
          n_boot: int = 1000, random_state: int = 0,
          no_target_reasoning: Literal["zero", "renormalise"] = "zero") -> pd.DataFrame:
    r"""Every metric of BlockBench's seven tiers, one row per group, one judge at a time.

    Parameters
    ----------
    judged : DataFrame or PreparedAnswers
        A validated ``judged`` frame (``docs/formats.md``), or any frame with its columns (e.g. a
        consensus of several judges); or its :func:`prepare_answers` (then ``by`` and
        ``judge`` must be the ones it was prepared with).
    by : sequence of str
        Group columns, default ``("model",)``; ``("model", "prompt_type")`` splits by prompt.
    sui_weights : mapping, optional
        Weights of SUI's components ``f2, tdr, finding_precision, reasoning, calibration``
        (unnamed ones keep the defaults .25, .25, .15, .25, .10); SUI divides by the sum of
        the weights used, so weights need not add to 1.
    partial_credit : float in [0, 1]
        Credit of a PARTIAL_MATCH finding in finding precision and of a target found only
        partially (``partial_found`` column, or ``type_match`` ``"partial"``) in TDR; 1.0 is
        the seed, 0.5 the critique's suggestion.
    severity_weights : mapping, optional
        Severity-weighted TDR, e.g. :data:`SEVERITY_WEIGHTS` (critical 3, high 2, medium 1,
        low 1); a target without severity weighs 1.
    n_bins, binning : int, {"uniform", "quantile"}
        Calibration bins for ECE/MCE (10 uniform bins in the seed; ``"quantile"`` = equal
        mass, see :mod:`kbench_core.calibration`).
    zero_division : float
        Value of a ratio whose denominator is 0: 0.0 (the seed, with finding precision 1.0
        when there are no findings) or ``np.nan`` (undefined stays undefined).
    judge : str, optional
        The judge to use; required when the frame holds several.
    ci : {None, "bootstrap"}
        ``"bootstrap"`` adds the intervals of the composites and the binned statistics:
        ECE's and MCE's simultaneous intervals
        (:func:`kbench_core.calibration.ece_interval`, :func:`~kbench_core.calibration.
        mce_interval`: per-bin Wilson, clustered by sample, Bonferroni over the bins; the
        bootstrap never covered a small ECE or MCE), SUI, TUS, TUS (geometric) and LGI from
        their components' intervals (MOVER, :mod:`kbench_core.vuln.composite`: monotone in
        every component), and percentile intervals of the debiased ECE and of the SUI rank:
        ``n_boot`` resamples of the samples (contracts, with all their answers, so models
        stay paired), ``random_state`` seeded. F1 and F2 get the rates' interval (Wilson on
        the effective n).
    no_target_reasoning : {"zero", "renormalise"}
        How SUI and TUS treat a group that had vulnerable answers but found no target (its
        reasoning means are undefined): ``"zero"`` (default) counts its reasoning as 0, since
        it understood nothing; ``"renormalise"`` leaves the component out and spreads its
        weight over the others (the old behaviour, under which a model that found 0 of 10
        targets could outscore one that found 1). The displayed reasoning means stay NaN
        either way; ``composite_reasoning`` holds the value the composites used.

    Returns
    -------
    DataFrame
        The ``by`` columns, ``judge``, ``n`` (answers used), ``n_missing`` (failed judgements
        left out), ``n_samples`` (distinct samples behind them) and ``few_items`` (fewer than
        30 samples: marked in every leaderboard) and per tier (see :data:`TIERS`) each
        metric, with ``<metric>_low`` and ``<metric>_high``: Wilson for rates, t for means,
        bootstrap for the rest on request.
        Supporting counts: ``n_vulnerable``, ``targets_found``, ``lucky_guesses``,
        ``total_findings``, ``valid_findings``, ``invalid_findings``,
        ``hallucinated_findings``, ``n_reasoning``, ``n_type_match``, ``n_confidence``,
        ``n_location``, ``composite_reasoning``; flags ``sui_renormalised``,
        ``tus_renormalised`` (a component was undefined and left out, the weights of the
        others renormalised) and ``renormalised`` (either).

    Notes
    -----
    Per answer i with ground truth :math:`v_i`, verdict :math:`s_i`, target found
    :math:`f_i` (only on vulnerable samples), confidence :math:`c_i`, correct
    :math:`y_i = [s_i = v_i]`:

    * Tier 1: TP = Σ v s, TN = Σ ¬v ¬s, FP = Σ ¬v s, FN = Σ v ¬s; accuracy = (TP + TN)/N,
      precision = TP/(TP + FP), recall = TP/(TP + FN), FPR = FP/(FP + TN), FNR = FN/(FN + TP),
      :math:`F_\beta = (1+\beta^2)TP / ((1+\beta^2)TP + \beta^2 FN + FP)`, β = 1, 2.
    * Tier 2: TDR = Σ w_i κ_i f_i / Σ w_i v_i (severity weight w, credit κ = 1 or
      ``partial_credit`` for a partial find); lucky guess = v ∧ s ∧ ¬f, rate over TP; bonus
      discovery = share of answers whose valid findings (target + partial + bonus-valid)
      outnumber [f] (BlockBench's rule).
    * Tier 3 (pooled over findings): finding precision = (target + κ·partial + bonus)/all,
      invalid rate = (all − valid)/all, hallucination rate = hallucinated/all, over-flagging
      = invalid/N. No findings: precision 1.0, rates ``zero_division``.
    * Tier 4: mean and population SD (ddof 0) of rcir, ava, fsv over answers with the target
      found; ``avg_reasoning`` = mean of the three means.
    * Tier 5 over answers with the target found and a type_match: exact, exact or semantic,
      partial.
    * Tier 6 over answers with a confidence: ECE, MCE (:mod:`kbench_core.calibration`),
      Brier = mean((c − y)²), overconfidence = P(¬y | c > 0.8), underconfidence =
      P(y | c < 0.5).
    * Tier 7: SUI = Σ w_k c_k / Σ w_k over F2, TDR, finding precision, reasoning, 1 − ECE;
      TUS = TDR · reasoning · (1 − invalid rate); ``tus_geometric`` = its cube root;
      LGI = accuracy − TDR. Reasoning is ``avg_reasoning``, or 0 when vulnerable answers
      found no target (``no_target_reasoning``). Any other NaN component is left out and
      the weights renormalised (``*_renormalised`` says so).
    * Location accuracy = mean over found targets with known lines of
      |claimed ∩ true| / |true|.

    References
    ----------
    BlockBench evaluation metrics and their critique, ``docs/metrics/vuln.md``;
    ``docs/metrics/vuln.md``.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    ready = judged if isinstance(judged, PreparedAnswers) else None
    if ready is not None:
        if by != ready.by or judge not in (None, ready.judge):
            raise ValueError(
                f"these answers were prepared with by={list(ready.by)} and judge="
                f"{ready.judge!r}; tiers was asked for by={list(by)} and judge={judge!r}: "
                "prepare them again (prepare_answers) or pass the same by and judge")
        judged = ready.frame
    cells = judged if isinstance(judged, CellSource) else None
    if cells is not None and judge not in (None, cells.judge):
        raise ValueError(f"these cells are judge {cells.judge!r}'s; tiers was asked for "
                         f"judge={judge!r}")
    weights, severity = _checked_options(
        judged if cells is None else pd.DataFrame(columns=list(cells.columns)), by,
        sui_weights, partial_credit, severity_weights, n_bins, binning, ci,
        no_target_reasoning)
    zero_division = float(zero_division)
    source: pd.DataFrame | _Answers | CellSource
    if cells is not None:
        judge_name, source = cells.judge, cells
    elif ready is not None:
        judge_name, source = ready.judge, ready.answers
    else:
        source, judge_name = _one_judge(judged, judge)
    table, _, groups, answers = _tier_columns(
        source, by, judge_name, weights, partial_credit, severity, n_bins, binning,
        zero_division, no_target_reasoning, intervals=ci == "bootstrap")
    if ci == "bootstrap":
        if answers is not None:  # the answers in memory (a frame)
            prep, _ = _prepare(answers, by, float(partial_credit), severity)
            _bootstrap(table, prep, weights, zero_division, n_bins, binning, n_boot,
                       random_state, no_target_reasoning)
        else:  # the cells only (a run the engine summed)
            _bootstrap(table, _cell_inputs(groups), weights, zero_division, n_bins, binning,
                       n_boot, random_state, no_target_reasoning)
        # ECE and MCE: simultaneous Wilson intervals of the bins (clustered by sample), not
        # the bootstrap, whose percentile interval never covered a small ECE or MCE
        for which in ("ece", "mce"):
            low, high = _bin_interval(groups.bins, groups.size, which)
            position = table.columns.get_loc(which) + 1
            table.insert(position, f"{which}_low", low)
            table.insert(position + 1, f"{which}_high", high)
        # SUI, TUS, LGI from their components' intervals (MOVER; round 3 item 5)
        composite_intervals(table, weights)
    # prepared answers split by difficulty from the judge's rows they were prepared from
    split = ready.frame if ready is not None else source
    if "difficulty" not in by and _has_difficulty(split):
        _difficulty_means(table, split, by, judge_name, dict(
            weights=weights, partial_credit=partial_credit, severity=severity,
            n_bins=n_bins, binning=binning, no_target_reasoning=no_target_reasoning))
    return table


def _has_difficulty(source: pd.DataFrame | _Answers | CellSource) -> bool:
    if isinstance(source, CellSource):
        return source.has_difficulty()
    if isinstance(source, _Answers):
        return False  # prepared answers: the page asks for the split itself
    return "difficulty" in source and bool(source["difficulty"].notna().any())


def _bin_interval(bins: Bins, size: int, which: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kbench_core.calibration.mce_interval` (``which="mce"``) or
    :func:`~kbench_core.calibration.ece_interval` of the calibration cells, each bin's
    interval clustered by sample (the jackknife design effect over the (group, bin) ×
    sample cells, as :func:`~kbench_core.calibration.mce_interval_of` computes it)."""
    interval = {"mce": mce_interval, "ece": ece_interval}[which]
    clusters = bins.clusters(size, 0)
    _, _, deff = clusters.deff(bins.correct_sum, bins.count)
    shape = (size, bins.n_bins)
    return interval(bins.binned(size), deff=deff.reshape(shape),
                    boundary_n=clusters.boundary_n(bins.count).reshape(shape))


def _cell_inputs(groups: _Totals) -> CellInputs:
    """What the bootstrap draws from when only the cells are known: the quantity matrix per
    cell, the cells' groups and samples, the calibration cells."""
    table = groups.table
    assert table is not None  # _tier_columns reads the cells when intervals are asked for
    cells = groups.stats if isinstance(groups.stats, CellStats) else CellStats(table)
    q_cells = np.column_stack([cells.cells(q, groups.partial_credit, groups.severity)
                               for q in _DRAWN]) if table.n_cells else np.zeros((0, len(_Q)))
    return CellInputs(q_cells=q_cells, group=table.group, sample=table.sample,
                      n_groups=table.size, n_samples=table.n_samples, bins=groups.bins)


def _tier_columns(source: pd.DataFrame | _Answers | CellSource, by: tuple[str, ...],
                  judge_name: str | None, weights: Mapping[str, float],
                  partial_credit: float, severity: Mapping[str, float] | None, n_bins: int,
                  binning: str, zero_division: float, no_target_reasoning: str, *,
                  intervals: bool = False,
                  ) -> tuple[pd.DataFrame, _Columns, _Totals, _Answers | None]:
    """The tier table without bootstrap or difficulty means, with its written columns (whose
    ``effective`` holds each rate's effective counts), the totals it was written from and
    the answers read into arrays (None when only their cells are known); ``intervals``: the
    composites' intervals are asked for (F1 and F2 get theirs)."""
    answers: _Answers | None = None
    table: JudgedCells | None = None
    if isinstance(source, CellSource):
        # per-group sums suffice for every number but the bootstrap, which draws the cells
        # themselves: only the sums its quantities are made of are fetched
        stats = source.stats(by)
        table = source.cells(by, read_sums(
            _DRAWN, float(partial_credit), severity, stats.severity)) if intervals else None
        bins = source.bins(by, n_bins, binning, answers=intervals and binning == "quantile",
                           samples=intervals)  # only the intervals cluster by sample
    else:
        answers = source if isinstance(source, _Answers) else _answers(source, by)
        table = answers_cells(answers)
        stats = CellStats(table)
        bins = bins_from_answers(answers, n_bins, binning)
    groups = _totals(stats, table, bins, weights, float(partial_credit), severity,
                     zero_division, no_target_reasoning)
    groups = replace(groups, composite_intervals=intervals)
    out = _identity(groups, by, judge_name)
    for tier in (_detection, _target, _findings, _reasoning, _type_match, _calibration,
                 _composite, _location):
        tier(out, groups)
    groups.flush(out)
    return pd.DataFrame(out.finish()), out, groups, answers


def _difficulty_means(table: pd.DataFrame, frame: pd.DataFrame | CellSource,
                      by: tuple[str, ...],
                      judge_name: str | None, options: dict) -> None:
    """``<rate>_difficulty_mean``: the unweighted mean over the difficulty tiers of each rate
    of :data:`DIFFICULTY_MEAN_RATES` (BlockBench's "Avg" over its four DS tiers), beside the
    rate pooled over answers, and ``n_difficulties``. A tier where the rate is undefined
    (no vulnerable answer, say) is left out of the mean rather than counted as 0; answers
    without a difficulty are in the pooled rate only.

    Each rate with a per-tier interval gets ``<rate>_difficulty_mean_low/_high``: the MOVER
    interval of the mean (Zou & Donner 2008: L = θ̂ − √Σ((θ̂_k − l_k)/K)², U likewise)
    over Jeffreys intervals of the tiers on the effective counts of their clustered Wilson
    intervals (:func:`kbench_core.stats.jeffreys_effective`), the tiers (different
    contracts) independent. The pooled rate's interval is about another number: with tiers
    of 20/10/5/3 contracts it held the tier mean in 55 % of simulated runs; this one in
    93–96 %, where MOVER over the Wilson intervals fell to 90 % near 1
    (``docs/statistics.md``, round 3 item 7)."""
    per, columns, _, _ = _tier_columns(frame, (*by, "difficulty"), judge_name,
                                       zero_division=np.nan, **options)
    for rate, (successes, units, edge) in columns.effective.items():
        if rate in DIFFICULTY_MEAN_RATES:  # Jeffreys on the tier's effective counts
            per[f"{rate}_low"], per[f"{rate}_high"] = jeffreys_effective(successes, units,
                                                                         edge)
    per = per[per["difficulty"].notna()]
    key = (lambda t: pd.MultiIndex.from_frame(t[list(by)].astype(str))) if by else (
        lambda t: pd.Index(np.zeros(len(t), dtype=int)))
    per = per.set_axis(key(per))
    levels = list(range(len(by))) if by else 0
    grouped = per.groupby(level=levels)
    means = grouped[list(DIFFICULTY_MEAN_RATES)].mean()
    counts = grouped["difficulty"].nunique()
    where = key(table)
    for rate in DIFFICULTY_MEAN_RATES:
        after = f"{rate}_high" if f"{rate}_high" in table else rate
        position = table.columns.get_loc(after) + 1
        table.insert(position, f"{rate}_difficulty_mean",
                     means[rate].reindex(where).to_numpy(dtype=float))
        if f"{rate}_low" not in per:
            continue  # F1, F2: no per-tier interval, so none for their mean
        # MOVER over the tiers' (Jeffreys, effective-count) intervals, each present tier
        # weighing 1/K: the tiers hold different contracts, so they are independent
        present = per[rate].notna()
        k = present.groupby(level=levels).transform("sum").to_numpy(dtype=float)
        weight = np.where(present, 1.0 / np.maximum(k, 1.0), 0.0)
        parts = pd.DataFrame({
            "down": (weight * (per[rate] - per[f"{rate}_low"]).fillna(0.0)) ** 2,
            "up": (weight * (per[f"{rate}_high"] - per[rate]).fillna(0.0)) ** 2,
            "open": present & per[f"{rate}_low"].isna()}, index=per.index)
        # (Series, not the frame: a frame's reindex on a one-level MultiIndex finds nothing)
        sums = {name: column.groupby(level=levels).sum().reindex(where).to_numpy(dtype=float)
                for name, column in parts.items()}
        mean = table[f"{rate}_difficulty_mean"].to_numpy(dtype=float)
        shut = sums["open"] == 0
        table.insert(position + 1, f"{rate}_difficulty_mean_low",
                     np.where(shut, mean - np.sqrt(sums["down"]), np.nan))
        table.insert(position + 2, f"{rate}_difficulty_mean_high",
                     np.where(shut, mean + np.sqrt(sums["up"]), np.nan))
    table["n_difficulties"] = counts.reindex(where).fillna(0).to_numpy(dtype=np.int64)


# ------------------------------------------------------------------------------ the steps


def _checked_options(judged: pd.DataFrame, by: tuple[str, ...],
                     sui_weights: Mapping[str, float] | None, partial_credit: float,
                     severity_weights: Mapping[str, float] | None, n_bins: int, binning: str,
                     ci: str | None, no_target_reasoning: str,
                     ) -> tuple[dict[str, float], dict[str, float] | None]:
    """Every option checked once, before any work: the SUI weights and the severity weights
    (None: unweighted) merged with their defaults."""
    missing_cols = [c for c in (*by, "sample", "is_vulnerable", "said_vulnerable",
                                "target_found") if c not in judged]
    if missing_cols:
        raise ValueError(f"tiers needs the column(s) {', '.join(missing_cols)}")
    check_choice("binning", binning, ("uniform", "quantile"))
    check_choice("ci", ci, (None, "bootstrap"))
    check_choice("no_target_reasoning", no_target_reasoning, ("zero", "renormalise"))
    if not 0.0 <= float(partial_credit) <= 1.0:
        raise ValueError(f"partial_credit must lie in [0, 1]; got {partial_credit!r}")
    weights = _weights("sui_weights", sui_weights, SUI_WEIGHTS, tuple(SUI_WEIGHTS))
    if sum(weights.values()) <= 0:
        raise ValueError("sui_weights must not all be 0")
    severity = (None if severity_weights is None else
                _weights("severity_weights", severity_weights, dict.fromkeys(SEVERITIES, 1.0),
                         SEVERITIES))
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a whole number >= 1; got {n_bins!r}")
    return weights, severity


@dataclass(frozen=True)
class _Totals:
    """What every tier reads: the per-group statistics of the answers' cells
    (:class:`~kbench_core.vuln.cells.GroupStats`: cells in memory, or an engine's sums) under
    the options (partial credit, severity weights), the per-group totals of the quantity
    matrix (by name), the calibration cells and the composites computed from them; ``table``
    the cells themselves when they are in memory (the bootstrap draws them), else None."""

    stats: GroupStats
    table: JudgedCells | None
    bins: Bins
    partial_credit: float
    severity: Mapping[str, float] | None
    s: dict[str, np.ndarray]
    core: _Core
    zero_division: float
    pending: list = field(default_factory=list)  # rates whose design effects are due
    # the composites' intervals are asked for (ci="bootstrap"): F1 and F2 get theirs
    composite_intervals: bool = False

    @property
    def size(self) -> int:
        return self.stats.size

    def total(self, name: str) -> np.ndarray:
        """Per group, the sum of a per-answer quantity."""
        return self.stats.total(name, self.partial_credit, self.severity)

    def rate(self, out: dict, name: str, num: str, den: str, *,
             zero_division: float | None = None, value: np.ndarray | None = None,
             units: str | None = None, weighted: bool = False) -> None:
        """The rate Σ num / Σ den per group (quantities named, summed per cell) with its
        Wilson interval clustered by sample (:meth:`~kbench_core.stats.Clusters.deff`);
        ``units`` are what the interval's n counts (default ``den``); ``weighted``: the
        answers weigh unequally in ``den``."""
        total = self.total(den if units is None else units)
        zero = self.zero_division if zero_division is None else zero_division
        if value is None:
            value = _ratio(self.total(num), total, zero)
        out[name] = value
        _interval_columns(out, name, None, None)  # the columns' place; filled in flush()
        self.pending.append((name, (num, den, den if units is None else units, weighted),
                             np.where(total > 0, value * total, 0.0), total))

    def flush(self, out: _Columns) -> None:
        """The design effects of the pending rates, all at once
        (:meth:`~kbench_core.vuln.cells.GroupStats.rates`), then their Wilson intervals on
        the effective numbers (computed together in ``out.finish()``)."""
        if not self.pending:
            return
        deff, edge = self.stats.rates([p[1] for p in self.pending], self.partial_credit,
                                      self.severity)  # edge: monotone in the count (38.8)
        for j, (name, _, successes, total) in enumerate(self.pending):
            out.pending.append((name, successes / deff[:, j], total / deff[:, j],
                                edge[:, j]))
        self.pending.clear()

    def mean_sd(self, moment: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Count, mean and population variance per group of a quantity of
        :data:`~kbench_core.vuln.cells.MOMENTS`, from its cells' sums, counts and squared
        deviations (Chan, Golub & LeVeque's pairwise update: Σ m2_c + Σ n_c(mean_c − mean)²,
        so equal values have no spread)."""
        m = _spread(self.stats.moment(moment))
        return m.n, m.mean, m.var

    def mean_t(self, out: dict, name: str, moment: str, *,
               bounds: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
        """The mean of a quantity of :data:`~kbench_core.vuln.cells.MOMENTS` per group with
        its t interval clustered by sample (the larger of the jackknife over samples and
        s/√n, as :meth:`~kbench_core.stats.Clusters.mean_se`); returns the count behind it."""
        m = _spread(self.stats.moment(moment))
        n, mean, var = m.n, m.mean, m.var
        with np.errstate(invalid="ignore", divide="ignore"):
            v_simple = var / np.maximum(n - 1, 1)
        if self.stats.singletons:
            clustered = (n, np.where(n > 1, np.sqrt(v_simple), np.nan))
        else:
            with np.errstate(invalid="ignore"):
                se = np.sqrt(np.fmax(m.v_cluster, v_simple))
            clustered = (m.k, np.where((n > 1) & (m.k >= 2), se, np.nan))
        _t(out, name, n, mean, var, bounds=bounds, clustered=clustered)
        return n


# The spread below which a mean's values are equal (relative to the mean, at least 1): n
# equal values summed in an engine over a million answers leave a rounding residue far above
# the 1e-12 at which stats.t_interval calls a spread none (1.1M reasoning scores of 0.9 through
# DuckDB: a standard deviation of 2e-12, then printed as [0.9, 0.9], where the 1.1M cells in
# memory gave 1e-16 and the Wilson-type bound). No score kbench averages varies this little.
_NO_SPREAD = 1e-9


def _spread(m: Moment) -> Moment:
    """``m`` with no spread (variance and jackknife 0) where its values are equal up to
    rounding (:data:`_NO_SPREAD`), so that the t interval gives equal values their
    Wilson-type bound whoever summed them."""
    with np.errstate(invalid="ignore"):
        flat = np.sqrt(np.fmax(m.var, 0.0)) <= _NO_SPREAD * np.maximum(np.abs(m.mean), 1.0)
    return replace(m, var=np.where(flat, 0.0, m.var),
                   v_cluster=np.where(flat & np.isfinite(m.v_cluster), 0.0, m.v_cluster))


def _group_sums(stats: GroupStats, partial_credit: float,
                severity: Mapping[str, float] | None) -> np.ndarray:
    """Per group, the columns of the quantity matrix (:data:`_Q`) the composites read."""
    return np.column_stack([stats.total(q, partial_credit, severity)
                            for q in _DRAWN]) if stats.size else np.zeros((0, len(_Q)))


def _totals(stats: GroupStats, table: JudgedCells | None, bins: Bins,
            weights: Mapping[str, float], partial_credit: float,
            severity: Mapping[str, float] | None, zero_division: float,
            no_target_reasoning: str) -> _Totals:
    """Sum the cells per group, bin the confidences, compute the composites."""
    sums = _group_sums(stats, partial_credit, severity)
    core = _core(sums, bins.binned(stats.size), weights, zero_division, no_target_reasoning)
    return _Totals(stats=stats, table=table, bins=bins, partial_credit=partial_credit,
                   severity=severity, s={name: sums[:, i] for name, i in _QI.items()},
                   core=core, zero_division=zero_division)
