"""Is model A really better than model B? Paired differences, clustered errors, adjusted p,
rank intervals and sample-size planning (``docs/statistics.md``).

Models in one run answer the same items, so every comparison is paired: a per-item value (a
bias score, a correct verdict, an effect-size gap) is averaged within each item for each model,
items present for both models are kept (the others are dropped and counted, never imputed), and
the statistics are computed on the per-item differences.

- :func:`paired_difference` — mean difference with its interval and p-value, the test named
  (:class:`PairedEstimate`): the paired t; the exact McNemar test with Newcombe's interval on
  0/1 outcomes; with ``cluster`` (items grouped by bias, study or contract) the CR2
  cluster-robust standard error with Bell–McCaffrey degrees of freedom (:func:`cr2_mean`).
- :func:`compare_models` — every pair, with raw and adjusted p (Holm or Benjamini–Hochberg,
  statsmodels' ``multipletests``) and the test behind each.
- :func:`compare_pair` — one pair with everything a paper quotes; its p is adjusted only over
  the comparisons asked for (one pair: unadjusted).
- :func:`rank_intervals` — each model's rank and its 95% bootstrap interval over items (or
  clusters, marked when fewer than :data:`FEW_CLUSTERS`).
- :func:`samples_needed` — items needed to detect a paired difference.
- :func:`verdict` — the plain-language sentence a paper can quote, claiming a direction only
  when the p it quotes (adjusted for multiplicity when an adjustment is in force) is below α
  and its interval excludes zero (:func:`claims_direction`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from kbench_core import families
from kbench_core.families import CompareDefaults
from kbench_core.stats import Estimate, wilson
from kbench_core.text import plural

__all__ = [
    "COMPARISONS",
    "FEW_CLUSTERS",
    "FEW_ITEMS",
    "ITEM_KEYS",
    "Comparison",
    "PairedEstimate",
    "claims_direction",
    "compare_models",
    "compare_pair",
    "cr2_mean",
    "direction",
    "group_differences",
    "is_lower_better",
    "item_values",
    "lower_is_better_metrics",
    "min_items_sign_test",
    "newcombe_paired",
    "paired_difference",
    "per_item_values",
    "rank_intervals",
    "samples_needed",
    "sign_test",
    "verdict",
]

class _ByKind(Mapping):
    """A read-only ``{kind: value}`` view of the family registry (``ITEM_KEYS``,
    ``COMPARISONS``): families registered later appear too."""

    def __init__(self, attribute: str) -> None:
        self._attribute = attribute

    def _values(self) -> dict:
        return {f.kind: getattr(f, self._attribute) for f in families.all_families()
                if getattr(f, self._attribute) is not None}

    def __getitem__(self, kind: str):
        return self._values()[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())


# The item a model answers and the default comparison, per run kind (each family's own;
# docs/statistics.md): repeated trials are averaged within an item.
ITEM_KEYS: Mapping[str, tuple[str, ...]] = _ByKind("item_key")
COMPARISONS: Mapping[str, CompareDefaults] = _ByKind("comparison")
Correction = Literal["holm", "fdr_bh"] | None
FEW_ITEMS = 30  # a leaderboard marks a model ranked on fewer items than this


def lower_is_better_metrics() -> frozenset[str]:
    """Every metric where lower is better: the union of the registered families' sets (bias
    scores, BMS, ECE, Brier, error and false-positive rates, |agent d − human d|, ...)."""
    return families.lower_is_better()


def is_lower_better(metric: str) -> bool:
    """The metric's direction: True for bias scores, BMS, ECE, Brier, error rates, ..."""
    return metric in families.lower_is_better()


def direction(metric: str) -> Literal["lower", "higher"]:
    """Which way is better for ``metric``: ``"lower"`` (:func:`lower_is_better_metrics`) or
    ``"higher"`` (accuracy, TDR, PAS, ECS, consistency, ... and any metric not listed)."""
    return "lower" if is_lower_better(metric) else "higher"


def per_item_values(frame: pd.DataFrame, kind: str | None = None) -> pd.DataFrame:
    """``frame`` with the per-item columns its family compares (the family's ``per_item``),
    added as floats (NaN = unknown, left out of every comparison rather than counted as 0):

    - bias: ``score`` as given (1 = biased answer); bias_summary: the reported ``bms``;
    - judged: ``correct`` = 1 when ``said_vulnerable == is_vulnerable`` (NaN when the verdict is
      missing, e.g. a failed judgement), and ``target_found_vulnerable`` = ``target_found`` on
      vulnerable samples only (NaN on safe ones, where a target cannot be found and a 0 would
      only dilute the difference);
    - replication: ``abs_diff`` = |d_agent − d_human| with Cohen's d taken from
      ``human_d``/``agent_d`` where given, else converted from the native effects by
      :func:`kbench_core.replication.prepare_tests` (``effect_to_d``); NaN where either d is
      undefined.

    ``kind=None`` detects the kind from the columns.
    """
    kind = kind or families.detect(list(frame.columns))
    family = families.get(kind) if kind is not None and families.is_registered(kind) else None
    if family is None or family.per_item is None:
        known = ", ".join(f.kind for f in families.all_families() if f.per_item is not None)
        raise ValueError(f"runs of kind {kind!r} have no per-item comparison; kinds with one: "
                         f"{known}")
    return family.per_item(frame)


def _item_columns(frame: pd.DataFrame, item: Sequence[str] | str | None) -> list[str]:
    if item is not None:
        columns = [item] if isinstance(item, str) else list(item)
    else:
        kind = families.detect(list(frame.columns))
        if kind not in ITEM_KEYS:
            raise ValueError("cannot tell the item key of this frame; pass item=[...]")
        columns = [c for c in ITEM_KEYS[kind] if c in frame.columns]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"item columns missing from the frame: {', '.join(missing)}")
    return columns


