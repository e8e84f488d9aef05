r"""Agreement between several judges labelling the same items (SPEC 2.5).

BlockBench's metrics rest on ten subjective decisions of an LLM judge per answer
(``seeds/vuln_judge_metrics.md``, "No inter-rater reliability"); its critique asks for several
judges and a measure of how far they agree. This module takes a validated ``judged`` frame (one
row per sample × detector × prompt type × judge, see :mod:`kbench_core.io`) and treats

* an **item** as one (``sample``, ``model``, ``prompt_type``): one answer of one detector, which
  every judge read;
* a **label** as any judged column: ``target_found``, ``said_vulnerable``, ``type_match``,
  ``rcir``, ``confidence``, the finding counts, ...;
* a **failed judgement** (no row for the judge, or a missing value) as missing, never as "no";
* the judge named ``human`` as the expert reference: it is left out of Fleiss' κ,
  Krippendorff's α, percent agreement and the consensus, and each LLM judge's κ against it is
  reported by :func:`human_agreement`.

=================================  ==================================  =========================
function                           what                                interval (95%)
=================================  ==================================  =========================
:func:`pairwise_kappa`             Cohen's κ per pair of judges        asymptotic SE (statsmodels)
:func:`human_agreement`            Cohen's κ of each judge vs human    asymptotic SE (statsmodels)
:func:`fleiss_kappa`               Fleiss' κ over all judges           asymptotic SE (Gwet 2008)
:func:`krippendorff_alpha`         α, nominal / ordinal / interval     bootstrap over items
:func:`percent_agreement`          share of unanimous items            Wilson
:func:`pairwise_alpha`             α per pair (numeric labels)         bootstrap over items
:func:`label_agreement`            κ, α, % for several labels          as above
:func:`consensus`                  majority-vote judge for ``tiers``   —
:func:`disagreements`              items where judges differ           —
:func:`judge_spread`               ``vuln.tiers`` per judge            those of ``tiers``
=================================  ==================================  =========================

The coefficients come from statsmodels (``cohens_kappa``, ``fleiss_kappa``) and the
``krippendorff`` package; this module only lays the judgements out on an items × judges grid
(one scatter, no per-record loop) and adds what those libraries lack: Gwet's standard error of
Fleiss' κ, and bootstrap replicates that reweight items instead of re-running the library on
each resample.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats as _st
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as _sm_fleiss_kappa

from kbench_core.schema import FINDING_COUNTS, TYPE_MATCHES
from kbench_core.stats import Estimate, bootstrap_groups, check_choice, wilson

__all__ = [
    "CONSENSUS", "DEFAULT_LABELS", "HUMAN", "LANDIS_KOCH", "Level", "Weights", "confusion",
    "consensus", "default_level", "disagreements", "fleiss_kappa", "human_agreement",
    "interpret", "judge_spread", "judged_labels", "judges", "krippendorff_alpha",
    "label_agreement", "pairwise_alpha", "pairwise_kappa", "percent_agreement",
    "spread_summary",
]

HUMAN = "human"
CONSENSUS = "consensus"
ITEM_KEY: tuple[str, ...] = ("sample", "model", "prompt_type")
# Ground truth of the item, the same whichever judge read the answer: copied, never voted on.
TRUTH_COLUMNS: tuple[str, ...] = ("is_vulnerable", "severity", "vuln_type", "true_lines")
REASONING: tuple[str, ...] = ("rcir", "ava", "fsv")
ORDERED_LABELS: dict[str, tuple[str, ...]] = {"type_match": TYPE_MATCHES}
DEFAULT_LABELS: tuple[str, ...] = ("said_vulnerable", "target_found", "type_match", "rcir",
                                   "ava", "fsv", "confidence")
JUDGED_COLUMNS: tuple[str, ...] = ("said_vulnerable", "target_found", "partial_found",
                                   "type_match", "confidence", "rcir", "ava", "fsv",
                                   *FINDING_COUNTS, "claimed_lines")
# Labels whose missing majority the consensus reports (they decide the headline metrics).
REPORTED: tuple[str, ...] = ("said_vulnerable", "target_found", "partial_found", "type_match")
# Landis & Koch (1977): upper bound of each band; below 0 is "poor".
LANDIS_KOCH: tuple[tuple[float, str], ...] = (
    (0.0, "poor"), (0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"),
    (1.0, "almost perfect"))
# The krippendorff package builds a units × values × values array: past this many distinct
# values an interval alpha uses the closed form below instead (same number, O(units) memory).
MAX_ALPHA_VALUES = 256
MISSING = "(missing)"

Level = Literal["nominal", "ordinal", "interval"]
Weights = Literal["linear", "quadratic"] | None
Ci = Literal["asymptotic", "bootstrap"] | None
_Z = float(_st.norm.isf(0.025))
_PAIR_COLUMNS = ["judge_a", "judge_b", "kappa", "kappa_low", "kappa_high", "n", "n_dropped",
                 "percent_agreement"]


# ------------------------------------------------------------------------------ validation



def _check_boot(n_boot: int, random_state: int) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a whole number >= 1; got {n_boot!r}")
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer):
        raise ValueError(f"random_state must be a whole number; got {random_state!r}")


def judges(judged: pd.DataFrame) -> list[str]:
    """The judges of a judged frame: the LLM judges sorted by name, then ``human`` if present."""
    if "judge" not in judged:
        return []
    names = sorted({str(v) for v in pd.unique(judged["judge"].dropna())})
    return [n for n in names if n != HUMAN] + [n for n in names if n == HUMAN]


def judged_labels(judged: pd.DataFrame) -> list[str]:
    """Columns of ``judged`` that judges fill in and that hold at least one value: the SPEC's
    judged columns first, then any extra column that is neither a key nor ground truth."""
    reserved = {*ITEM_KEY, "judge", *TRUTH_COLUMNS, "run"}
    known = [c for c in JUDGED_COLUMNS if c in judged]
    extra = [c for c in judged.columns if c not in reserved and c not in JUDGED_COLUMNS]
    return [c for c in (*known, *extra) if judged[c].notna().any()]


def default_level(judged: pd.DataFrame, label: str) -> Level:
    """The natural level of measurement of a label: ``ordinal`` for ordered categories
    (``type_match``), ``interval`` for numbers, ``nominal`` otherwise (yes/no included)."""
    return _label(judged, label).level


def interpret(value: float | np.ndarray | pd.Series) -> str | np.ndarray:
    """Landis & Koch's (1977) words for a κ (or α): below 0 poor, up to 0.20 slight, 0.40
    fair, 0.60 moderate, 0.80 substantial, then almost perfect; NaN is "undefined".

    >>> interpret(0.75)
    'substantial'
    >>> import numpy as np
    >>> interpret(np.array([-0.1, 0.2, 0.9])).tolist()
    ['poor', 'slight', 'almost perfect']

    References
    ----------
    Landis, J. R. & Koch, G. G. (1977). The measurement of observer agreement for categorical
    data. *Biometrics* 33(1), 159–174.
    """
    values = np.asarray(value, dtype=float)
    upper = np.array([b for b, _ in LANDIS_KOCH[1:-1]])
    names = np.array([w for _, w in LANDIS_KOCH] + ["undefined"], dtype=object)
    # Right-closed bands from 0: 0.00-0.20 slight, 0.21-0.40 fair, ... (Landis & Koch's table).
    index = np.searchsorted(upper, np.nan_to_num(values), side="left") + 1
    index = np.where(values < 0, 0, index)
    index = np.where(np.isnan(values), len(names) - 1, index)
    words = names[index]
    return str(words) if np.ndim(value) == 0 else words


# ------------------------------------------------------------------------------ layout


@dataclass(frozen=True)
class _Layout:
    """The rows of a judged frame placed on an items × judges grid."""

    items: pd.DataFrame        # item key columns, one row per item, in key order
    judges: tuple[str, ...]    # grid columns: LLM judges sorted, then ``human`` if asked for
    rows: np.ndarray           # positions (in the frame) of the rows on the grid
    item: np.ndarray           # item of each such row
    judge: np.ndarray          # grid column of each such row

    @property
    def n_items(self) -> int:
        return len(self.items)

    def grid(self, values: np.ndarray, fill: Any) -> np.ndarray:
        """Per-row ``values`` (already restricted to :attr:`rows`) as an items × judges array."""
        out = np.full((self.n_items, len(self.judges)), fill, dtype=values.dtype)
        out[self.item, self.judge] = values
        return out


def _layout(judged: pd.DataFrame, *, human: bool) -> _Layout:
    missing = [c for c in ("sample", "model", "judge") if c not in judged]
    if missing:
        raise ValueError(f"a judged frame needs the column(s) {', '.join(missing)}")
    codes, names = pd.factorize(judged["judge"])
    names = [str(n) for n in names]
    llm = sorted({n for n in names if n != HUMAN})
    order = llm + ([HUMAN] if human and HUMAN in names else [])
    position = {n: i for i, n in enumerate(order)}
    lut = np.array([position.get(n, -1) for n in names] + [-1], dtype=np.int64)
    judge = lut[codes]
    rows = np.flatnonzero(judge >= 0)
    keys = [c for c in ITEM_KEY if c in judged]
    sub = judged[keys].iloc[rows]
    item = sub.groupby(keys, observed=True, dropna=False, sort=True).ngroup().to_numpy()
    item = item.astype(np.int64)
    n_items = int(item.max()) + 1 if item.size else 0
    _, first = np.unique(item, return_index=True)
    items = sub.iloc[first].reset_index(drop=True)
    judge = judge[rows]
    if item.size:
        cell = item * max(len(order), 1) + judge
        repeats = np.bincount(cell, minlength=n_items * len(order))
        if repeats.max() > 1:
            at = int(np.flatnonzero(repeats[cell] > 1)[0])
            where = ", ".join(f"{k}={sub[k].iat[at]!s}" for k in keys)
            raise ValueError(f"judge {order[judge[at]]!r} labels the item ({where}) more than "
                             "once: the key (sample, model, prompt_type, judge) must be unique")
    return _Layout(items=items, judges=tuple(order), rows=rows, item=item, judge=judge)


@dataclass(frozen=True)
class _Label:
    """One label column as integer codes (categorical) or floats (numeric)."""

    name: str
    numeric: bool
    codes: np.ndarray | None       # per frame row, -1 = missing (categorical labels)
    values: np.ndarray | None      # per frame row, NaN = missing (numeric labels)
    categories: tuple[Any, ...]    # categorical labels: the values in code order
    ordered: bool
    boolean: bool

    @property
    def level(self) -> Level:
        if self.numeric:
            return "interval"
        return "ordinal" if self.ordered and not self.boolean else "nominal"


def _is_boolean(series: pd.Series) -> bool:
    if pd.api.types.is_bool_dtype(series.dtype):
        return True
    if series.dtype == object:
        return pd.api.types.infer_dtype(series, skipna=True) == "boolean"
    return False


def _label(judged: pd.DataFrame, label: str) -> _Label:
    if not isinstance(label, str) or label not in judged.columns:
        offered = ", ".join(judged_labels(judged)) or "none"
        raise ValueError(f"there is no column {label!r} to compare judges on; labels in this "
                         f"frame: {offered}")
    if label in (*ITEM_KEY, "judge"):
        raise ValueError(f"{label!r} identifies the item or the judge; it is not a label")
    series = judged[label]
    if _is_boolean(series):
        codes = series.astype("boolean").to_numpy(dtype=np.int64, na_value=-1)
        return _Label(label, False, codes, None, (False, True), True, True)
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        if not np.isfinite(values[~np.isnan(values)]).all():
            raise ValueError(f"label {label!r} holds infinite values")
        return _Label(label, True, None, values, (), True, False)
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy().astype(np.int64)
        categories = list(series.cat.categories)
        ordered = bool(series.cat.ordered)
    else:
        try:
            codes, uniques = pd.factorize(series, sort=True)
        except TypeError:  # lists (line numbers) in a frame that did not pass io
            codes, uniques = pd.factorize(series.map(str).where(series.notna()), sort=True)
        codes, categories, ordered = codes.astype(np.int64), list(uniques), False
    if label in ORDERED_LABELS:
        order = ORDERED_LABELS[label]
        unknown = sorted({str(c) for c in categories} - set(order))
        if unknown:
            raise ValueError(f"label {label!r} holds {', '.join(map(repr, unknown))}; "
                             f"expected one of {', '.join(map(repr, order))}")
        lut = np.array([order.index(str(c)) for c in categories] + [-1], dtype=np.int64)
        codes, categories, ordered = lut[codes], list(order), True
    return _Label(label, False, codes, None, tuple(categories), ordered, False)


def _categorical(label: _Label, who: str) -> None:
    if label.numeric:
        raise ValueError(
            f"{who} is for categorical labels; {label.name!r} is numeric: use "
            f"krippendorff_alpha(judged, {label.name!r}, level='interval') instead")


def _need_judges(layout: _Layout, who: str, *, human: bool = False) -> None:
    n_llm = sum(j != HUMAN for j in layout.judges)
    if human:
        if n_llm < 1 or HUMAN not in layout.judges:
            raise ValueError(f"{who} needs a judge named 'human' and at least one other judge")
    elif n_llm < 2:
        raise ValueError(f"{who} needs at least two judges other than 'human'; the frame has "
                         f"{n_llm}")


def _code_grid(layout: _Layout, label: _Label) -> np.ndarray:
    assert label.codes is not None
    return layout.grid(label.codes[layout.rows], -1)


def _value_grid(layout: _Layout, label: _Label) -> np.ndarray:
    assert label.values is not None
    return layout.grid(label.values[layout.rows], np.nan)


# ------------------------------------------------------------------------------ Cohen's kappa


def _chance_is_total(table: np.ndarray) -> bool:
    """Both judges used one and the same category only: chance agreement is 1, κ is 0/0.

    Decided on the categories used, not on p_e ≈ 1: with 200k items one dissenting item
    leaves p_e within 1e-5 of 1, and κ is then well defined."""
    rows, cols = np.flatnonzero(table.sum(1) > 0), np.flatnonzero(table.sum(0) > 0)
    return bool(rows.size == 1 and cols.size == 1 and rows[0] == cols[0])


def _kappa_value(table: np.ndarray, weights: Weights) -> float:
    if table.sum() <= 0 or _chance_is_total(table):
        return math.nan
    return float(_sm_cohens_kappa(table, wt=weights, return_results=False))


def _kappa_with_se(table: np.ndarray, weights: Weights) -> tuple[float, float, float]:
    """κ and its asymptotic 95% interval from statsmodels' variance, clipped to [-1, 1]."""
    if table.sum() <= 0 or _chance_is_total(table):
        return math.nan, math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = _sm_cohens_kappa(table, wt=weights)
    kappa = float(result["kappa"])
    # Rounding can leave a variance of -1e-17 at perfect agreement: that is 0, not NaN.
    half = _Z * math.sqrt(max(float(result["var_kappa"]), 0.0))
    return kappa, max(kappa - half, -1.0), min(kappa + half, 1.0)


