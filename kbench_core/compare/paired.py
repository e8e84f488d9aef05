"""One paired difference: paired t, exact McNemar with Newcombe's interval, sign test, the CR2
cluster-robust mean with Bell–McCaffrey degrees of freedom, and for clustered 0/1 outcomes the
exact cluster sign-flip test with Newcombe's interval on Kish's effective n
(``docs/statistics.md``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from kbench_core.stats import Estimate, wilson

from .items import _item_means, item_values

TestName = Literal["paired t", "CR2 t", "exact McNemar", "exact sign", "cluster sign-flip"]
FEW_CLUSTERS = 10  # fewer (effective) clusters than this: intervals and ranks are marked
_TEST_TEXT = {"paired t": "paired t test", "CR2 t": "CR2 cluster-robust t test, "
              "Bell–McCaffrey df", "exact McNemar": "exact McNemar test",
              "exact sign": "exact sign test",
              "cluster sign-flip": "exact sign-flip test over the clusters' summed differences"}


@dataclass(frozen=True)
class PairedEstimate(Estimate):
    """:class:`~kbench_core.stats.Estimate` of a paired difference, with the test behind its
    p-value and interval.

    ``test``: ``"paired t"`` (t on n − 1 df), ``"CR2 t"`` (cluster-robust CR2 standard error,
    Bell–McCaffrey df), ``"exact McNemar"`` (0/1 outcomes: the discordant items, with
    Newcombe's interval), ``"cluster sign-flip"`` (0/1 outcomes with clusters of several
    items: the exact sign-flip test of the clusters' summed differences, with Newcombe's
    interval on Kish's effective n, :func:`cluster_sign_flip_p`,
    :func:`clustered_newcombe`) or ``"exact sign"`` (every difference alike: no interval),
    ``None`` when there is no test (fewer than two shared items, or one cluster). ``se`` is
    the standard error (CR2 with clusters), ``df`` the t degrees of freedom (Bell–McCaffrey's
    with clusters; NaN where none is used), ``n_clusters`` the clusters behind the shared
    items (None without clusters) and ``n_discordant`` the units that differ between the two
    models (0/1 outcomes only): the items where exactly one model scored 1 for McNemar, the
    clusters whose summed difference is not 0 for the cluster sign-flip test — what the
    exact test counts.
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
        NaN without a clustered test."""
        return self.df + 1 if self.test in ("CR2 t", "cluster sign-flip") else math.nan


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


# Cells of one batch of the sign-flip distributions (rows × frequencies): 32 MB of floats
_FLIP_CELLS = 1 << 22
_FLIP_WORK = 2 * 10**7  # one row's exact cost (distinct sums × frequencies), beyond: normal


def cluster_sign_flip_p(sums: np.ndarray) -> np.ndarray:
    r"""Exact two-sided sign-flip (randomization) p-value of the clusters' summed differences,
    one per row of ``sums`` (rows × clusters of integer sums :math:`D_g = \sum_{i \in g}
    (a_i - b_i)` of 0/1 outcomes; 0 for a cluster a row lacks).

    Under the null that the two models are exchangeable within each cluster (the labels A
    and B of a whole cluster could be swapped), each :math:`D_g` is as likely as
    :math:`-D_g`, so the statistic :math:`T = |\sum_g D_g|` is referred to the :math:`2^G`
    equally likely sign flips :math:`\sum_g s_g D_g`, :math:`s_g = \pm 1`:
    :math:`p = P(|\sum_g s_g D_g| \ge T)`. This is the exact, small-sample form of the
    clustered McNemar test (Obuchowski 1998; Durkalski et al. 2003, whose
    :math:`X^2 = (\sum_g D_g)^2 / \sum_g D_g^2` is its normal approximation); with one item
    per cluster it is the exact McNemar test. Repeating a cluster's verdicts adds nothing: 4
    contracts won and 1 tied give p = 0.125 whether each contract was asked once or three
    times. It needs 6 clusters that differ to reach p < 0.05 (:math:`2 \cdot 2^{-G}`).

    The distribution is computed exactly: the sums are integers, so :math:`\sum_g s_g D_g`
    lives on :math:`[-M, M]`, :math:`M = \sum_g |D_g|`, and its characteristic function is
    :math:`\prod_g \cos(\theta D_g)`; evaluated on :math:`L \ge 2M + 1` frequencies (in
    logs, clusters with equal :math:`|D_g|` together) and inverted with one real FFT per row
    — no enumeration of the :math:`2^G` flips, so hundreds of clusters cost milliseconds.
    Rows are computed in batches of equal :math:`L`. The result is never below the exact
    minimum :math:`2^{1 - G'}` (:math:`G'` clusters that differ), which rounding could
    otherwise cross. A row with 30 or more clusters that differ whose exact distribution
    would cost more than 2·10⁷ products (dozens of distinct cluster sums over a span of
    hundreds of thousands of items) takes the distribution's normal approximation,
    Durkalski et al.'s :math:`X^2 = (\sum_g D_g)^2 / \sum_g D_g^2` on 1 df.

    References: Obuchowski, N. A. (1998). On the comparison of correlated proportions for
    clustered data. *Statistics in Medicine* 17, 1495–1507. Durkalski, V. L., Palesch, Y. Y.,
    Lipsitz, S. R. & Rust, P. F. (2003). Analysis of clustered matched-pair data. *Statistics
    in Medicine* 22, 2417–2428. Canay, I. A., Romano, J. P. & Shaikh, A. M. (2017).
    Randomization tests under an approximate symmetry assumption. *Econometrica* 85(3),
    1013–1030.
    """
    sums = np.rint(np.atleast_2d(np.asarray(sums, dtype=float))).astype(np.int64)
    size = np.abs(sums)
    total = np.abs(sums.sum(axis=1))
    span = size.sum(axis=1)
    differ = (size > 0).sum(axis=1)
    p = np.ones(sums.shape[0])
    floor = np.exp2(1.0 - np.maximum(differ, 1))
    # every cluster the same way: only the two extreme flips reach T, p = 2 · 2^-G' exactly
    extreme = (total > 0) & (total == span)
    p[extreme] = floor[extreme]
    todo = np.flatnonzero((total > 0) & ~extreme)
    if todo.size:
        # Beyond _FLIP_WORK frequency × value products for one row, with 30 clusters or
        # more that differ, the normal approximation of the same distribution (Durkalski et
        # al.'s χ²) is used: the exact one would take seconds per pair (a span of hundreds of
        # thousands of items over dozens of distinct sums), and with so many clusters the
        # approximation is within a few per cent of it near α.
        distinct = np.array([np.unique(row[row > 0]).size for row in size[todo]])
        work = distinct * (1 << np.ceil(np.log2(2 * span[todo] + 1)).astype(np.int64)) // 2
        big = (work > _FLIP_WORK) & (differ[todo] >= 30)
        if big.any():
            rows = todo[big]
            squares = (size[rows].astype(float) ** 2).sum(axis=1)
            p[rows] = np.minimum(1.0, 2 * stats.norm.sf(total[rows] / np.sqrt(squares)))
            todo = todo[~big]
    if todo.size:
        length = 1 << np.ceil(np.log2(2 * span[todo] + 1)).astype(np.int64)
        for value in np.unique(length):
            rows = todo[length == value]
            for start in range(0, rows.size, max(1, _FLIP_CELLS // (value // 2 + 1))):
                chunk = rows[start:start + max(1, _FLIP_CELLS // (value // 2 + 1))]
                p[chunk] = _flip_tail(size[chunk], total[chunk], int(value))
        p[todo] = np.clip(np.maximum(p[todo], floor[todo]), 0.0, 1.0)
    return p


def _flip_tail(size: np.ndarray, total: np.ndarray, length: int) -> np.ndarray:
    """2 · P(Σ s_g D_g ≥ T) per row by the characteristic function on ``length``
    frequencies (:func:`cluster_sign_flip_p`)."""
    theta = 2 * np.pi * np.arange(length // 2 + 1) / length
    log_mod = np.zeros((size.shape[0], theta.size))
    negative = np.zeros((size.shape[0], theta.size), dtype=bool)
    for value in np.unique(size[size > 0]):
        count = (size == value).sum(axis=1)
        rows = np.flatnonzero(count)
        cosine = np.cos(theta * value)
        with np.errstate(divide="ignore"):
            log_cos = np.log(np.abs(cosine))
        log_mod[rows] += count[rows, None] * log_cos[None, :]
        negative[rows] ^= (count[rows, None] % 2 == 1) & (cosine < 0)[None, :]
    phi = np.where(negative, -1.0, 1.0) * np.exp(log_mod)
    pmf = np.maximum(np.fft.irfft(phi, n=length, axis=1), 0.0)
    # P(X >= T) summed from the far tail inwards (small numbers first)
    upper = np.cumsum(pmf[:, length // 2::-1], axis=1)  # upper[:, j] = P(X >= L/2 - j)
    tail = upper[np.arange(size.shape[0]), length // 2 - total]
    return np.minimum(1.0, 2.0 * tail)


def kish_design_effect(se: np.ndarray, var_items: np.ndarray, sum_sq_sizes: np.ndarray,
                       n: np.ndarray) -> np.ndarray:
    r"""Kish's design effect of a clustered mean, elementwise: the clustered variance over the
    independent-items one, :math:`\widehat{deff} = SE_{CR2}^2 / (s_d^2 / n)`, kept within
    :math:`[1, \sum_g n_g^2 / n]` — 1 (no clustering; a negative intra-cluster correlation
    is not credited) to the value at an intra-cluster correlation of 1, where each cluster
    counts once (Kish, *Survey Sampling*, 1965, §8.2). Differences that do not vary
    (:math:`s_d = 0`) take the upper bound: nothing in the data says the clusters'
    items are independent."""
    se, var_items, sum_sq_sizes, n = (np.asarray(x, dtype=float)
                                      for x in (se, var_items, sum_sq_sizes, n))
    upper = sum_sq_sizes / n
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = se**2 / var_items
    return np.where(var_items > 0, np.clip(ratio, 1.0, np.maximum(upper, 1.0)), upper)


def clustered_newcombe(both: np.ndarray, a_only: np.ndarray, b_only: np.ndarray,
                       neither: np.ndarray, design_effect: np.ndarray, df: np.ndarray, *,
                       level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Newcombe's paired interval (:func:`newcombe_paired`) on Kish's effective sample size
    with the Korn–Graubard degrees-of-freedom correction, for clustered 0/1 outcomes.

    The 2 × 2 counts are scaled by :math:`n^*/n`, with
    :math:`n^* = \frac{n}{deff}\left(\frac{z_{1-\alpha/2}}{t_{1-\alpha/2,\,\nu}}\right)^2`:
    ``design_effect`` from :func:`kish_design_effect` and :math:`\nu` the Bell–McCaffrey
    degrees of freedom of the CR2 error (:func:`cr2_mean`). Korn & Graubard (1998) use this
    effective n for Wilson and Clopper–Pearson intervals of proportions from cluster samples;
    the df factor keeps it valid with few clusters, where the design effect is itself
    uncertain. Without it (Kish's n alone) coverage fell to 0.91 with one cluster of 40 and
    nine of 2; with it every design simulated in ``docs/statistics.md`` covers ≥ 95 %, while
    the CR2 t interval cut to [−1, 1] (used before) covered 0.81 near a proportion of 0.9.
    The interval stays inside [−1, 1]. NaN where ``df`` is (one cluster).

    References: Kish, L. (1965). *Survey Sampling*, Wiley, §8.2. Korn, E. L. & Graubard,
    B. I. (1998). Confidence intervals for proportions with small expected number of positive
    counts estimated from survey data. *Survey Methodology* 24(2), 193–201. Newcombe, R. G.
    (1998). *Statistics in Medicine* 17, 2635–2650.
    """
    df = np.asarray(df, dtype=float)
    ok = np.isfinite(df) & (df > 0)
    z = stats.norm.ppf((1 + level) / 2)
    t = stats.t.ppf((1 + level) / 2, np.where(ok, df, 1.0))
    scale = np.where(ok, (z / t) ** 2 / np.asarray(design_effect, dtype=float), np.nan)
    low, high = newcombe_paired(*(np.asarray(x, dtype=float) * scale
                                  for x in (both, a_only, b_only, neither)), level=level)
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)


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
    if binary and n_groups >= 2:
        # 0/1 outcomes with clusters of several items (a contract's prompt types): the exact
        # sign-flip test over the clusters' sums, so that repeating a contract's verdicts
        # does not make evidence (issue 38, item 1), and Newcombe's interval on Kish's
        # effective n (docs/statistics.md, "Round 3").
        present = sizes > 0
        sums = np.bincount(codes, weights=diff)[present]
        se, df = cr2_mean(diff, codes, sizes.size)
        deff = kish_design_effect(se, diff.var(ddof=1) / n, float(np.sum(sizes[present] ** 2)),
                                  n)
        a_only, b_only = int((diff > 0).sum()), int((diff < 0).sum())
        both_1 = int(((a[both] == 1) & (b[both] == 1)).sum())
        low, high = clustered_newcombe(both_1, a_only, b_only, n - both_1 - a_only - b_only,
                                       deff, df, level=level)
        return PairedEstimate(mean, float(low), float(high), n,
                              float(cluster_sign_flip_p(sums[None, :])[0]), dropped,
                              test="cluster sign-flip", se=se, df=df, n_clusters=n_groups,
                              n_discordant=int(np.count_nonzero(np.rint(sums))))
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
