"""One pair with everything a paper quotes: :class:`Comparison` and :func:`compare_pair`
(``docs/statistics.md``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from kbench_core.stats import Estimate

from .items import Correction, is_lower_better, item_values
from .multiplicity import compare_models, group_differences
from .paired import paired_difference
from .verdicts import _test_of, claims_direction, samples_needed, verdict

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
    if cluster and getattr(est, "test", None) in ("CR2 t", "cluster sign-flip") and sd > 0 \
            and math.isfinite(se):
        deff = float((se / (sd / math.sqrt(len(both)))) ** 2)
    return Comparison(a=a, b=b, value=value, label=label or value, estimate=est,
                      adjusted_p=adjusted, correction=correction,
                      lower_is_better=(is_lower_better(value) if lower_is_better is None
                                       else lower_is_better),
                      cluster=cluster, noun=noun, n_pairs=n_pairs, sd_diff=sd,
                      design_effect=deff, groups=groups, n_clusters=n_clusters, family=family)