def _pair_tables(grid: np.ndarray, pairs: Sequence[tuple[int, int]], k: int,
                 ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per pair: the items both judges labelled, their cell in the k × k table, and the
    items only one of them labelled."""
    out = []
    for a, b in pairs:
        has_a, has_b = grid[:, a] >= 0, grid[:, b] >= 0
        both = np.flatnonzero(has_a & has_b)
        cell = grid[both, a] * k + grid[both, b]
        out.append((both, cell, np.flatnonzero(has_a ^ has_b)))
    return out


def _kappa_frame(grid: np.ndarray, names: Sequence[str], pairs: Sequence[tuple[int, int]],
                 label: _Label, weights: Weights, ci: Ci, n_boot: int,
                 random_state: int) -> pd.DataFrame:
    k = len(label.categories)
    parts = _pair_tables(grid, pairs, k)
    rows = []
    for (a, b), (both, cell, one) in zip(pairs, parts, strict=True):
        table = np.bincount(cell, minlength=k * k).reshape(k, k).astype(float)
        if ci == "asymptotic":
            kappa, low, high = _kappa_with_se(table, weights)
        else:
            kappa, low, high = _kappa_value(table, weights), math.nan, math.nan
        n = int(both.size)
        rows.append({"judge_a": names[a], "judge_b": names[b], "kappa": kappa,
                     "kappa_low": low, "kappa_high": high, "n": n, "n_dropped": int(one.size),
                     "percent_agreement": np.trace(table) / n if n else math.nan})
    out = pd.DataFrame(rows, columns=_PAIR_COLUMNS)
    if ci == "bootstrap" and pairs:
        # Items with the same judgements are interchangeable: one bincount per replicate
        # weights the distinct rows, and each pair's table comes from those few rows.
        patterns, inverse = np.unique(grid, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        cells = []
        for a, b in pairs:
            keep = np.flatnonzero((patterns[:, a] >= 0) & (patterns[:, b] >= 0))
            cells.append((keep, patterns[keep, a] * k + patterns[keep, b]))

        def statistic(counts: np.ndarray) -> np.ndarray:
            per_pattern = np.bincount(inverse, weights=counts, minlength=len(patterns))
            return np.array([
                _kappa_value(np.bincount(cell, weights=per_pattern[keep], minlength=k * k)
                             .reshape(k, k), weights) for keep, cell in cells])

        low, high = bootstrap_groups(grid.shape[0], statistic, n_boot=n_boot,
                                     random_state=random_state)
        out["kappa_low"], out["kappa_high"] = low, high
    return out


def _check_weights(label: _Label, weights: Weights) -> None:
    check_choice("weights", weights, (None, "linear", "quadratic"))
    if weights is not None and not label.ordered:
        raise ValueError(f"weights={weights!r} needs ordered categories; {label.name!r} is "
                         "nominal (use weights=None)")


def pairwise_kappa(judged: pd.DataFrame, label: str, *, weights: Weights = None,
                   ci: Ci = "asymptotic", n_boot: int = 1000,
                   random_state: int = 0) -> pd.DataFrame:
    r"""Cohen's κ for every pair of LLM judges, on the items both labelled.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges other than ``human``.
    label : str
        A categorical judged column (``target_found``, ``said_vulnerable``, ``type_match``,
        ...). A numeric label raises an error pointing to
        ``krippendorff_alpha(level="interval")``.
    weights : {None, "linear", "quadratic"}
        Weighted κ for ordered labels (``type_match``: not_mentioned < wrong < partial <
        semantic < exact; yes/no labels count as ordered, where weights change nothing).
    ci : {"asymptotic", "bootstrap", None}
        ``"asymptotic"``: κ ± 1.96·SE with statsmodels' large-sample variance (Fleiss, Cohen &
        Everitt 1969; its weighted form for weighted κ); ``"bootstrap"``: percentile interval
        over ``n_boot`` resamples of the items (seeded by ``random_state``); ``None``: none.

    Returns
    -------
    DataFrame
        One row per pair (in judge order): ``judge_a, judge_b, kappa, kappa_low, kappa_high,
        n`` (items both labelled), ``n_dropped`` (items only one of them labelled) and
        ``percent_agreement`` (share of the ``n`` items with the same value).

    Notes
    -----
    With :math:`p_{jk}` the share of items judge a put in category j and judge b in k, and
    disagreement weights :math:`w_{jk}` (0 on the diagonal; 1 elsewhere, :math:`|j-k|/(K-1)`
    or :math:`(j-k)^2/(K-1)^2`),

    .. math:: \kappa = 1 - \frac{\sum w_{jk} p_{jk}}{\sum w_{jk} p_{j\cdot} p_{\cdot k}}

    which is :math:`(p_o - p_e)/(1 - p_e)` unweighted. κ is computed by statsmodels'
    ``cohens_kappa`` on the K × K table over every category of the label (so weighted κ keeps
    the declared distances even when a category is unused). When both judges use a single,
    shared category, chance agreement is 1 and κ is NaN (0/0), not 1. Interval bounds are
    clipped to [-1, 1].

    Examples
    --------
    >>> from kbench_core.samples import judged_samples
    >>> pairs = pairwise_kappa(judged_samples(), "target_found")
    >>> pairs[["judge_a", "judge_b", "n"]].values.tolist()[0]
    ['judge-one', 'judge-three', 360]

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational and
    Psychological Measurement* 20, 37–46. Cohen, J. (1968). Weighted kappa. *Psychological
    Bulletin* 70, 213–220. Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample
    standard errors of kappa and weighted kappa. *Psychological Bulletin* 72, 323–327.
    """
    check_choice("ci", ci, ("asymptotic", "bootstrap", None))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    _categorical(spec, "pairwise_kappa")
    _check_weights(spec, weights)
    layout = _layout(judged, human=False)
    _need_judges(layout, "pairwise_kappa")
    grid = _code_grid(layout, spec)
    pairs = list(combinations(range(len(layout.judges)), 2))
    return _kappa_frame(grid, layout.judges, pairs, spec, weights, ci, n_boot, random_state)


def human_agreement(judged: pd.DataFrame, label: str, *, weights: Weights = None,
                    ci: Ci = "asymptotic", n_boot: int = 1000,
                    random_state: int = 0) -> pd.DataFrame:
    """Cohen's κ of each LLM judge against the expert labels of the judge named ``human``.

    Same options and formula as :func:`pairwise_kappa`; only the items the human labelled
    count. Returns one row per LLM judge: ``judge, kappa, kappa_low, kappa_high, n,
    n_dropped, percent_agreement``; an empty frame with these columns when the frame has no
    ``human`` judge.
    """
    check_choice("ci", ci, ("asymptotic", "bootstrap", None))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    _categorical(spec, "human_agreement")
    _check_weights(spec, weights)
    columns = ["judge", *_PAIR_COLUMNS[2:]]
    layout = _layout(judged, human=True)
    if HUMAN not in layout.judges or len(layout.judges) < 2:
        return pd.DataFrame(columns=columns)
    grid = _code_grid(layout, spec)
    h = len(layout.judges) - 1
    pairs = [(j, h) for j in range(h)]
    out = _kappa_frame(grid, layout.judges, pairs, spec, weights, ci, n_boot, random_state)
    return out.rename(columns={"judge_a": "judge"}).drop(columns="judge_b")[columns]


# ------------------------------------------------------------------------------ Fleiss' kappa


def _fleiss_counts(grid: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Items × categories counts over the items every judge labelled (statsmodels'
    ``aggregate_raters``, vectorised: it loops over items in Python) and the items left out."""
    labelled = grid >= 0
    complete = labelled.all(axis=1)
    n_dropped = int((labelled.any(axis=1) & ~complete).sum())
    sub = grid[complete]
    n = sub.shape[0]
    index = np.repeat(np.arange(n), sub.shape[1]) * k + sub.ravel()
    return np.bincount(index, minlength=n * k).reshape(n, k).astype(float), n_dropped


