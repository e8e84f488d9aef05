"""Sample-size planning and the plain-language verdict a paper can quote
(``docs/statistics.md``)."""

from __future__ import annotations

import math

import pandas as pd
from scipy import stats

from kbench_core.stats import Estimate
from kbench_core.words import plural, unit_plural

from .paired import _TEST_TEXT, FEW_CLUSTERS, PairedEstimate

P_FLOOR = 1e-12  # smaller p-values are written "< 1e-12"


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


def p_text(p: float) -> str:
    """``= 0.0312`` for a p-value in a sentence; ``< 1e-12`` below :data:`P_FLOOR`, where a
    p is no longer a meaningful number (and "p = 0" would claim certainty)."""
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"= {p:.3g}"


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
                 f"about {groups:,} {unit_plural(cluster)} of this run's mean size "
                 f"{size:.3g}")
    return text


def verdict(est: Estimate, a: str, b: str, metric: str, *, lower_is_better: bool,
            adjusted_p: float | None = None, correction: str = "Holm",
            context: str = "", cluster: str | None = None, sd_diff: float | None = None,
            noun: str = "items", alpha: float = 0.05, n_clusters: int | None = None,
            n_compared: int | None = None, design_effect: float | None = None,
            adjusted_interval: tuple[float, float] | None = None,
            adjusted_name: str = "simultaneous") -> str:
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

    ``adjusted_interval`` (an every-pair table's ``delta_adj_low/high``, named by
    ``adjusted_name``) is quoted beside the pair's own interval, each said for what it is:
    the decision follows the adjusted p, an undecided pair's adjusted interval holds 0, and
    a pair Holm decides whose simultaneous interval still reaches 0 is said so. A p below
    :data:`P_FLOOR` is written "< 1e-12", never "= 0".
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
    adjusted_shown = adjusted_interval is not None and all(
        math.isfinite(x) for x in adjusted_interval)
    if adjusted_shown:
        numbers += (f" (this pair alone; {adjusted_name}: [{adjusted_interval[0]:+.3f}, "
                    f"{adjusted_interval[1]:+.3f}])")
    numbers += f", {unit}"
    p_name = f"{correction}-adjusted p" if adjusted_p is not None else "p"
    family = _family_text(adjusted_p is not None, correction, n_compared)
    if test in ("exact sign", "exact McNemar", "cluster sign-flip"):
        name = {"exact sign": "exact sign-test", "exact McNemar": "exact McNemar",
                "cluster sign-flip": f"exact sign-flip test over {plural(cluster or 'cluster')},"
                }[test]
        numbers += f", {name} {p_name} {p_text(quoted)}" + (f" ({family})" if family else "")
    else:
        numbers += (f", {p_name} {p_text(quoted)} ({_TEST_TEXT.get(test or '', 't test')}"
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
        reaches = ""
        if adjusted_shown and adjusted_interval[0] <= 0 <= adjusted_interval[1]:
            reaches = (f" {correction}'s adjusted p decides this pair; its {adjusted_name} "
                       "interval, more conservative, still reaches 0.")
        return (f"{a} scores {'lower' if a_lower else 'higher'} than {b}{about} in {metric} "
                f"({'better' if better else 'worse'}: {'lower' if lower_is_better else 'higher'}"
                f" is preferable): {a} − {b} = {numbers}.{reaches}{few}")
    need = min_items_sign_test(alpha)
    if test == "cluster sign-flip" and est.value != 0 and isinstance(est, PairedEstimate) \
            and est.n_discordant is not None and est.n_discordant < need:
        # the "too few" rule counts clusters: repeated items of a cluster are one unit
        word = plural(cluster) if cluster else "clusters"
        why = (f"only {est.n_discordant:,} {word} differ between the two (the clusters the "
               f"exact sign-flip test counts; their {noun} are not independent), too few "
               f"for it: it needs at least {need} (p < {alpha:g})")
        return (f"The data cannot tell {a} and {b} apart{about} in {metric}: {a} − {b} = "
                f"{numbers}; {why}.{few}")
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
               f"the pairs compared p is not below {alpha:g}"
               + (f" (and the {adjusted_name} interval holds 0)" if adjusted_shown else "")
               if adjusted_p is not None else
               f"the interval excludes 0, but the {_TEST_TEXT.get(test or '', 'test')}'s p is "
               f"not below {alpha:g}")
    else:
        why = "the interval includes 0"
    need_text = _needed_text(est, sd_diff, noun=noun, alpha=alpha, cluster=cluster,
                             n_clusters=n_clusters, design_effect=design_effect)
    return (f"The data cannot tell {a} and {b} apart{about} in {metric}: {a} − {b} = "
            f"{numbers}; {why}{need_text}.{few}")


def pair_verdicts(pairs: pd.DataFrame, label: str, *, lower_is_better: bool,
                  correction: str | None = "holm", cluster: str | None = None,
                  noun: str = "items", alpha: float = 0.05, level: float = 0.95) -> pd.Series:
    """The :func:`verdict` of every row of a :func:`compare_models` table, in its order: the
    adjusted p it decided on, the pair's own interval and the adjusted one
    (``delta_adj_low/high``) each named, so the table, the CLI, the app and the exports say
    the same (issue 37, item 6). ``label`` is the metric in words, ``cluster`` (as words)
    what the errors cluster by."""
    name = {"holm": "Holm", "fdr_bh": "Benjamini–Hochberg"}.get(correction or "",
                                                                 "unadjusted")
    m = int(pairs["p_value"].notna().sum())
    adjusted_name = (f"{level:.0%} simultaneous over the {m:,} pairs (Bonferroni)"
                     if correction == "holm" else
                     f"{level:.0%} false-coverage-rate adjusted over the {m:,} pairs "
                     "(Benjamini–Yekutieli)")
    texts = []
    for row in pairs.itertuples(index=False):  # one per pair: a sentence each
        raw = float(row.p_value) if pd.notna(row.p_value) else None
        adjusted = (float(row.p_adjusted) if correction is not None
                    and pd.notna(row.p_adjusted) else None)
        discordant = getattr(row, "n_discordant", pd.NA)
        est = PairedEstimate(
            float(row.delta), float(row.delta_low), float(row.delta_high), int(row.n), raw,
            int(row.n_dropped), test=row.test or None, df=float(row.df),
            n_clusters=None if pd.isna(row.n_clusters) else int(row.n_clusters),
            n_discordant=None if pd.isna(discordant) else int(discordant))
        interval = ((float(row.delta_adj_low), float(row.delta_adj_high))
                    if correction is not None and hasattr(row, "delta_adj_low") else None)
        texts.append(verdict(est, str(row.model_a), str(row.model_b), label,
                             lower_is_better=lower_is_better, adjusted_p=adjusted,
                             correction=name, cluster=cluster, noun=noun, alpha=alpha,
                             n_compared=len(pairs), adjusted_interval=interval,
                             adjusted_name=adjusted_name))
    return pd.Series(texts, index=pairs.index, dtype=object, name="verdict")
