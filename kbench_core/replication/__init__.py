r"""Human–agent replication metrics (``docs/metrics/replication.md``): PAS with Fisher-z pooling
and ECS as weighted Lin's concordance correlation, per model, vectorised over all models at once.

Source: HumanStudy-Bench's metric document (its formulas, and the ones used here, are written
out in ``docs/metrics/replication.md``) and the released
``src/evaluation/stats_lib.py`` the document points to.

- **Effect sizes** are compared on Cohen's d scale (:func:`effect_to_d`).
- **PAS** (Probability of Agreement State) per test is
  :math:`\pi_h\pi_a + (1-\pi_h)(1-\pi_a)`, the probability that human and agent are in the
  same state (both an effect, or both none); pooled test → finding → study on Fisher's z scale,
  then averaged over studies per model (:func:`pas`).
- **ECS** (Effect Consistency Score) is Lin's concordance correlation between human and agent d
  over the tests, weighted so that each study and each finding within it counts equally
  (:func:`ecs`, :func:`weighted_ccc`).

Defaults follow SPEC; each published behaviour is an option:

=======================  ==========================  ==========================================
choice                   default (SPEC)              other option: who does it
=======================  ==========================  ==========================================
tests within a finding   ``finding_weights="equal"``  ``"n_eff"``: the seed's prose (the
                         (the released code)          released ``aggregate_study_pas`` is equal)
findings within a study  ``study_pooling="fisher"``  ``"mean"``: the seed's prose ("simple
                         (the released code)          mean across findings")
CCC moments              ``normalize_weights=True``  ``False``: the released ``weighted_ccc``
                         (Lin's CCC)                  (weighted sums, mean shift unscaled)
per-study ECS weights    ``weighting="structure"``   ``"equal"``: the released per-study ECS
=======================  ==========================  ==========================================

Auxiliary (the seed's legacy metrics, *not* to be reported as primary): normalised PAS against
the human ceiling (:func:`pas_normalized`), and ECS_Strict from z-differences
(:func:`ecs_strict`).

The package's modules, all re-exported here: ``effects`` (effect sizes, SEs, posteriors,
:func:`prepare_tests`), ``pas``, ``ecs`` (CCC, ECS, ECS_Strict) and ``summary`` (the
``replication_summary`` tables and :func:`summary_leaderboard`).
"""

from kbench_core.replication.ecs import (  # noqa: F401  (the module's other names, as before)
    MIN_STUDY_PAIRS,
    STOUFFER_CAP,
    _ccc_from_sums,
    ecs,
    ecs_from_sums,
    ecs_strict,
    finding_sums,
    scatter_points,
    structure_weights,
    weighted_ccc,
)
from kbench_core.replication.effects import (  # noqa: F401  (the module's other names, as before)
    EPSILON,
    Array,
    ArrayLike,
    effect_to_d,
    log_odds_ratio,
    posterior_from_bf,
    prepare_tests,
    se_cohens_d,
    se_fisher_z,
    se_log_odds_ratio,
    se_proportion,
    se_rank_biserial,
)
from kbench_core.replication.pas import (  # noqa: F401  (the module's other names, as before)
    NEUTRAL_CEILING,
    PasResult,
    finding_pas_sums,
    pas,
    pas_from_sums,
    pas_normalized,
)
from kbench_core.replication.summary import (
    SUMMARY_LABELS,
    finding_rows,
    published_ecs,
    study_rows,
    summary_leaderboard,
)

__all__ = [
    "EPSILON",
    "SUMMARY_LABELS",
    "PasResult",
    "ecs",
    "ecs_from_sums",
    "ecs_strict",
    "effect_to_d",
    "finding_pas_sums",
    "finding_rows",
    "finding_sums",
    "log_odds_ratio",
    "pas",
    "pas_from_sums",
    "pas_normalized",
    "posterior_from_bf",
    "prepare_tests",
    "published_ecs",
    "scatter_points",
    "se_cohens_d",
    "se_fisher_z",
    "se_log_odds_ratio",
    "se_proportion",
    "se_rank_biserial",
    "structure_weights",
    "study_rows",
    "summary_leaderboard",
    "weighted_ccc",
]