def _fleiss_value(table: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Fleiss' κ of a (possibly item-weighted) count table; NaN when chance agreement is 1."""
    if table.shape[0] == 0:
        return math.nan
    w = np.ones(table.shape[0]) if weights is None else weights
    total = w.sum()
    if total <= 0:
        return math.nan
    r = table[0].sum()
    p_cat = (w @ table) / (total * r)
    if (p_cat > 0).sum() < 2:  # one category only: chance agreement 1, κ = 0/0
        return math.nan
    p_e = float(p_cat @ p_cat)
    if weights is None:
        return float(_sm_fleiss_kappa(table))
    p_item = ((table * table).sum(1) - r) / (r * (r - 1))
    return float((w @ p_item / total - p_e) / (1 - p_e))


def _fleiss_se(table: np.ndarray, kappa: float) -> float:
    r"""Gwet's (2008) linearised standard error of Fleiss' κ (every item rated by r judges).

    .. math::
        \kappa_i^* = \frac{p_{a|i} - p_e}{1 - p_e}
                     - 2(1 - \kappa)\frac{p_{e|i} - p_e}{1 - p_e},\qquad
        \widehat{V}(\kappa) = \frac{1}{n(n-1)}\sum_i (\kappa_i^* - \kappa)^2

    with :math:`p_{a|i} = \sum_k r_{ik}(r_{ik}-1)/(r(r-1))`, :math:`\pi_k = \sum_i r_{ik}/(nr)`,
    :math:`p_e = \sum_k \pi_k^2` and :math:`p_{e|i} = \sum_k \pi_k r_{ik}/r`. Hand-written
    because statsmodels gives no variance for Fleiss' κ; it is the formula of Gwet's R package
    irrCAC (``fleiss.kappa.raw``), which the tests reproduce on its published example.
    """
    n = table.shape[0]
    if n < 2 or not math.isfinite(kappa):
        return math.nan
    r = table[0].sum()
    p_cat = table.sum(0) / (n * r)
    p_e = float(p_cat @ p_cat)
    p_item = ((table * table).sum(1) - r) / (r * (r - 1))
    pe_item = table @ p_cat / r
    star = (p_item - p_e) / (1 - p_e) - 2 * (1 - kappa) * (pe_item - p_e) / (1 - p_e)
    return math.sqrt(((star - kappa) ** 2).sum() / (n * (n - 1)))


def fleiss_kappa(judged: pd.DataFrame, label: str, *, ci: Ci = "asymptotic",
                 n_boot: int = 1000, random_state: int = 0) -> Estimate:
    r"""Fleiss' κ over the items every LLM judge labelled.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges other than ``human`` (who is
        left out).
    label : str
        A categorical judged column; numbers raise (use :func:`krippendorff_alpha`).
    ci : {"asymptotic", "bootstrap", None}
        ``"asymptotic"`` (default): κ ± t₀.₉₇₅,ₙ₋₁ · SE with Gwet's (2008) linearised standard
        error (see :func:`_fleiss_se`), which, unlike the null-hypothesis variance of Fleiss,
        Nee & Landis (1979), holds when κ ≠ 0; the upper bound is capped at 1 as in irrCAC.
        ``"bootstrap"``: percentile interval over ``n_boot`` resamples of the items.

    Returns
    -------
    Estimate
        ``value`` κ, ``low``/``high``, ``n`` the items used, ``n_dropped`` the items some but
        not every judge labelled (failed judgements).

    Notes
    -----
    With :math:`r_{ik}` the number of the r judges putting item i in category k,
    :math:`P_i = \sum_k r_{ik}(r_{ik}-1)/(r(r-1))`, :math:`p_k = \sum_i r_{ik}/(nr)`,
    :math:`\kappa = (\bar P - \sum_k p_k^2)/(1 - \sum_k p_k^2)` (statsmodels'
    ``fleiss_kappa``). NaN when every judgement falls in one category (chance agreement 1).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. *Psychological
    Bulletin* 76, 378–382. Gwet, K. L. (2008). Variance estimation of nominal-scale
    inter-rater reliability with random selection of raters. *Psychometrika* 73, 407–430.
    Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability*, 4th ed., chapter 5.
    """
    check_choice("ci", ci, ("asymptotic", "bootstrap", None))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    _categorical(spec, "fleiss_kappa")
    layout = _layout(judged, human=False)
    _need_judges(layout, "fleiss_kappa")
    return _fleiss_estimate(layout, spec, ci, n_boot, random_state)


def _fleiss_estimate(layout: _Layout, spec: _Label, ci: Ci, n_boot: int,
                     random_state: int) -> Estimate:
    table, n_dropped = _fleiss_counts(_code_grid(layout, spec), len(spec.categories))
    n = table.shape[0]
    kappa = _fleiss_value(table)
    low = high = math.nan
    if ci == "asymptotic" and n >= 2 and math.isfinite(kappa):
        se = _fleiss_se(table, kappa)
        half = float(_st.t.ppf(0.975, n - 1)) * se
        low, high = max(kappa - half, -1.0), min(kappa + half, 1.0)
    elif ci == "bootstrap" and n >= 1:
        # Items with the same counts are interchangeable: weight the distinct rows.
        patterns, inverse = np.unique(table, axis=0, return_inverse=True)
        inverse = inverse.ravel()

        def statistic(weights: np.ndarray) -> np.ndarray:
            per_pattern = np.bincount(inverse, weights=weights, minlength=len(patterns))
            return np.array([_fleiss_value(patterns, per_pattern)])

        lo, hi = bootstrap_groups(n, statistic, n_boot=n_boot, random_state=random_state)
        low, high = float(lo[0]), float(hi[0])
    return Estimate(kappa, low, high, n, n_dropped=n_dropped)


# ------------------------------------------------------------------------------ Krippendorff


@dataclass(frozen=True)
class _Units:
    """Pairable units (items with >= 2 judgements) as value counts over a value domain."""

    counts: np.ndarray      # units × values (only values that occur)
    domain: np.ndarray      # the values (codes of categories, or numbers), increasing
    n_dropped: int          # items with exactly one judgement


def _units(grid_codes: np.ndarray, domain: np.ndarray) -> _Units:
    labelled = (grid_codes >= 0).sum(axis=1)
    pairable = labelled >= 2
    sub = grid_codes[pairable]
    n, v = sub.shape[0], len(domain)
    ok = sub >= 0
    unit = np.broadcast_to(np.arange(n)[:, None], sub.shape)[ok]
    counts = np.bincount(unit * v + sub[ok], minlength=n * v).reshape(n, v)
    used = counts.sum(axis=0) > 0
    return _Units(counts[:, used], domain[used], int((labelled == 1).sum()))


def _interval_parts(values: np.ndarray) -> np.ndarray:
    """Per pairable unit: m, Σx, Σx², and Σ_{i≠j}(x_i − x_j)²/(m − 1)."""
    m = (~np.isnan(values)).sum(axis=1).astype(float)
    s1 = np.nansum(values, axis=1)
    s2 = np.nansum(values * values, axis=1)
    within = np.maximum(2 * (m * s2 - s1 * s1), 0.0) / (m - 1)
    return np.column_stack([m, s1, s2, within])


def _interval_alpha(parts: np.ndarray, weights: np.ndarray | None = None) -> float:
    r"""Interval α from unit sums: :math:`1 - (n-1)\sum_u D_u / (2(n T_2 - T_1^2))`.

    The krippendorff package's interval α written with sums instead of its values × values
    coincidence matrix (the same number; a test checks it), so that many distinct values or a
    bootstrap do not need a units × values × values array."""
    m, s1, s2, within = (parts.T if weights is None else (weights @ parts)[:, None])
    n, t1, t2, d_o = m.sum(), s1.sum(), s2.sum(), within.sum()
    expected = 2 * (n * t2 - t1 * t1)
    if n < 2 or expected <= 1e-12 * max(n * t2, 1.0):
        return math.nan
    return float(1 - (n - 1) * d_o / expected)


def _coincidence_alpha(o: np.ndarray, domain: np.ndarray, level: Level) -> float:
    """α from a coincidence matrix, with Krippendorff's (2011) distances."""
    n_v = o.sum(axis=0)
    n = n_v.sum()
    if n < 2 or (n_v > 0).sum() < 2:
        return math.nan
    if level == "nominal":
        delta = 1.0 - np.eye(len(domain))
    elif level == "interval":
        delta = (domain[:, None] - domain[None, :]).astype(float) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(n_v)])
        lo = np.minimum.outer(np.arange(len(n_v)), np.arange(len(n_v)))
        hi = np.maximum.outer(np.arange(len(n_v)), np.arange(len(n_v)))
        delta = (cum[hi + 1] - cum[lo] - (n_v[lo] + n_v[hi]) / 2) ** 2
    expected = (np.outer(n_v, n_v) * delta).sum()
    if expected <= 0:
        return math.nan
    return float(1 - (n - 1) * (o * delta).sum() / expected)


