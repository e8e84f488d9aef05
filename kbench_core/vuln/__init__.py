r"""BlockBench's seven tiers of LLM-judged vulnerability detection (``docs/metrics/vuln.md``).

:func:`tiers` takes a validated ``judged`` frame (one row per sample × detector × prompt type ×
judge, see :mod:`kbench_core.io`), keeps one judge, and returns one row per group (``model`` by
default, ``("model", "prompt_type")`` to split by prompt) with every metric of the seed's seven
tiers, its 95% interval and the ``n`` it rests on. Everything is computed with ``np.bincount``
over integer group codes, all groups at once.

Defaults reproduce BlockBench's published rules; the critique's improvements
(``docs/metrics/vuln.md``, "Suggested Improvements") are options:

===============================  ============================  ==============================
critique                         option                        default (the seed)
===============================  ============================  ==============================
no partial credit (§7)           ``partial_credit=0.5``        1.0: partial = full credit
no severity weighting (§4)       ``severity_weights=           every target weighs 1
                                 SEVERITY_WEIGHTS``
fixed calibration bins (§8)      ``binning="quantile"``        10 uniform bins
multiplicative collapse (§3)     ``tus_geometric`` (always     ``tus`` (the product)
                                 reported)
arbitrary SUI weights (§1)       ``sui_weights={...}``         .25/.25/.15/.25/.10
no location accuracy (§10)       ``location_accuracy`` (always —
                                 reported)
small samples (§6)               intervals on every metric     —
undefined ratios                 ``zero_division=np.nan``      0 (finding precision 1.0)
===============================  ============================  ==============================

A failed judgement (``said_vulnerable``, ``target_found`` or ``is_vulnerable`` missing) is left
out of every metric and counted in ``n_missing``: it is never a "no".

Intervals of rates and means are clustered by sample (a contract's prompt types are not
independent answers; :class:`~kbench_core.vuln._formulas.Clusters`). ``ece`` is the plug-in
(biased upward); ``ece_l2_debiased`` the debiased ℓ2 calibration error beside it. A run with a
``difficulty`` column gets ``<rate>_difficulty_mean`` (the mean over difficulty tiers) beside
the rates of :data:`DIFFICULTY_MEAN_RATES`.

The package's modules, all re-exported here:

==========================  ======================================================================
module                      holds
==========================  ======================================================================
``definitions``             the tiers, metric directions and labels, default weights, thresholds
``tiers``                   :func:`tiers`, in named steps; :func:`prepare_answers`
``bootstrap``               the percentile intervals of ``tiers(..., ci="bootstrap")``
``reliability``             :func:`reliability` (reliability diagrams' tables), :func:`rebin`
``sui``                     :func:`sui_contributions`, :func:`reweight_sui`
``fixed``                   :func:`fixed_claims` (fixed contracts still claimed)
``findings``                :func:`sample_findings` (the findings behind answers)
``_prepare``, ``_formulas``  answers to arrays and group codes; ratios, composites, intervals
==========================  ======================================================================
"""

from kbench_core.vuln._prepare import judges_of
from kbench_core.vuln.definitions import (  # noqa: F401  (the module's other names, as before)
    DIFFICULTY_MEAN_RATES,
    FEW_SAMPLES,
    HIGHER_IS_BETTER,
    LOWER_IS_BETTER,
    METRIC_LABELS,
    OVERCONFIDENT_ABOVE,
    REASONING,
    SEVERITY_WEIGHTS,
    SUI_WEIGHTS,
    TIERS,
    UNDERCONFIDENT_BELOW,
    VALID_COUNTS,
    Binning,
)
from kbench_core.vuln.findings import sample_findings
from kbench_core.vuln.fixed import fixed_claims, fixed_claims_from_sums
from kbench_core.vuln.reliability import rebin, reliability
from kbench_core.vuln.sui import SUI_COMPONENTS, reweight_sui, sui_contributions
from kbench_core.vuln.tiers import PreparedAnswers, prepare_answers, tiers

__all__ = [
    "DIFFICULTY_MEAN_RATES",
    "HIGHER_IS_BETTER",
    "LOWER_IS_BETTER",
    "METRIC_LABELS",
    "SEVERITY_WEIGHTS",
    "SUI_COMPONENTS",
    "SUI_WEIGHTS",
    "TIERS",
    "PreparedAnswers",
    "fixed_claims",
    "fixed_claims_from_sums",
    "judges_of",
    "prepare_answers",
    "rebin",
    "reliability",
    "reweight_sui",
    "sample_findings",
    "sui_contributions",
    "tiers",
]