def _label_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of a key column in the sort order of its labels, a missing label (a
    control row's intensity) being the label "" (so it is a level of its own, sorted first)."""
    codes, uniques = pd.factorize(series)  # categoricals factorize on their codes: fast
    labels = np.asarray(uniques, dtype=object)
    missing = codes < 0
    if missing.any():
        blank = np.flatnonzero(labels == "")
        if blank.size:
            codes = np.where(missing, blank[0], codes)
        else:
            labels = np.append(labels, np.array([""], dtype=object))
            codes = np.where(missing, labels.size - 1, codes)
    try:
        order = np.argsort(labels, kind="stable")
    except TypeError:  # mixed types (numbers and ""): order by their text
        order = np.argsort(labels.astype(str), kind="stable")
    rank = np.empty(labels.size, dtype=np.int64)
    rank[order] = np.arange(labels.size)
    return rank[codes], labels[order]


def item_values(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str | None = None,
                cluster: str | None = None) -> pd.DataFrame:
    """Items × models table of ``value`` averaged within each item (NaN where a model has no
    known value); the index holds the item columns (and ``cluster`` when given), sorted.

    Computed on integer codes: each key column is factorised, the codes are combined into one
    item code, and every item × model mean comes from two ``np.bincount`` calls (sum and count
    of the known values) — no groupby over text keys, which dominated on 1M-row runs.
    """
    means, models, keys, arrays = _item_means(frame, value, item, cluster)
    if len(keys) == 1:
        index: pd.Index = pd.Index(arrays[0], name=keys[0], dtype=object)
    else:
        index = pd.MultiIndex.from_arrays(arrays, names=keys)
    return pd.DataFrame(means, index=index,
                        columns=pd.Index(models, name="model", dtype=object))


def _item_means(frame: pd.DataFrame, value: str, item: Sequence[str] | str | None,
                cluster: str | None) -> tuple[np.ndarray, np.ndarray, list[str],
                                              list[np.ndarray]]:
    """The arrays behind :func:`item_values`: the items × models means, the model names (as
    text), the key columns and each key's label per item."""
    if value not in frame.columns:
        raise ValueError(f"no column {value!r} in the frame")
    columns = _item_columns(frame, item)
    keys = columns + ([cluster] if cluster and cluster not in columns else [])
    n = len(frame)
    values = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    item_code = np.zeros(n, dtype=np.int64)
    bound = 1
    per_key = []
    for key in keys:
        codes, labels = _label_codes(frame[key])
        per_key.append((codes, labels))
        if bound * max(labels.size, 1) >= 2**62:  # re-number before the mixed radix overflows
            item_code, uniques = pd.factorize(item_code, sort=True)
            bound = max(uniques.size, 1)
        item_code = item_code * max(labels.size, 1) + codes
        bound *= max(labels.size, 1)
    # sort=True keeps the lexicographic order of the label ranks: items come out sorted
    item_code, uniques = pd.factorize(item_code, sort=True)
    model_code, models = _label_codes(frame["model"])
    n_items, n_models = uniques.size, models.size
    cell = item_code * n_models + model_code
    known = np.isfinite(values)
    size = n_items * n_models
    sums = np.bincount(cell[known], weights=values[known], minlength=size)
    counts = np.bincount(cell[known], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / counts, np.nan).reshape(n_items, n_models)
    first = np.zeros(n_items, dtype=np.int64)
    first[item_code] = np.arange(n)  # any row of an item carries its labels
    arrays = [labels[codes[first]] for codes, labels in per_key]
    return means, models.astype(str), keys, arrays


TestName = Literal["paired t", "CR2 t", "exact McNemar", "exact sign"]
FEW_CLUSTERS = 10  # fewer (effective) clusters than this: intervals and ranks are marked
_TEST_TEXT = {"paired t": "paired t test", "CR2 t": "CR2 cluster-robust t test, "
              "Bell–McCaffrey df", "exact McNemar": "exact McNemar test",
              "exact sign": "exact sign test"}


@dataclass(frozen=True)
class PairedEstimate(Estimate):
    """:class:`~kbench_core.stats.Estimate` of a paired difference, with the test behind its
    p-value and interval.

    ``test``: ``"paired t"`` (t on n − 1 df), ``"CR2 t"`` (cluster-robust CR2 standard error,
    Bell–McCaffrey df), ``"exact McNemar"`` (0/1 outcomes: the discordant items, with
    Newcombe's interval) or ``"exact sign"`` (every difference alike: no interval), ``None``
    when there is no test (fewer than two shared items, or one cluster). ``se`` is the
    standard error, ``df`` the t degrees of freedom (NaN where no t is used),
    ``n_clusters`` the clusters behind the shared items (None without clusters) and
    ``n_discordant`` the items where exactly one model scored 1 (0/1 outcomes only).
    """

    test: TestName | None = None
    se: float = math.nan
    df: float = math.nan
    n_clusters: int | None = None
    n_discordant: int | None = None

    @property
    def effective_clusters(self) -> float:
        """Bell–McCaffrey df + 1: the number of equal clusters that would give the same
        degrees of freedom (G for G equal clusters; far fewer when one cluster dominates).
        NaN without the CR2 test."""
        return self.df + 1 if self.test == "CR2 t" else math.nan


def cr2_mean(diff: np.ndarray, codes: np.ndarray, n_groups: int) -> tuple[float, float]:
    r"""CR2 cluster-robust standard error of a mean and its Bell–McCaffrey degrees of freedom.

    Written by hand: statsmodels offers CR1 only (``cov_type="cluster"``), and CR1 with
    t(G − 1) collapses with unequal clusters (it covers 61 % with one cluster of 40 and nine
    of 2; ``docs/statistics.md``, "Round 2 (issue 23)"). For OLS on a constant both have a
    closed form. With n items, cluster g holding :math:`n_g` of them
    (:math:`p_g = n_g/n`), residuals :math:`e_i = d_i - \bar d` and cluster sums
    :math:`S_g = \sum_{i\in g} e_i`, the CR2 adjustment
    :math:`A_g = (I - H_{gg})^{-1/2}` of Bell & McCaffrey (2002) scales :math:`S_g` by
    :math:`(1-p_g)^{-1/2}`, so

    .. math:: \widehat{V}_{CR2} = \frac{1}{n^2}\sum_g \frac{S_g^2}{1-p_g},\qquad
              \nu_{BM} = \Big[\sum_g w_g^2 p_g^2 (1-2p_g) + \big(\sum_g w_g p_g^2\big)^2
              \Big]^{-1},\ w_g = \frac{1}{1-p_g},

    the Bell–McCaffrey (2002) Satterthwaite df :math:`(\mathrm{tr}\,M)^2/\mathrm{tr}(M^2)`
    under independent homoskedastic errors (Imbens & Kolesár 2016, eq. 8;
    Pustejovsky & Tipton 2018, *J. Business & Economic Statistics* 36(4)). G equal clusters
    give exactly statsmodels' CR1 SE (:math:`w_g = G/(G-1)`) and :math:`\nu = G - 1`; one
    item per cluster gives the paired t exactly.

    References: Bell, R. M. & McCaffrey, D. F. (2002), *Survey Methodology* 28(2), 169–181;
    Imbens, G. W. & Kolesár, M. (2016), *Review of Economics and Statistics* 98(4), 701–712;
    Cameron & Miller (2015) §VI.
    """
    n = diff.size
    resid = diff - diff.mean()
    sums = np.bincount(codes, weights=resid, minlength=n_groups)
    sizes = np.bincount(codes, minlength=n_groups)
    sums, share = sums[sizes > 0], sizes[sizes > 0] / n
    if share.size < 2:
        return math.nan, math.nan
    weight = 1.0 / (1.0 - share)
    variance = float(np.sum(weight * sums**2)) / n**2
    df = 1.0 / float(np.sum(weight**2 * share**2 * (1 - 2 * share))
                     + np.sum(weight * share**2) ** 2)
    return math.sqrt(max(variance, 0.0)), df


def newcombe_paired(both: np.ndarray, a_only: np.ndarray, b_only: np.ndarray,
                    neither: np.ndarray, *, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Newcombe's (1998) method 10 interval for a difference of paired proportions,
    elementwise over count arrays (``both`` = items where A and B scored 1, ``a_only``,
    ``b_only``, ``neither``).

    Written by hand (no Python library has it; R's ``PropCIs::scoreci.mp`` is Tango's). With
    :math:`\hat p_A = (both + a_{only})/n`, :math:`\hat p_B = (both + b_{only})/n`, their Wilson
    intervals :math:`(l_A, u_A)`, :math:`(l_B, u_B)` and the phi coefficient of the 2 × 2
    table :math:`\phi = C/\sqrt{\text{margins}}` (0 when a margin is 0), where
    :math:`C = ad - bc` (a = both, b = a_only, c = b_only, d = neither) when negative,
    :math:`ad - bc - n/2` when that is positive and 0 otherwise (Newcombe's correction, as in
    Altman et al., *Statistics with Confidence*, 2nd ed., 2000, p. 52):

    .. math:: L = \Delta - \sqrt{(\hat p_A - l_A)^2 - 2\phi(\hat p_A - l_A)(u_B - \hat p_B)
              + (u_B - \hat p_B)^2},

    U likewise with the roles swapped. It stays inside [−1, 1], has width at every n, and
    (36, 12, 2, 0) gives [0.0569, 0.3404] (worked in the test).

    Newcombe, R. G. (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. *Statistics in Medicine* 17, 2635–2650.
    """
    both, a_only, b_only, neither = (np.asarray(x, dtype=float)
                                     for x in (both, a_only, b_only, neither))
    n = both + a_only + b_only + neither
    with np.errstate(invalid="ignore", divide="ignore"):
        pa, pb = (both + a_only) / n, (both + b_only) / n
    la, ua = wilson(both + a_only, n, level=level)
    lb, ub = wilson(both + b_only, n, level=level)
    margins = (both + a_only) * (b_only + neither) * (both + b_only) * (a_only + neither)
    cross = both * neither - a_only * b_only
    # Newcombe's correction of a positive association: ad − bc shrunk by n/2, floored at 0
    cross = np.where(cross > n / 2, cross - n / 2, np.minimum(cross, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(margins > 0, cross / np.sqrt(np.where(margins > 0, margins, 1)), 0.0)
    delta = pa - pb
    low = delta - np.sqrt(np.maximum((pa - la) ** 2 - 2 * phi * (pa - la) * (ub - pb)
                                     + (ub - pb) ** 2, 0))
    high = delta + np.sqrt(np.maximum((pb - lb) ** 2 - 2 * phi * (pb - lb) * (ua - pa)
                                      + (ua - pa) ** 2, 0))
    return np.clip(low, -1, 1), np.clip(high, -1, 1)


def sign_test(diff: np.ndarray) -> float:
    """Exact two-sided sign test of the non-zero differences (scipy's ``binomtest`` with
    p = ½); 1.0 when every difference is 0. On 0/1 outcomes this is the exact McNemar test
    (the non-zero differences are the discordant items)."""
    nonzero = diff[diff != 0]
    if nonzero.size == 0:
        return 1.0
    return float(stats.binomtest(int((nonzero > 0).sum()), int(nonzero.size), 0.5).pvalue)


def _is_binary(values: np.ndarray) -> np.ndarray:
    return (values == 0) | (values == 1)


def _paired(table: pd.DataFrame, a: str, b: str, cluster: str | None,
            level: float) -> PairedEstimate:
    for model in (a, b):
        if model not in table.columns:
            raise ValueError(f"model {model!r} is not in the frame")
    codes = (pd.factorize(table.index.get_level_values(cluster))[0] if cluster is not None
             else None)
    return _paired_values(table[a].to_numpy(dtype=float), table[b].to_numpy(dtype=float),
                          codes, level)


def _paired_values(a: np.ndarray, b: np.ndarray, cluster: np.ndarray | None,
                   level: float) -> PairedEstimate:
    """The paired estimate from two models' per-item values (NaN = not answered) and each
    item's cluster code (non-negative integers, from ``pd.factorize`` once for every pair;
    None: no clustering), choosing the test as :func:`paired_difference` describes."""
    known_a, known_b = ~np.isnan(a), ~np.isnan(b)
    both = known_a & known_b
    dropped = int((known_a | known_b).sum() - both.sum())
    diff = a[both] - b[both]
    n = int(diff.size)
    codes = sizes = None
    n_groups = None
    if cluster is not None:
        codes = cluster[both]
        sizes = np.bincount(codes)
        n_groups = int(np.count_nonzero(sizes))
    if n < 2:
        return PairedEstimate(float(diff.mean()) if n else math.nan, math.nan, math.nan, n,
                              None, dropped, n_clusters=n_groups)
    mean = float(diff.mean())
    binary = bool(_is_binary(a[both]).all() and _is_binary(b[both]).all())
    if binary and (n_groups is None or n_groups == n):
        # 0/1 outcomes on independent items (or one item per cluster): exact McNemar on the
        # discordant items and Newcombe's interval, which stays inside [-1, 1].
        a_only, b_only = int((diff > 0).sum()), int((diff < 0).sum())
        both_1 = int(((a[both] == 1) & (b[both] == 1)).sum())
        low, high = newcombe_paired(np.array([both_1]), np.array([a_only]),
                                    np.array([b_only]), np.array([n - both_1 - a_only - b_only]),
                                    level=level)
        return PairedEstimate(mean, float(low[0]), float(high[0]), n, sign_test(diff),
                              dropped, test="exact McNemar",
                              se=float(diff.std(ddof=1) / math.sqrt(n)),
                              n_clusters=n_groups, n_discordant=a_only + b_only)
    scale = float(np.abs(diff).max())
    if cluster is None:
        se, df = float(diff.std(ddof=1) / math.sqrt(n)), float(n - 1)
    else:
        if n_groups < 2:  # one cluster: no between-cluster spread to estimate
            return PairedEstimate(mean, math.nan, math.nan, n, None, dropped, n_clusters=1)
        se, df = cr2_mean(diff, codes, sizes.size)
    if se <= 1e-12 * scale or scale == 0:
        # Degenerate: every difference (or every cluster's) is the same, so a t statistic
        # would be infinite. The exact sign test is the honest p; no interval. With clusters
        # its units are the clusters' mean differences: items of one contract are not
        # independent evidence, so 3 contracts give p = 0.25 however many prompts each has.
        if cluster is not None:
            present = sizes > 0
            diff = np.bincount(codes, weights=diff)[present] / sizes[present]
        return PairedEstimate(mean, math.nan, math.nan, n, sign_test(diff), dropped,
                              test="exact sign", se=se, n_clusters=n_groups)
    t_crit = float(stats.t.ppf((1 + level) / 2, df))
    p = float(2 * stats.t.sf(abs(mean / se), df))
    low, high = mean - t_crit * se, mean + t_crit * se
    if binary:  # a difference of proportions cannot leave [-1, 1]
        low, high = max(low, -1.0), min(high, 1.0)
    return PairedEstimate(mean, low, high, n, p, dropped,
                          test="paired t" if cluster is None else "CR2 t", se=se, df=df,
                          n_clusters=n_groups)


def paired_difference(frame: pd.DataFrame, value: str, a: str, b: str, *,
                      item: Sequence[str] | str | None = None, cluster: str | None = None,
                      level: float = 0.95) -> PairedEstimate:
    r"""Mean of (a − b) over the items both models answered, with its interval and p-value
    (a :class:`PairedEstimate`, whose ``test`` names the test used).

    Each model's ``value`` is first averaged within each item (:func:`item_values`; ``item``
    None = the run kind's key, :data:`ITEM_KEYS`). Items only one of the two models answered
    are dropped and counted in ``n_dropped``, never imputed.

    Notes
    -----
    With the per-item differences :math:`d_i`, :math:`\bar d = \frac1n\sum d_i`:

    - 0/1 outcomes (both models' per-item values all 0 or 1) on independent items (no
      ``cluster``, or one item per cluster): the exact McNemar test — the exact binomial test
      of the discordant items, as statsmodels' ``mcnemar(exact=True)`` — and Newcombe's (1998)
      method 10 interval (:func:`newcombe_paired`), which stays inside [−1, 1]. A t test on
      0/1 differences claimed "A scores higher" (p = 0.016) from 4 wins and 1 tie; McNemar
      gives p = 0.125 whether or not the tie is counted (``test = "exact McNemar"``);
    - no ``cluster``: :math:`SE = s_d/\sqrt n`, interval :math:`\bar d \pm t_{n-1} SE`,
      p from :math:`t = \bar d / SE` on n − 1 df — the paired t test
      (``scipy.stats.ttest_rel``; ``test = "paired t"``);
    - ``cluster`` (G clusters, e.g. bias, study, contract): the CR2 cluster-robust SE with
      Bell–McCaffrey degrees of freedom (:func:`cr2_mean`; ``test = "CR2 t"``). With equal
      clusters this is the CR1 SE and G − 1 df; with unequal ones CR1 and t(G − 1) covered
      61 % (one cluster of 40, nine of 2), CR2 covers 95 %. On 0/1 outcomes its interval is
      cut to [−1, 1]. One cluster: no interval (NaN), as its spread cannot be estimated.

    Degenerate differences (every item's difference equal, or a cluster-robust SE of 0) have no
    t statistic: the p-value is the exact two-sided sign test over the non-zero differences
    (:func:`sign_test`; 1 when all are 0) — over the G clusters' mean differences when
    ``cluster`` is given — and the interval is NaN (``test = "exact sign"``). Fewer than two
    shared items (or one cluster) give NaN bounds and no p (``test = None``).

    References
    ----------
    Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust
    inference. *Journal of Human Resources* 50(2), 317–372.
    Newcombe, R. G. (1998). *Statistics in Medicine* 17, 2635–2650.
    Bell, R. M. & McCaffrey, D. F. (2002). *Survey Methodology* 28(2), 169–181.
    """
    # From the arrays behind item_values: its labelled frame costs more than the test on
    # small runs.
    means, models, keys, arrays = _item_means(frame, value, item, cluster)
    names = list(models)
    for model in (a, b):
        if model not in names:
            raise ValueError(f"model {model!r} is not in the frame")
    if len(set(names)) < len(names):  # two labels with one text: keep the frame's semantics
        return _paired(item_values(frame, value, item=item, cluster=cluster), a, b, cluster,
                       level)
    codes = pd.factorize(arrays[keys.index(cluster)])[0] if cluster is not None else None
    return _paired_values(means[:, names.index(a)], means[:, names.index(b)], codes, level)


_PAIR_CELLS = 1_000_000  # pairs × items per chunk of compare_models (8 MB per float array)


def _sign_p(positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Exact two-sided sign test (:func:`sign_test`) from the counts of positive and negative
    differences, elementwise: for p = ½ the binomial is symmetric, so binomtest's p is
    min(1, 2·P(X ≤ min(k, m − k))), and 1 when m = 0."""
    m = positive + negative
    return np.where(m > 0, np.minimum(1.0, 2 * stats.binom.cdf(
        np.minimum(positive, negative), np.maximum(m, 1), 0.5)), 1.0)


def _pairs_paired(values: np.ndarray, first: np.ndarray, second: np.ndarray,
                  cluster: np.ndarray | None, level: float) -> pd.DataFrame:
    """:func:`_paired_values` for many pairs of models at once (``values``: models × items,
    NaN = not answered; pair k is ``first[k]`` − ``second[k]``): the same rules, tests and
    numbers, each computed with numpy over a pairs × items array (and, with ``cluster``, the
    per-pair cluster sums from one ``np.bincount`` over pair-and-cluster codes), and each scipy
    distribution called once on arrays. The columns of :func:`compare_models` from ``delta``
    on."""
    a, b = values[first], values[second]
    size = first.size
    known_a, known_b = ~np.isnan(a), ~np.isnan(b)
    both = known_a & known_b
    n = both.sum(axis=1)
    dropped = (known_a | known_b).sum(axis=1) - n
    diff = np.where(both, a - b, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = diff.sum(axis=1) / n
        resid = np.where(both, diff - mean[:, None], 0.0)
        se_items = np.sqrt((resid**2).sum(axis=1) / (n - 1)) / np.sqrt(n)
    scale = np.abs(diff).max(axis=1, initial=0.0)
    binary = ~(both & ~(_is_binary(a) & _is_binary(b))).any(axis=1)
    positive, negative = (both & (diff > 0)).sum(axis=1), (both & (diff < 0)).sum(axis=1)
    ones = (both & (a == 1) & (b == 1)).sum(axis=1)
    two = n >= 2
    if cluster is None:
        n_groups = None
        independent = np.ones(size, dtype=bool)
        one_cluster = np.zeros(size, dtype=bool)
        se, df = se_items, (n - 1).astype(float)
        unit_positive, unit_negative = positive, negative
    else:
        groups = int(cluster.max()) + 1 if cluster.size else 1
        cells = (np.arange(size)[:, None] * groups + cluster[None, :])[both]
        sizes = np.bincount(cells, minlength=size * groups).reshape(size, groups)
        sums = np.bincount(cells, weights=resid[both], minlength=size * groups).reshape(
            size, groups)
        n_groups = (sizes > 0).sum(axis=1)
        independent = n_groups == n
        one_cluster = n_groups < 2
        # cr2_mean on every pair: empty clusters add 0 to each sum (share 0, weight 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = sizes / n[:, None]
            weight = 1.0 / (1.0 - share)
            variance = (weight * sums**2).sum(axis=1) / n.astype(float) ** 2
            df = 1.0 / ((weight**2 * share**2 * (1 - 2 * share)).sum(axis=1)
                        + (weight * share**2).sum(axis=1) ** 2)
            se = np.sqrt(np.maximum(variance, 0.0))
        # the sign test's units with clusters: each cluster's mean difference
        totals = np.bincount(cells, weights=diff[both], minlength=size * groups).reshape(
            size, groups)
        present = sizes > 0
        unit_positive = (present & (totals > 0)).sum(axis=1)
        unit_negative = (present & (totals < 0)).sum(axis=1)
    mcnemar = two & binary & independent
    no_test = ~two | (~mcnemar & one_cluster)
    with np.errstate(invalid="ignore"):
        degenerate = ~no_test & ~mcnemar & ((se <= 1e-12 * scale) | (scale == 0))
    t_test = ~no_test & ~mcnemar & ~degenerate
    t_df = np.where(t_test, df, 1.0)
    t_crit = stats.t.ppf((1 + level) / 2, t_df)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_t = 2 * stats.t.sf(np.abs(mean / se), t_df)
    t_low, t_high = mean - t_crit * se, mean + t_crit * se
    t_low = np.where(binary, np.maximum(t_low, -1.0), t_low)
    t_high = np.where(binary, np.minimum(t_high, 1.0), t_high)
    nc_low, nc_high = newcombe_paired(ones, positive, negative,
                                      n - ones - positive - negative, level=level)
    p_items = _sign_p(positive, negative)
    p_units = _sign_p(unit_positive, unit_negative)
    p_value = np.select([mcnemar, degenerate, t_test], [p_items, p_units, p_t], np.nan)
    test = np.select([mcnemar, degenerate, t_test],
                     ["exact McNemar", "exact sign", "paired t" if cluster is None else "CR2 t"],
                     "")
    clusters = (pd.array([pd.NA] * size, dtype="Int64") if n_groups is None
                else pd.array(n_groups, dtype="Int64"))
    return pd.DataFrame({
        "delta": np.where(n >= 1, mean, np.nan),
        "delta_low": np.select([mcnemar, t_test], [nc_low, t_low], np.nan),
        "delta_high": np.select([mcnemar, t_test], [nc_high, t_high], np.nan),
        "p_value": p_value.astype(float), "test": test.astype(object),
        "df": np.where(t_test, df, np.nan), "n": n.astype(np.int64), "n_clusters": clusters,
        "n_dropped": dropped.astype(np.int64)})


def _adjust(p_values: pd.Series, correction: Correction) -> np.ndarray:
    """p adjusted over the defined ones (statsmodels' ``multipletests``); NaN stays NaN."""
    p = p_values.astype(float).to_numpy()
    if correction is None:
        return p.copy()
    adjusted = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        adjusted[ok] = multipletests(p[ok], method=correction)[1]
    return adjusted


def compare_models(frame: pd.DataFrame, value: str, *,
                   item: Sequence[str] | str | None = None, cluster: str | None = None,
                   correction: Correction = "holm", level: float = 0.95,
                   alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of models: ``model_a model_b delta delta_low delta_high p_value p_adjusted
    test df n n_clusters n_dropped direction`` (delta = a − b, as :func:`paired_difference`;
    ``test`` the test behind the row's p: ``paired t``, ``CR2 t``, ``exact McNemar``,
    ``exact sign``, or empty without one; ``df`` its t degrees of freedom, Bell–McCaffrey's
    with clusters, NaN for the exact tests; ``n_clusters`` missing without clusters), pairs in
    sorted model order.

    ``p_adjusted`` is statsmodels' ``multipletests`` over all k(k − 1)/2 pairs with a defined
    p: ``"holm"`` (Holm 1979, step-down; controls the family-wise error rate), ``"fdr_bh"``
    (Benjamini & Hochberg 1995; controls the false-discovery rate) or ``None`` (raw p).
    ``direction`` is what :func:`verdict` would claim for the pair on that adjusted p
    (:func:`claims_direction`): ``"lower"`` or ``"higher"`` (a than b), else ``"undecided"``.
    """
    if correction not in ("holm", "fdr_bh", None):
        raise ValueError(f"correction must be 'holm', 'fdr_bh' or None; got {correction!r}")
    means, models, keys, arrays = _item_means(frame, value, item, cluster)
    codes = pd.factorize(arrays[keys.index(cluster)])[0] if cluster is not None else None
    order = np.argsort(models, kind="stable")
    first, second = np.triu_indices(order.size, 1)  # every pair, in combinations' order
    first, second = order[first], order[second]
    # All pairs at once, in chunks of pairs × items cells that bound the memory
    chunk = max(1, _PAIR_CELLS // max(means.shape[0], 1))
    values = means.T.copy()  # models × items: one model's items are contiguous
    parts = [_pairs_paired(values, first[s:s + chunk], second[s:s + chunk], codes, level)
             for s in range(0, first.size, chunk)]
    out = pd.concat(parts, ignore_index=True) if parts else _pairs_paired(
        values, first, second, codes, level)
    out.insert(0, "model_a", models[first].tolist())
    out.insert(1, "model_b", models[second].tolist())
    out.insert(6, "p_adjusted", _adjust(out["p_value"], correction))
    out["direction"] = _directions(out, correction, alpha)
    return out


def _directions(table: pd.DataFrame, correction: Correction,
                alpha: float = 0.05) -> pd.Series:
    """Per row of a differences table, what :func:`verdict` would claim on the adjusted p:
    ``"lower"``/``"higher"`` (first model than second), else ``"undecided"``.

    :func:`claims_direction` on every row at once: the quoted p (the adjusted one where an
    adjustment is in force and defined, else the raw one) below ``alpha``, a finite non-zero
    difference, and an interval, where one is shown, that excludes 0."""
    delta = table["delta"].to_numpy(dtype=float, na_value=np.nan)
    low = table["delta_low"].to_numpy(dtype=float, na_value=np.nan)
    high = table["delta_high"].to_numpy(dtype=float, na_value=np.nan)
    raw = table["p_value"].to_numpy(dtype=float, na_value=np.nan)
    adjusted = table["p_adjusted"].to_numpy(dtype=float, na_value=np.nan)
    quoted = np.where(~np.isnan(adjusted), adjusted, raw) if correction else raw
    shown = np.isfinite(low) & np.isfinite(high)
    with np.errstate(invalid="ignore"):
        claimed = (np.isfinite(quoted) & (quoted < alpha) & np.isfinite(delta) & (delta != 0)
                   & (~shown | (low > 0) | (high < 0)))
    directions = np.where(claimed, np.where(delta < 0, "lower", "higher"), "undecided")
    return pd.Series(directions.astype(object), index=table.index, dtype=object)


def _ranks(values: np.ndarray, lower: bool) -> np.ndarray:
    """Ranks along the last axis (1 = best), ties sharing their mean rank."""
    return stats.rankdata(values if lower else -values, axis=-1, method="average")


def rank_intervals(frame: pd.DataFrame, value: str, *, item: Sequence[str] | str | None = None,
                   n_boot: int = 1000, lower_is_better: bool | None = None,
                   cluster: str | None = None, random_state: int = 0,
                   level: float = 0.95) -> pd.DataFrame:
    """Each model's mean ``value`` over the items every model answered, its rank (1 = best,
    ties share the mean rank) and the percentile interval of its rank over ``n_boot``
    bootstrap replicates. ``lower_is_better`` defaults to the metric's direction
    (:func:`is_lower_better`).

    Without ``cluster`` the replicates resample items. With ``cluster`` (bias, study, sample:
    the unit whose items share errors) they resample whole clusters, each bringing all of its
    items, so the interval reflects the real number of independent units (resampling the items
    of a few clusters gives intervals that are too narrow).

    Items some model did not answer are left out for every model, so the ranks compare like
    with like; ``n_dropped`` counts, per model, the items it lacks (0 everywhere when every
    model answered every item), and ``n``/``n_clusters`` what the ranks rest on
    (``n_clusters`` is missing without ``cluster``: the items are the units then).
    ``few_items`` marks fewer than :data:`FEW_ITEMS` items and ``few_clusters`` fewer than
    :data:`FEW_CLUSTERS` clusters: a bootstrap over so few clusters is too narrow (two
    identical models came out apart in 20 % of runs with 4 clusters), so leaderboards mark
    it (:func:`kbench_core.ranking.rank_text`).

    Replicates are computed in batches: multiplicities (replicates × units) times the unit ×
    model sums gives a batch's means in one product. The bounds are the empirical quantiles of
    the replicate ranks, taken outward (``"lower"`` / ``"higher"``) so they are ranks that
    occurred. Bootstrap rank intervals follow Hall & Miller (2009), "Using the bootstrap to
    quantify the authority of an empirical ranking", *Annals of Statistics* 37(6B); the
    cluster bootstrap is Davison & Hinkley (1997, §3.8). Written by hand because no library
    ranks all models per replicate at once.
    """
    lower = is_lower_better(value) if lower_is_better is None else lower_is_better
    full = item_values(frame, value, item=item, cluster=cluster)
    present = full.notna()
    answered = present.any(axis=1)
    n_dropped = (answered.to_numpy()[:, None] & ~present.to_numpy()).sum(axis=0)
    table = full[present.all(axis=1)]
    models = [str(c) for c in table.columns]
    matrix = table.to_numpy(dtype=float)
    n_items = matrix.shape[0]
    if n_items == 0:
        raise ValueError("no item was answered by every model")
    if cluster is not None:
        units = pd.factorize(np.asarray(table.index.get_level_values(cluster)))[0]
    else:
        units = np.arange(n_items)
    n_units = int(units.max()) + 1
    sums = np.zeros((n_units, matrix.shape[1]))
    np.add.at(sums, units, matrix)
    sizes = np.bincount(units, minlength=n_units).astype(float)
    point = matrix.mean(axis=0)
    rng = np.random.default_rng(random_state)
    chunk = max(1, 4_000_000 // n_units)  # replicates per batch: bounded memory on big runs
    batches = []
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        draws = rng.integers(0, n_units, (size, n_units)) + (np.arange(size) * n_units)[:, None]
        counts = np.bincount(draws.ravel(), minlength=size * n_units).reshape(size, n_units)
        batches.append((counts @ sums) / (counts @ sizes)[:, None])
    boot = np.vstack(batches)
    boot_ranks = _ranks(boot, lower)
    alpha = (1 - level) / 2
    return pd.DataFrame({
        "model": models, "value": point, "rank": _ranks(point[None, :], lower)[0],
        "rank_low": np.quantile(boot_ranks, alpha, axis=0, method="lower"),
        "rank_high": np.quantile(boot_ranks, 1 - alpha, axis=0, method="higher"),
        "n": n_items,
        "n_clusters": pd.array([n_units if cluster is not None else pd.NA] * len(models),
                               dtype="Int64"),
        "n_dropped": n_dropped.astype(int), "few_items": n_items < FEW_ITEMS,
        "few_clusters": cluster is not None and n_units < FEW_CLUSTERS,
    }).sort_values(["rank", "model"]).reset_index(drop=True)


def samples_needed(delta: float, sd_diff: float, *, power: float = 0.8,
                   alpha: float = 0.05) -> int:
    """Items needed to detect a paired mean difference ``delta`` whose per-item differences
    have standard deviation ``sd_diff``: ⌈((z₁₋α/₂ + z_power) · sd_diff / |delta|)²⌉
    (``docs/statistics.md``; the normal-approximation sample size of a paired / one-sample z test,
    e.g. Chow, Shao & Wang, *Sample Size Calculations in Clinical Research*, 2nd ed., §3.1). It
    assumes independent items; with clustered items multiply by the design effect 1 + (m − 1)·ICC
    for clusters of m items. At least 1."""
    if delta == 0:
        raise ValueError("delta must be non-zero")
    if sd_diff < 0 or not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("need sd_diff >= 0, 0 < power < 1 and 0 < alpha < 1")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return max(1, math.ceil((z * sd_diff / abs(delta)) ** 2))


def min_items_sign_test(alpha: float = 0.05) -> int:
    """The fewest items with which an exact two-sided sign test can reach ``alpha``: the
    smallest n with 2·0.5ⁿ < α (6 at α = 0.05)."""
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    return max(1, math.floor(math.log2(2 / alpha)) + 1)


def claims_direction(est: Estimate, *, adjusted_p: float | None = None,
                     alpha: float = 0.05) -> bool:
    """Whether :func:`verdict` may name a direction for ``est`` (``docs/statistics.md``): the
    p it quotes (``adjusted_p`` when an adjustment is in force, else ``est.p_value``) is below
    ``alpha`` and, when an interval is shown, it excludes 0 (a NaN interval defers to the exact
    p)."""
    quoted = adjusted_p if adjusted_p is not None else est.p_value
    if quoted is None or not math.isfinite(quoted) or quoted >= alpha:
        return False
    if not math.isfinite(est.value) or est.value == 0:
        return False
    if math.isfinite(est.low) and math.isfinite(est.high):
        return not est.low <= 0 <= est.high
    return True


def _test_of(est: Estimate) -> str | None:
    """The test behind ``est``: its own ``test`` (a :class:`PairedEstimate`), else what a plain
    Estimate implies (an interval: a t test; none: the sign test)."""
    if isinstance(est, PairedEstimate):
        return est.test
    if est.p_value is None:
        return None
    return "paired t" if math.isfinite(est.low) and math.isfinite(est.high) else "exact sign"


def _family_text(adjusted: bool, correction: str, n_compared: int | None) -> str:
    if n_compared is None:
        return ""
    if adjusted:
        return f"{correction}-adjusted over all {n_compared:,} pairs compared"
    if n_compared == 1:
        return "one pair compared, unadjusted"
    return f"unadjusted, {n_compared:,} pairs compared"


def _needed_text(est: Estimate, sd_diff: float | None, *, noun: str, alpha: float,
                 cluster: str | None, n_clusters: int | None,
                 design_effect: float | None) -> str:
    """"; detecting ... would need about N items" with the clusters' design effect and the
    clusters that many items take (item 12 of issue 23: ignoring them understated the need)."""
    if sd_diff is None or not math.isfinite(sd_diff) or not math.isfinite(est.value) \
            or est.value == 0:
        return ""
    independent = samples_needed(est.value, sd_diff, alpha=alpha)
    clustered = cluster is not None and n_clusters
    if clustered and (design_effect is None or not math.isfinite(design_effect)):
        if independent <= est.n:
            return ""
        return (f"; detecting a difference of {abs(est.value):.3g} with 80% power would need "
                f"more than {independent:,} {noun} (the count for independent {noun}; "
                f"clustered by {cluster}, they count for less)")
    deff = design_effect if clustered else 1.0
    need = math.ceil(independent * deff)
    if need <= est.n:
        return ""
    text = (f"; detecting a difference of {abs(est.value):.3g} with 80% power would need "
            f"about {need:,} {noun}")
    if clustered:
        size = est.n / n_clusters
        groups = math.ceil(need / size)
        text += (f" ({independent:,} if independent × design effect {design_effect:.2f}), "
                 f"about {groups:,} {plural(cluster)} of this run's mean size {size:.3g}")
    return text


def verdict(est: Estimate, a: str, b: str, metric: str, *, lower_is_better: bool,
            adjusted_p: float | None = None, correction: str = "Holm",
            context: str = "", cluster: str | None = None, sd_diff: float | None = None,
            noun: str = "items", alpha: float = 0.05, n_clusters: int | None = None,
            n_compared: int | None = None, design_effect: float | None = None) -> str:
    """One sentence for a paper about ``a − b`` in ``metric``.

    A direction ("lower"/"higher", "better"/"worse") is claimed only when the evidence the
    sentence quotes supports it (:func:`claims_direction`): with ``adjusted_p`` (the
    ``correction``-adjusted p over the pairs compared) that p must be below ``alpha``, and
    the interval, when there is one, must exclude 0. The sentence names the test
    (paired t, CR2 t, exact McNemar, exact sign) and, given ``n_compared`` (the number of
    pairs the user asked for), the family its p is adjusted over: one pair compared is
    unadjusted, every pair is adjusted over all of them. Otherwise the sentence says the data
    cannot tell the two apart and, given ``sd_diff`` (the sd of the per-item differences),
    about how many items a difference this size would need (:func:`samples_needed`, times
    ``design_effect`` with clusters, and the clusters that takes; for degenerate
    differences, where every item agrees, or too few discordant 0/1 items, the exact test's
    minimum, :func:`min_items_sign_test`). ``cluster`` names what the errors are clustered
    by, so the sentence keeps that context wherever it is quoted; ``n_clusters`` (how many
    there are) is what a degenerate comparison's sign test counts, so the "too few" sentence
    names it. With the CR2 test, few effective clusters (Bell–McCaffrey df + 1 below
    :data:`FEW_CLUSTERS`) are said in a sentence of their own.
    """
    about = f" on {context}" if context else ""
    unit = f"{est.n:,} shared {noun}" + (f", errors clustered by {cluster}" if cluster else "")
    quoted = adjusted_p if adjusted_p is not None else est.p_value
    if est.p_value is None or quoted is None or not math.isfinite(quoted):
        return (f"No test of {a} − {b}{about} in {metric}: too few shared {noun} or "
                f"clusters to estimate its spread ({unit}).")
    test = _test_of(est)
    interval = math.isfinite(est.low) and math.isfinite(est.high)
    numbers = f"{est.value:+.3f}"
    numbers += f" [{est.low:+.3f}, {est.high:+.3f}]" if interval else " (no interval)"
    numbers += f", {unit}"
    p_name = f"{correction}-adjusted p" if adjusted_p is not None else "p"
    family = _family_text(adjusted_p is not None, correction, n_compared)
    if test in ("exact sign", "exact McNemar"):
        name = "exact sign-test" if test == "exact sign" else "exact McNemar"
        numbers += f", {name} {p_name} = {quoted:.3g}" + (f" ({family})" if family else "")
    else:
        numbers += (f", {p_name} = {quoted:.3g} ({_TEST_TEXT.get(test or '', 't test')}"
                    + (f"; {family}" if family else "") + ")")
    few = ""
    if isinstance(est, PairedEstimate) and est.effective_clusters < FEW_CLUSTERS - 1e-6 \
            and est.n_clusters:
        word = plural(cluster) if cluster else "clusters"
        if est.effective_clusters >= 0.95 * est.n_clusters:  # (near) equal clusters
            few = (f" Few clusters: only {est.n_clusters:,} {word} (Bell–McCaffrey df "
                   f"{est.df:.1f}), so the interval is wide and approximate.")
        else:
            few = (f" Few effective clusters: the {est.n_clusters:,} {word} are unequal and "
                   f"count as about {est.effective_clusters:.1f} (Bell–McCaffrey df "
                   f"{est.df:.1f}), so the interval is wide and approximate.")
    if claims_direction(est, adjusted_p=adjusted_p, alpha=alpha):
        a_lower = est.value < 0
        better = a_lower == lower_is_better
        return (f"{a} scores {'lower' if a_lower else 'higher'} than {b}{about} in {metric} "
                f"({'better' if better else 'worse'}: {'lower' if lower_is_better else 'higher'}"
                f" is preferable): {a} − {b} = {numbers}.{few}")
    need = min_items_sign_test(alpha)
    if test == "exact McNemar":
        discordant = (est.n_discordant if isinstance(est, PairedEstimate)
                      and est.n_discordant is not None else est.n)
        if est.value != 0 and discordant < need:
            why = (f"only {discordant:,} shared {noun} differ between the two (the discordant "
                   f"pairs the exact McNemar test counts), too few for it: it needs at least "
                   f"{need} (p < {alpha:g})")
            return (f"The data cannot tell {a} and {b} apart{about} in {metric}: {a} − {b} = "
                    f"{numbers}; {why}.{few}")
    if not interval:
        units, unit_noun = est.n, noun
        if cluster and n_clusters:
            units, unit_noun = n_clusters, f"{plural(cluster)} (the sign test's units, as errors " \
                                           f"cluster by {cluster})"
        why = (f"every shared item differs the same way, so only the exact sign test applies, "
               f"and {units:,} {unit_noun} are too few for it: it needs at least {need} "
               f"(p < {alpha:g})" if est.value != 0 and units < need else
               f"the sign test's p is not below {alpha:g}")
        return (f"The data cannot tell {a} and {b} apart{about} in {metric}: {a} − {b} = "
                f"{numbers}; {why}.{few}")
    if not est.low <= 0 <= est.high:
        why = (f"the unadjusted interval excludes 0, but after {correction}'s adjustment for "
               f"the pairs compared p is not below {alpha:g}" if adjusted_p is not None else
               f"the interval excludes 0, but the {_TEST_TEXT.get(test or '', 'test')}'s p is "
               f"not below {alpha:g}")
    else:
        why = "the interval includes 0"
    need_text = _needed_text(est, sd_diff, noun=noun, alpha=alpha, cluster=cluster,
                             n_clusters=n_clusters, design_effect=design_effect)
    return (f"The data cannot tell {a} and {b} apart{about} in {metric}: {a} − {b} = "
            f"{numbers}; {why}{need_text}.{few}")


def _grouped_paired(a: np.ndarray, b: np.ndarray, codes: np.ndarray, size: int,
                    level: float) -> pd.DataFrame:
    """:func:`paired_difference` (no clusters) within each of ``size`` groups at once: the
    paired t test per group, the exact sign test where a group's differences are all equal,
    NaN bounds and no p below two shared items, and the exact McNemar test with Newcombe's
    interval where a group's outcomes are all 0/1 (the same rules as
    :func:`_paired_values`)."""
    known_a, known_b = ~np.isnan(a), ~np.isnan(b)
    both = known_a & known_b
    n = np.bincount(codes[both], minlength=size)
    dropped = np.bincount(codes[known_a | known_b], minlength=size) - n
    g, diff = codes[both], a[both] - b[both]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(g, weights=diff, minlength=size) / n
        squares = np.bincount(g, weights=(diff - mean[g]) ** 2, minlength=size)
        se = np.sqrt(squares / (n - 1)) / np.sqrt(n)
    scale = np.zeros(size)
    np.maximum.at(scale, g, np.abs(diff))
    two = n >= 2
    degenerate = two & ((se <= 1e-12 * scale) | (scale == 0))
    tested = two & ~degenerate
    df = np.maximum(n - 1, 1)
    t_crit = stats.t.ppf((1 + level) / 2, df)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_t = 2 * stats.t.sf(np.abs(mean / se), df)
    # Exact two-sided sign test of the non-zero differences (_sign_p)
    positive = np.bincount(g[diff > 0], minlength=size)
    negative = np.bincount(g[diff < 0], minlength=size)
    p_sign = _sign_p(positive, negative)
    # 0/1 outcomes within a group: exact McNemar (the sign test of the discordant items, as
    # p_sign) and Newcombe's interval, never a t interval that leaves [-1, 1].
    a_both, b_both = a[both], b[both]
    non_binary = np.bincount(g[~(_is_binary(a_both) & _is_binary(b_both))], minlength=size)
    binary = two & (non_binary == 0)
    ones = np.bincount(g[(a_both == 1) & (b_both == 1)], minlength=size)
    nc_low, nc_high = newcombe_paired(ones, positive, negative, n - ones - positive - negative,
                                      level=level)
    tested &= ~binary
    degenerate &= ~binary
    low = np.where(tested, mean - t_crit * se, np.where(binary, nc_low, np.nan))
    high = np.where(tested, mean + t_crit * se, np.where(binary, nc_high, np.nan))
    test = np.select([binary, tested, degenerate], ["exact McNemar", "paired t", "exact sign"],
                     "")
    return pd.DataFrame({
        "delta": np.where(n >= 1, mean, np.nan),
        "delta_low": low, "delta_high": high,
        "p_value": np.where(tested, p_t, np.where(degenerate | binary, p_sign, np.nan)),
        "test": test, "n": n.astype(int), "n_dropped": dropped.astype(int)})


def group_differences(frame: pd.DataFrame, value: str, a: str, b: str, group: str, *,
                      item: Sequence[str] | str | None = None,
                      correction: Correction = "holm", level: float = 0.95) -> pd.DataFrame:
    """The paired difference a − b within each level of ``group`` (bias, study, prompt type),
    for a forest plot: ``group delta delta_low delta_high p_value p_adjusted test n n_dropped
    direction``, p adjusted over the groups (the family the forest plot shows; ``test`` and
    ``direction`` as in :func:`compare_models`)."""
    columns = _item_columns(frame, item)
    keys = columns if group in columns else [*columns, group]
    table = item_values(frame, value, item=keys)
    for model in (a, b):
        if model not in table.columns:
            raise ValueError(f"model {model!r} is not in the frame")
    codes, levels = pd.factorize(table.index.get_level_values(group), sort=True)
    out = _grouped_paired(table[a].to_numpy(dtype=float), table[b].to_numpy(dtype=float),
                          codes, len(levels), level)
    out.insert(0, group, np.asarray(levels, dtype=object))
    out.insert(5, "p_adjusted", _adjust(out["p_value"], correction))
    out["direction"] = _directions(out, correction)
    return out


_CORRECTION_NAMES = {"holm": "Holm", "fdr_bh": "Benjamini–Hochberg"}


Family = Literal["pair", "all"]


@dataclass(frozen=True, eq=False)
class Comparison:
    """A − B in one per-item metric, with everything a paper quotes about it.

    ``estimate`` is :func:`paired_difference` (a :class:`PairedEstimate`); ``family`` the
    comparisons its p is adjusted over: ``"pair"`` (the one pair asked for: ``adjusted_p``
    None, the p is the test's own) or ``"all"`` (every pair of models in the run: the
    ``correction``-adjusted p, None when undefined); ``n_pairs`` the family's size.
    ``groups`` the per-group differences of :func:`group_differences` (p adjusted over the
    groups; empty without a group); ``sd_diff`` the standard deviation of the per-item
    differences and ``design_effect`` the squared ratio of the clustered (CR2) to the
    independent-items standard error (NaN without clusters). :attr:`claims` and
    :attr:`verdict` follow :func:`claims_direction` and :func:`verdict`, so every place that
    shows a comparison says the same thing.
    """

    a: str
    b: str
    value: str
    label: str
    estimate: Estimate
    adjusted_p: float | None
    correction: Correction
    lower_is_better: bool
    cluster: str | None
    noun: str
    n_pairs: int
    sd_diff: float
    design_effect: float
    groups: pd.DataFrame
    n_clusters: int | None = None
    family: Family = "pair"

    @property
    def claims(self) -> bool:
        """Whether the quoted evidence names a direction."""
        return claims_direction(self.estimate, adjusted_p=self.adjusted_p)

    @property
    def correction_name(self) -> str:
        return _CORRECTION_NAMES.get(self.correction or "", "unadjusted")

    @property
    def test(self) -> str | None:
        """The test behind the p-value (``paired t``, ``CR2 t``, ``exact McNemar``,
        ``exact sign``; None without one)."""
        return _test_of(self.estimate)

    @property
    def p_label(self) -> str:
        """What the quoted p is: ``"p (one pair, unadjusted)"`` or ``"Holm-adjusted p (55
        pairs)"``."""
        if self.adjusted_p is not None:
            return f"{self.correction_name}-adjusted p ({self.n_pairs:,} pairs)"
        return "p (one pair, unadjusted)" if self.family == "pair" else "p (unadjusted)"

    @property
    def verdict(self) -> str:
        """The sentence a paper can quote (:func:`verdict`)."""
        return verdict(self.estimate, self.a, self.b, self.label,
                       lower_is_better=self.lower_is_better, adjusted_p=self.adjusted_p,
                       correction=self.correction_name,
                       cluster=self.cluster.replace("_", " ") if self.cluster else None,
                       sd_diff=self.sd_diff if math.isfinite(self.sd_diff) else None,
                       noun=self.noun, n_clusters=self.n_clusters, n_compared=self.n_pairs,
                       design_effect=(self.design_effect if math.isfinite(self.design_effect)
                                      else None))

    def items_needed(self) -> tuple[int | None, int | None]:
        """Items to detect a difference of this size with 80% power at α = 0.05, as if
        independent and (with clusters) times the design effect; None where undefined."""
        value = self.estimate.value
        if not (math.isfinite(self.sd_diff) and math.isfinite(value)) or value == 0:
            return None, None
        need = samples_needed(value, self.sd_diff)
        clustered = (math.ceil(need * self.design_effect)
                     if math.isfinite(self.design_effect) else None)
        return need, clustered

    def clusters_needed(self) -> int | None:
        """Clusters of this run's mean size that :meth:`items_needed`'s clustered count
        takes; None without clusters."""
        _, clustered = self.items_needed()
        if clustered is None or not self.n_clusters or not self.estimate.n:
            return None
        return math.ceil(clustered / (self.estimate.n / self.n_clusters))


def compare_pair(frame: pd.DataFrame, value: str, a: str, b: str, *,
                 group: str | None = None, item: Sequence[str] | str | None = None,
                 cluster: str | None = None, correction: Correction = "holm",
                 label: str | None = None, noun: str = "items",
                 pairs: pd.DataFrame | None = None, family: Family = "pair",
                 lower_is_better: bool | None = None) -> Comparison:
    """Compare ``a`` with ``b`` in the per-item column ``value``: the paired difference, the
    per-``group`` differences (p adjusted over the groups with ``correction``), the spread
    of the per-item differences and the design effect of the clusters.

    ``family`` is the set of comparisons the user asked for, which the p is adjusted over
    (Holm 1979; issue 23, item 11): ``"pair"`` (default; one pair asked for, p unadjusted —
    adjusting it for the 55 pairs of an 11-model run that nobody asked about turned p = 0.0135
    into 0.73) or ``"all"`` (the pair picked from every pair of models in ``frame``: p adjusted
    over all of them; ``pairs`` is a :func:`compare_models` table already computed with the
    same options).

    The design effect is (CR2 SE / independent-items SE)², both from the per-item
    differences (Kish, *Survey Sampling*, 1965, §8.2).
    """
    if family not in ("pair", "all"):
        raise ValueError(f"family must be 'pair' or 'all'; got {family!r}")
    est = paired_difference(frame, value, a, b, item=item, cluster=cluster)
    adjusted: float | None = None
    n_pairs = 1
    if family == "all":
        if pairs is None:
            pairs = compare_models(frame, value, item=item, cluster=cluster,
                                   correction=correction)
        n_pairs = len(pairs)
        row = pairs[((pairs["model_a"] == a) & (pairs["model_b"] == b))
                    | ((pairs["model_a"] == b) & (pairs["model_b"] == a))]
        if correction is not None and len(row) \
                and math.isfinite(float(row["p_adjusted"].iloc[0])):
            adjusted = float(row["p_adjusted"].iloc[0])
    groups = (group_differences(frame, value, a, b, group, item=item, correction=correction)
              if group else pd.DataFrame())
    table = item_values(frame, value, item=item, cluster=cluster)
    both = table[[a, b]].dropna()
    sd = float((both[a] - both[b]).std(ddof=1)) if len(both) > 1 else float("nan")
    deff = float("nan")
    n_clusters = both.index.get_level_values(cluster).nunique() if cluster else None
    se = getattr(est, "se", math.nan)
    if cluster and getattr(est, "test", None) == "CR2 t" and sd > 0 and math.isfinite(se):
        deff = float((se / (sd / math.sqrt(len(both)))) ** 2)
    return Comparison(a=a, b=b, value=value, label=label or value, estimate=est,
                      adjusted_p=adjusted, correction=correction,
                      lower_is_better=(is_lower_better(value) if lower_is_better is None
                                       else lower_is_better),
                      cluster=cluster, noun=noun, n_pairs=n_pairs, sd_diff=sd,
                      design_effect=deff, groups=groups, n_clusters=n_clusters, family=family)