def _pattern_coincidences(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct value-count rows (few: 3 judges and 2 values give at most 10) with their
    per-unit coincidence matrices, and the pattern of each unit."""
    patterns, inverse = np.unique(counts, axis=0, return_inverse=True)
    p = patterns.astype(float)
    m = p.sum(axis=1)
    within = (p[:, :, None] * p[:, None, :]
              - p[:, :, None] * np.eye(p.shape[1])[None]) / (m - 1)[:, None, None]
    return within, inverse.ravel()


def _alpha_grid(layout: _Layout, spec: _Label, level: Level) -> tuple[np.ndarray, np.ndarray]:
    """Codes grid and value domain of a label at a level (numbers become codes of their
    distinct values)."""
    if spec.numeric:
        values = _value_grid(layout, spec)
        domain = np.unique(values[~np.isnan(values)])
        codes = np.where(np.isnan(values), -1,
                         np.searchsorted(domain, np.nan_to_num(values))).astype(np.int64)
        return codes, domain.astype(float)
    if level == "interval" and not spec.boolean:
        raise ValueError(f"level='interval' needs numbers; {spec.name!r} is categorical: use "
                         "level='ordinal' or 'nominal'")
    if level == "ordinal" and not spec.ordered:
        raise ValueError(f"level='ordinal' needs ordered categories; {spec.name!r} is nominal")
    return _code_grid(layout, spec), np.arange(len(spec.categories), dtype=float)


def krippendorff_alpha(judged: pd.DataFrame, label: str, *, level: Level = "nominal",
                       ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                       random_state: int = 0) -> Estimate:
    r"""Krippendorff's α among the LLM judges; missing judgements allowed.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges other than ``human`` (who is
        left out).
    label : str
        Any judged column.
    level : {"nominal", "ordinal", "interval"}
        ``ordinal`` needs ordered categories (``type_match``, yes/no) or numbers;
        ``interval`` needs numbers (``rcir``, ``confidence``, counts) or yes/no (0/1).
    ci : {None, "bootstrap"}
        ``"bootstrap"``: percentile interval over ``n_boot`` resamples of the pairable items
        (Hayes & Krippendorff 2007 resample coincidences; resampling items keeps each item's
        judgements together), seeded by ``random_state``.

    Returns
    -------
    Estimate
        ``value`` α; ``n`` the pairable items (labelled by at least two judges);
        ``n_dropped`` the items only one judge labelled.

    Notes
    -----
    :math:`\alpha = 1 - D_o/D_e` with the coincidence matrix :math:`o_{ck} = \sum_u
    n_{uc}n_{uk}/(m_u - 1)` (minus the diagonal self-pairs) over pairable units, marginals
    :math:`n_c`, :math:`n = \sum n_c`, and :math:`D_o = \sum o_{ck}\delta_{ck}`,
    :math:`D_e = \sum n_c n_k \delta_{ck}/(n-1)`; δ is 0/1 (nominal), the squared difference
    (interval) or Krippendorff's rank distance :math:`(\sum_{g=c}^{k} n_g - (n_c+n_k)/2)^2`
    (ordinal). The value comes from the ``krippendorff`` package (``value_counts`` input,
    built by one ``bincount``); beyond :data:`MAX_ALPHA_VALUES` distinct numbers an interval α
    uses the equivalent closed form of :func:`_interval_alpha`. Bootstrap replicates reweight
    the per-item coincidences (identical items share one matrix), not a re-run per resample.
    NaN when fewer than two distinct values occur (D_e = 0) or no item has two judgements.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for
    Communication, University of Pennsylvania. Hayes, A. F. & Krippendorff, K. (2007).
    Answering the call for a standard reliability measure for coding data. *Communication
    Methods and Measures* 1, 77–89.
    """
    check_choice("level", level, ("nominal", "ordinal", "interval"))
    check_choice("ci", ci, (None, "bootstrap"))
    _check_boot(n_boot, random_state)
    spec = _label(judged, label)
    layout = _layout(judged, human=False)
    _need_judges(layout, "krippendorff_alpha")
    return _alpha_estimate(layout, spec, level, ci, n_boot, random_state)


def _alpha_estimate(layout: _Layout, spec: _Label, level: Level,
                    ci: Literal["bootstrap"] | None, n_boot: int,
                    random_state: int) -> Estimate:
    codes, domain = _alpha_grid(layout, spec, level)
    units = _units(codes, domain)
    n = units.counts.shape[0]
    closed = level == "interval" and len(units.domain) > MAX_ALPHA_VALUES
    if not closed and len(units.domain) > MAX_ALPHA_VALUES:
        raise ValueError(f"{spec.name!r} has {len(units.domain)} distinct values: too many for "
                         f"a {level} alpha; use level='interval' or bin the values")
    parts = None
    if closed or (ci == "bootstrap" and level == "interval"):
        pairable = (codes >= 0).sum(axis=1) >= 2
        parts = _interval_parts(np.where(codes[pairable] >= 0,
                                         domain[np.maximum(codes[pairable], 0)], np.nan))
    if n == 0 or len(units.domain) < 2:
        value = math.nan
    elif closed:
        value = _interval_alpha(parts)
    else:
        value = float(krippendorff.alpha(value_counts=units.counts, value_domain=units.domain,
                                          level_of_measurement=level))
    low = high = math.nan
    if ci == "bootstrap" and n >= 1 and math.isfinite(value):
        if parts is not None:
            def statistic(weights: np.ndarray) -> np.ndarray:
                return np.array([_interval_alpha(parts, weights)])
        else:
            within, pattern = _pattern_coincidences(units.counts)

            def statistic(weights: np.ndarray) -> np.ndarray:
                per_pattern = np.bincount(pattern, weights=weights, minlength=len(within))
                o = np.tensordot(per_pattern, within, axes=1)
                return np.array([_coincidence_alpha(o, units.domain, level)])
        lo, hi = bootstrap_groups(n, statistic, n_boot=n_boot, random_state=random_state)
        low, high = float(lo[0]), float(hi[0])
    return Estimate(value, low, high, n, n_dropped=units.n_dropped)


def pairwise_alpha(judged: pd.DataFrame, label: str, *, level: Level | None = None,
                   ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                   random_state: int = 0) -> pd.DataFrame:
    """Krippendorff's α for every pair of LLM judges (for numeric labels, where κ does not
    apply): ``judge_a, judge_b, alpha, alpha_low, alpha_high, n, n_dropped``. ``level``
    defaults to the label's natural level (:func:`default_level`)."""
    spec = _label(judged, label)
    level = spec.level if level is None else level
    names = [j for j in judges(judged) if j != HUMAN]
    if len(names) < 2:
        raise ValueError("pairwise_alpha needs at least two judges other than 'human'")
    judge_text = judged["judge"].astype(str)
    rows = []
    for a, b in combinations(names, 2):
        pair = judged[judge_text.isin((a, b)).to_numpy()]
        est = krippendorff_alpha(pair, label, level=level, ci=ci, n_boot=n_boot,
                                 random_state=random_state)
        rows.append({"judge_a": a, "judge_b": b, "alpha": est.value, "alpha_low": est.low,
                     "alpha_high": est.high, "n": est.n, "n_dropped": est.n_dropped})
    return pd.DataFrame(rows, columns=["judge_a", "judge_b", "alpha", "alpha_low",
                                       "alpha_high", "n", "n_dropped"])


