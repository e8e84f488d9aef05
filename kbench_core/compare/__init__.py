"""Is model A really better than model B? Paired differences, clustered errors, adjusted p,
rank intervals and sample-size planning (``docs/statistics.md``).

Models in one run answer the same items, so every comparison is paired: a per-item value (a
bias score, a correct verdict, an effect-size gap) is averaged within each item for each model,
items present for both models are kept (the others are dropped and counted, never imputed), and
the statistics are computed on the per-item differences.

- :func:`paired_difference` — mean difference with its interval and p-value, the test named
  (:class:`PairedEstimate`): the paired t; the exact McNemar test with Newcombe's interval on
  0/1 outcomes; with ``cluster`` (items grouped by bias, study or contract) the CR2
  cluster-robust standard error with Bell–McCaffrey degrees of freedom (:func:`cr2_mean`),
  and for 0/1 outcomes the exact sign-flip test over the clusters
  (:func:`cluster_sign_flip_p`) with Newcombe's interval on Kish's effective n
  (:func:`clustered_newcombe`).
- :func:`compare_models` — every pair, with raw and adjusted p (Holm or Benjamini–Hochberg,
  statsmodels' ``multipletests``), the test behind each, and intervals that agree with the
  adjusted decision (:func:`adjusted_level`); :func:`pair_verdicts` words each pair.
- :func:`compare_pair` — one pair with everything a paper quotes; its p is adjusted only over
  the comparisons asked for (one pair: unadjusted).
- :func:`rank_intervals` — each model's rank and its 95% bootstrap interval over items (or
  clusters, marked when fewer than :data:`FEW_CLUSTERS`).
- :func:`samples_needed` — items needed to detect a paired difference.
- :func:`trial_grain_refusal` — why a comparison cannot be made on a frame (a bias run an
  engine reduced to weighted tuples has no trials to pair): every function above raises
  :class:`TrialGrainRefused` with that reason.
- :func:`verdict` — the plain-language sentence a paper can quote, claiming a direction only
  when the p it quotes (adjusted for multiplicity when an adjustment is in force) is below α
  and its interval excludes zero (:func:`claims_direction`).

The package's modules, all re-exported here:

================  ====================================================================
module            holds
================  ====================================================================
``items``         per-item values (:func:`item_values`, :func:`per_item_quantities`),
                  metric directions
``paired``        :class:`PairedEstimate`, :func:`paired_difference`, :func:`cr2_mean`,
                  :func:`newcombe_paired`, :func:`sign_test`, :func:`cluster_sign_flip_p`,
                  :func:`kish_design_effect`, :func:`clustered_newcombe`
``multiplicity``  :func:`compare_models` (adjusted p and intervals), :func:`adjusted_level`,
                  :func:`group_differences`
``ranks``         :func:`rank_intervals`
``verdicts``      :func:`samples_needed`, :func:`claims_direction`, :func:`verdict`,
                  :func:`pair_verdicts`, :func:`p_text`
``pair``          :class:`Comparison`, :func:`compare_pair`
================  ====================================================================
"""

from __future__ import annotations

from scipy import stats  # noqa: F401  (the old module's attribute: tests patch scipy by it)

from .items import (  # noqa: F401  (re-exported: the names of the old module)
    COMPARISONS,
    FEW_ITEMS,
    ITEM_KEYS,
    Correction,
    ItemMeans,
    TrialGrainRefused,
    _ByKind,
    _item_columns,
    _item_means,
    _label_codes,
    direction,
    is_lower_better,
    item_values,
    lower_is_better_metrics,
    per_item_quantities,
    per_item_values,
    trial_grain_refusal,
)
from .multiplicity import (  # noqa: F401  (re-exported: the names of the old module)
    _PAIR_CELLS,
    _adjust,
    _grouped_paired,
    _pairs_paired,
    _sign_p,
    adjusted_level,
    compare_models,
    group_differences,
)
from .pair import (  # noqa: F401  (re-exported: the names of the old module)
    _CORRECTION_NAMES,
    Comparison,
    Family,
    compare_pair,
)
from .paired import (  # noqa: F401  (re-exported: the names of the old module)
    _TEST_TEXT,
    FEW_CLUSTERS,
    PairedEstimate,
    TestName,
    _is_binary,
    _paired,
    _paired_values,
    cluster_sign_flip_p,
    clustered_newcombe,
    cr2_mean,
    kish_design_effect,
    newcombe_paired,
    paired_difference,
    sign_test,
)
from .ranks import (  # noqa: F401  (re-exported: the names of the old module)
    _directions,
    _ranks,
    rank_intervals,
)
from .verdicts import (  # noqa: F401  (re-exported: the names of the old module)
    P_FLOOR,
    _family_text,
    _needed_text,
    _test_of,
    claims_direction,
    min_items_sign_test,
    p_text,
    pair_verdicts,
    samples_needed,
    verdict,
)

__all__ = [
    "COMPARISONS",
    "FEW_CLUSTERS",
    "FEW_ITEMS",
    "ITEM_KEYS",
    "P_FLOOR",
    "Comparison",
    "ItemMeans",
    "PairedEstimate",
    "TrialGrainRefused",
    "adjusted_level",
    "claims_direction",
    "cluster_sign_flip_p",
    "clustered_newcombe",
    "compare_models",
    "compare_pair",
    "cr2_mean",
    "direction",
    "group_differences",
    "is_lower_better",
    "item_values",
    "kish_design_effect",
    "lower_is_better_metrics",
    "min_items_sign_test",
    "newcombe_paired",
    "p_text",
    "pair_verdicts",
    "paired_difference",
    "per_item_quantities",
    "per_item_values",
    "rank_intervals",
    "samples_needed",
    "sign_test",
    "trial_grain_refusal",
    "verdict",
]