# ------------------------------------------------------------------------------ percent


def _labelled_range(layout: _Layout, spec: _Label) -> tuple[np.ndarray, np.ndarray]:
    """Per item: how many LLM judges labelled it, and whether their values all agree."""
    if spec.numeric:
        values = _value_grid(layout, spec)
        has = ~np.isnan(values)
        high = np.where(has, values, -np.inf).max(axis=1)
        low = np.where(has, values, np.inf).min(axis=1)
    else:
        codes = _code_grid(layout, spec)
        has = codes >= 0
        high = codes.max(axis=1)
        low = np.where(has, codes, np.iinfo(np.int64).max).min(axis=1)
    return has.sum(axis=1), high == low


def percent_agreement(judged: pd.DataFrame, label: str) -> Estimate:
    """Share of items on which every LLM judge that labelled it gives the same value.

    Over the items at least two judges labelled (``n``; ``n_dropped`` those only one judge
    labelled); Wilson 95% interval. Numbers must be equal to agree; ``human`` is left out.
    """
    spec = _label(judged, label)
    layout = _layout(judged, human=False)
    _need_judges(layout, "percent_agreement")
    return _percent_estimate(layout, spec)


def _percent_estimate(layout: _Layout, spec: _Label) -> Estimate:
    labelled, same = _labelled_range(layout, spec)
    pairable = labelled >= 2
    n = int(pairable.sum())
    agree = int((same & pairable).sum())
    low, high = wilson(agree, n)
    return Estimate(agree / n if n else math.nan, float(low), float(high), n,
                    n_dropped=int((labelled == 1).sum()))


def label_agreement(judged: pd.DataFrame, labels: Sequence[str] | None = None, *,
                    ci_alpha: Literal["bootstrap"] | None = None, n_boot: int = 1000,
                    random_state: int = 0) -> pd.DataFrame:
    """Agreement on several labels at once, for the per-label bars.

    For each label (default: those of :data:`DEFAULT_LABELS` the frame holds): Fleiss' κ with
    its asymptotic interval (categorical labels), Krippendorff's α at the label's natural
    level (bootstrap interval with ``ci_alpha="bootstrap"``) and percent agreement (Wilson).
    Returns ``label, coefficient, level, value, low, high, n, n_dropped``.
    """
    check_choice("ci_alpha", ci_alpha, (None, "bootstrap"))
    _check_boot(n_boot, random_state)
    if labels is None:
        labels = [c for c in DEFAULT_LABELS if c in judged and judged[c].notna().any()]
    layout = _layout(judged, human=False)  # once for every label
    _need_judges(layout, "label_agreement")
    rows = []
    for name in labels:
        spec = _label(judged, name)
        found: list[tuple[str, str, Estimate]] = []
        if not spec.numeric:
            found.append(("fleiss_kappa", "nominal",
                          _fleiss_estimate(layout, spec, "asymptotic", n_boot, random_state)))
        found.append(("krippendorff_alpha", spec.level,
                      _alpha_estimate(layout, spec, spec.level, ci_alpha, n_boot,
                                      random_state)))
        found.append(("percent_agreement", "nominal", _percent_estimate(layout, spec)))
        rows += [{"label": name, "coefficient": what, "level": level, "value": est.value,
                  "low": est.low, "high": est.high, "n": est.n, "n_dropped": est.n_dropped}
                 for what, level, est in found]
    return pd.DataFrame(rows, columns=["label", "coefficient", "level", "value", "low", "high",
                                       "n", "n_dropped"])


# ------------------------------------------------------------------------------ consensus


def _vote_counts(codes: np.ndarray) -> np.ndarray:
    """Per item and judge: how many judges of the item gave this judge's value (0 when the
    judge gave none). O(items · judges²) whatever the number of categories, so free-text
    labels such as ``claimed_lines`` cost no more than yes/no."""
    ok = codes >= 0
    same = (codes[:, :, None] == codes[:, None, :]) & ok[:, None, :]
    return np.where(ok, same.sum(axis=2), 0)


def _votes(codes: np.ndarray, min_votes: int) -> tuple[np.ndarray, np.ndarray]:
    """Winning code per item (-1 when none) and whether any judge gave a value.

    A value wins with at least ``min_votes`` votes when no other value has as many: the
    judges holding the top count are exactly that many (one value), not a multiple (a tie).
    """
    n = codes.shape[0]
    if codes.shape[1] == 0:
        return np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=bool)
    votes = _vote_counts(codes)
    best = votes.max(axis=1)
    holders = (votes == best[:, None]).sum(axis=1)
    top = codes[np.arange(n), votes.argmax(axis=1)]
    winner = np.where((best >= min_votes) & (holders == best) & (best > 0), top, -1)
    return winner, (codes >= 0).any(axis=1)


def _row_median(values: np.ndarray) -> np.ndarray:
    """Median of each row over its non-missing values (NaN when none). ``np.nanmedian`` goes
    through masked arrays and warns once per empty row; with a handful of judges a sort
    along the row is all it takes."""
    if values.shape[1] == 0:
        return np.full(values.shape[0], np.nan)
    ordered = np.sort(values, axis=1)  # NaN last
    m = (~np.isnan(values)).sum(axis=1)
    rows = np.arange(values.shape[0])
    low = ordered[rows, np.maximum((m - 1) // 2, 0)]
    high = ordered[rows, np.minimum(m // 2, values.shape[1] - 1)]
    return np.where(m > 0, np.where(m % 2 == 1, low, (low + high) / 2), np.nan)


def _first_present(frame: pd.DataFrame, layout: _Layout, column: str) -> pd.Series:
    """Per item, the first judge's non-missing value (ground truth is the same for all)."""
    values = frame[column].iloc[layout.rows].reset_index(drop=True)
    return values.groupby(layout.item, sort=True).first().reindex(range(layout.n_items))


def consensus(judged: pd.DataFrame, *, min_votes: int | None = None) -> pd.DataFrame:
    r"""One judge made of the LLM judges' votes: a single-judge frame that ``vuln.tiers``
    accepts (``judge`` = ``"consensus"``), one row per item.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame; ``human`` rows are left out.
    min_votes : int, optional
        Votes a value needs; default a strict majority of the J LLM judges in the run,
        ⌊J/2⌋ + 1 (2 of 3, 3 of 4 or 5).

    Returns
    -------
    DataFrame
        The frame's columns, one row per item (sample, model, prompt type), plus
        ``n_judges`` (judgements present) and ``no_majority`` (the labels of
        ``said_vulnerable, target_found, partial_found, type_match`` that found no majority,
        comma-separated; empty when all did). ``attrs["no_majority"]`` counts the items per
        label and ``attrs["min_votes"]`` records the threshold.

    Notes
    -----
    SPEC 2.5, rule by rule:

    * A **yes/no** label is yes when at least ``min_votes`` judges say yes (and more say yes
      than no), no when at least ``min_votes`` say no; otherwise (yes, no, failed) it has no
      majority, is reported, and is **not credited**: ``target_found`` (and
      ``partial_found``) become false — a target without a yes majority is not found, as in
      the published numbers — and ``said_vulnerable`` becomes the wrong verdict
      (¬``is_vulnerable``), so an undecided answer earns neither a true positive nor a true
      negative. Another yes/no column without a majority is missing.
    * Another **categorical** label (``type_match``, ``claimed_lines``, text) takes the value
      at least ``min_votes`` judges give, if no other value has as many votes; else missing.
    * A **numeric** label takes the median of the judges' values; ``rcir``, ``ava`` and
      ``fsv`` only of the judges that found the target. Finding counts are medians too, so
      they can be halves with an even number of judgements.
    * Ground truth (``is_vulnerable``, ``severity``, ``vuln_type``, ``true_lines``) is
      copied from the first judge that has it.
    """
    layout = _layout(judged, human=False)
    n_judges = len(layout.judges)
    if n_judges == 0:
        raise ValueError("consensus needs at least one judge other than 'human'")
    if min_votes is None:
        min_votes = n_judges // 2 + 1
    if isinstance(min_votes, bool) or not isinstance(min_votes, int | np.integer) \
            or not 1 <= min_votes <= n_judges:
        raise ValueError(f"min_votes must be a whole number from 1 to {n_judges} (the judges "
                         f"other than 'human'); got {min_votes!r}")
    keys = list(layout.items.columns)
    out: dict[str, Any] = {c: layout.items[c].to_numpy() for c in keys}
    for c in keys:
        if isinstance(layout.items[c].dtype, pd.CategoricalDtype):
            out[c] = layout.items[c].reset_index(drop=True)
    found_grid: np.ndarray | None = None
    if "target_found" in judged:
        found = _label(judged, "target_found")
        assert found.codes is not None
        found_grid = layout.grid(found.codes[layout.rows], -1)
    truth = {c: _first_present(judged, layout, c) for c in TRUTH_COLUMNS if c in judged}
    undecided: dict[str, np.ndarray] = {}
    for column in judged.columns:
        if column in keys:
            continue
        if column == "judge":
            out[column] = np.full(layout.n_items, CONSENSUS, dtype=object)
        elif column in truth:
            out[column] = truth[column].reset_index(drop=True)
        else:
            spec = _label(judged, column)
            if spec.numeric:
                values = _value_grid(layout, spec)
                if column in REASONING and found_grid is not None:
                    values = np.where(found_grid == 1, values, np.nan)
                out[column] = _row_median(values)
                continue
            codes = _code_grid(layout, spec)
            winner, voted = _votes(codes, int(min_votes))
            none = voted & (winner < 0)
            if column in REPORTED:
                undecided[column] = none
            if spec.boolean:
                decided = winner >= 0
                value = winner == 1
                if column in ("target_found", "partial_found"):
                    out[column] = value
                elif column == "said_vulnerable" and "is_vulnerable" in truth:
                    vulnerable = truth["is_vulnerable"].astype("boolean")
                    wrong = ~vulnerable.fillna(False).to_numpy(dtype=bool)
                    verdict = np.where(decided, value, wrong)
                    known = decided | vulnerable.notna().to_numpy()
                    out[column] = verdict if known.all() else pd.array(
                        np.where(known, verdict, pd.NA), dtype="boolean")
                else:
                    out[column] = value if decided.all() else pd.array(
                        np.where(decided, value, pd.NA), dtype="boolean")
            else:
                categories = list(spec.categories)
                if isinstance(judged[column].dtype, pd.CategoricalDtype) \
                        or column in ORDERED_LABELS:
                    out[column] = pd.Categorical.from_codes(
                        winner, categories=categories, ordered=spec.ordered)
                else:
                    out[column] = np.array([*categories, None], dtype=object)[winner]
    frame = pd.DataFrame(out)
    frame["n_judges"] = np.bincount(layout.item, minlength=layout.n_items)
    # One bit per reported label, then a lookup of the 2^k joined names (no per-item strings).
    names = list(undecided)
    mask = np.zeros(layout.n_items, dtype=np.int64)
    for bit, column in enumerate(names):
        mask |= undecided[column].astype(np.int64) << bit
    text = np.array([", ".join(c for b, c in enumerate(names) if code >> b & 1)
                     for code in range(2 ** len(names))], dtype=object)
    frame["no_majority"] = text[mask]
    frame.attrs["no_majority"] = {c: int(v.sum()) for c, v in undecided.items()}
    frame.attrs["min_votes"] = int(min_votes)
    return frame[[c for c in judged.columns if c in frame] + ["n_judges", "no_majority"]]


# ------------------------------------------------------------------------------ items


def _decode(spec: _Label, column: np.ndarray) -> Any:
    """Grid column (codes or values) back to the label's own values."""
    if spec.numeric:
        return column
    if spec.boolean:
        return pd.array(np.where(column >= 0, column == 1, pd.NA), dtype="boolean")
    return pd.Categorical.from_codes(column, categories=list(spec.categories),
                                     ordered=spec.ordered)


def disagreements(judged: pd.DataFrame, label: str, *,
                  include_missing: bool = False) -> pd.DataFrame:
    """The items on which the LLM judges give different values, with every judge's value.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame.
    label : str
        Any judged column.
    include_missing : bool
        Also list items where some judges labelled and others failed (missing).

    Returns
    -------
    DataFrame
        The item key (``sample, model, prompt_type``), one column per LLM judge (named after
        it) with its value, ``human`` when the frame has expert labels, then ``n_judges``
        (judgements present), ``n_values`` (distinct values) and ``consensus`` (the strict
        majority value, or the median for numbers; missing without a majority).
    """
    spec = _label(judged, label)
    layout = _layout(judged, human=True)
    llm = [i for i, j in enumerate(layout.judges) if j != HUMAN]
    if spec.numeric:
        grid = _value_grid(layout, spec)
        sub = grid[:, llm]
        has = ~np.isnan(sub)
        sorted_values = np.sort(sub, axis=1)  # NaN last
        steps = (np.diff(sorted_values, axis=1) != 0) & ~np.isnan(sorted_values[:, 1:])
        n_values = has.any(axis=1).astype(int) + steps.sum(axis=1)
    else:
        grid = _code_grid(layout, spec)
        sub = grid[:, llm]
        has = sub >= 0
        # A value held by c judges appears c times with count c: distinct = sum of 1/c.
        votes = _vote_counts(sub)
        n_values = np.rint(np.where(has, 1.0 / np.maximum(votes, 1), 0.0).sum(axis=1))
        n_values = n_values.astype(np.int64)
    n_judges = has.sum(axis=1)
    keep = n_values >= 2
    if include_missing:
        keep |= (n_judges >= 1) & (n_judges < len(llm))
    rows = np.flatnonzero(keep)
    out = layout.items.iloc[rows].reset_index(drop=True)
    reserved = {*out.columns, "n_judges", "n_values", "consensus"}
    for i, name in enumerate(layout.judges):
        column = name if name not in reserved else f"judge {name}"
        out[column] = _decode(spec, grid[rows, i])
    out["n_judges"] = n_judges[rows]
    out["n_values"] = n_values[rows]
    if spec.numeric:
        out["consensus"] = _row_median(sub[rows])
    else:
        winner, _ = _votes(sub[rows], len(llm) // 2 + 1)
        out["consensus"] = _decode(spec, winner)
    return out


def confusion(judged: pd.DataFrame, label: str, judge_a: str, judge_b: str, *,
              include_missing: bool = True) -> pd.DataFrame:
    """Cross-tabulation of two judges' values of a label on the items either labelled.

    Returns a long frame ``value_a, value_b, count`` over every pair of the label's categories
    (in their order; numbers by distinct value), with ``"(missing)"`` for a failed judgement
    when ``include_missing``. ``human`` may be one of the two judges.
    """
    names = judges(judged)
    for name in (judge_a, judge_b):
        if name not in names:
            raise ValueError(f"judge {name!r} is not in the frame; judges: {', '.join(names)}")
    spec = _label(judged, label)
    layout = _layout(judged, human=True)
    a, b = layout.judges.index(judge_a), layout.judges.index(judge_b)
    if spec.numeric:
        values = _value_grid(layout, spec)[:, [a, b]]
        domain = np.unique(values[~np.isnan(values)])
        codes = np.where(np.isnan(values), -1,
                         np.searchsorted(domain, np.nan_to_num(values))).astype(np.int64)
        categories: list[Any] = [f"{v:g}" for v in domain]
    else:
        codes = _code_grid(layout, spec)[:, [a, b]]
        categories = [str(c) if not spec.boolean else ("yes" if c else "no")
                      for c in spec.categories]
    k = len(categories)
    shown = (codes >= 0).any(axis=1) if include_missing else (codes >= 0).all(axis=1)
    shifted = np.where(codes[shown] >= 0, codes[shown], k)  # missing last
    width = k + 1
    counts = np.bincount(shifted[:, 0] * width + shifted[:, 1], minlength=width * width)
    names_all = [*categories, MISSING]
    grid_a, grid_b = np.divmod(np.arange(width * width), width)
    out = pd.DataFrame({"value_a": np.array(names_all, dtype=object)[grid_a],
                        "value_b": np.array(names_all, dtype=object)[grid_b],
                        "count": counts})
    if not include_missing:
        out = out[(grid_a < k) & (grid_b < k)].reset_index(drop=True)
    order = names_all if include_missing else categories
    for column in ("value_a", "value_b"):
        out[column] = pd.Categorical(out[column], categories=order, ordered=True)
    return out


# ------------------------------------------------------------------------------ spread


def judge_spread(judged: pd.DataFrame, *, include_consensus: bool = True,
                 min_votes: int | None = None, **tier_options: Any) -> pd.DataFrame:
    """``vuln.tiers`` computed once per judge, stacked: how much a headline number depends on
    who judged.

    Every judge (LLM judges by name, then ``human``, then ``consensus`` when
    ``include_consensus``) gets the same ``tier_options`` (``by``, ``sui_weights``,
    ``partial_credit``, ...). Returns the tiers' columns with ``judge`` an ordered categorical
    in that order, so ``spread.pivot(index="model", columns="judge", values="tdr")`` puts the
    judges side by side.
    """
    from kbench_core import vuln

    if "judge" in tier_options:
        raise ValueError("judge_spread computes every judge; do not pass judge=")
    names = judges(judged)
    if not names:
        raise ValueError("judge_spread needs a judge column with at least one judge")
    judge_text = judged["judge"].astype(str).to_numpy()
    parts = [vuln.tiers(judged[judge_text == name], judge=name, **tier_options)
             for name in names]
    order = list(names)
    if include_consensus and any(n != HUMAN for n in names):
        parts.append(vuln.tiers(consensus(judged, min_votes=min_votes), **tier_options))
        order.append(CONSENSUS)
    spread = pd.concat(parts, ignore_index=True)
    spread["judge"] = pd.Categorical(spread["judge"].astype(str), categories=order,
                                     ordered=True)
    return spread


def spread_summary(spread: pd.DataFrame, metrics: Sequence[str] = ("tdr", "sui"), *,
                   by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Per group and metric, the spread of a :func:`judge_spread` table across the LLM judges
    (``human`` and ``consensus`` left out): ``metric, low, high, range, sd`` (population) and
    the judges giving the lowest and highest value (``judge_low``, ``judge_high``),
    ``n_judges``."""
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in (*by, "judge", *metrics) if c not in spread]
    if missing:
        raise ValueError(f"spread_summary needs the column(s) {', '.join(missing)}")
    llm = spread[~spread["judge"].astype(str).isin((HUMAN, CONSENSUS))]
    long = llm.melt(id_vars=[*by, "judge"], value_vars=list(metrics), var_name="metric")
    long["judge"] = long["judge"].astype(str)
    long = long.dropna(subset=["value"])
    groups = long.groupby([*by, "metric"], observed=True, sort=False)
    out = groups["value"].agg(low="min", high="max", n_judges="count").reset_index()
    out["sd"] = groups["value"].std(ddof=0).to_numpy()
    lowest = long.loc[groups["value"].idxmin().to_numpy(), [*by, "metric", "judge"]]
    highest = long.loc[groups["value"].idxmax().to_numpy(), [*by, "metric", "judge"]]
    out = out.merge(lowest.rename(columns={"judge": "judge_low"}), on=[*by, "metric"])
    out = out.merge(highest.rename(columns={"judge": "judge_high"}), on=[*by, "metric"])
    out["range"] = out["high"] - out["low"]
    return out[[*by, "metric", "low", "high", "range", "sd", "judge_low", "judge_high",
                "n_judges"]]
