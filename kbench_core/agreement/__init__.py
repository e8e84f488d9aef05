r"""Agreement between several judges labelling the same items (``docs/metrics/agreement.md``).

BlockBench's metrics rest on ten subjective decisions of an LLM judge per answer
(``docs/metrics/vuln.md``, "No inter-rater reliability"); its critique asks for several
judges and a measure of how far they agree. This module takes a validated ``judged`` frame (one
row per sample × detector × prompt type × judge, see :mod:`kbench_core.io`) and treats

* an **item** as one (``sample``, ``model``, ``prompt_type``): one answer of one detector, which
  every judge read;
* a **label** as any judged column: ``target_found``, ``said_vulnerable``, ``type_match``,
  ``rcir``, ``confidence``, the finding counts, ...;
* a **failed judgement** (no row for the judge, or a missing value) as missing, never as "no"
  (BlockBench's convention, a failed judgement counts as "not found", is the option
  ``failed_as="not_found"`` of :func:`consensus`, :func:`summarize` and
  :func:`agreement_by_label`);
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
:func:`count_failed_as_not_found`  BlockBench's "failed = not found"   —
:func:`judge_rows`                 one judge's rows, ``failed_as``     —
:func:`agreement_by_label`         ``label_agreement`` + ``failed_as`` as above
:func:`disagreements`              items where judges differ           —
:func:`judge_spread`               ``vuln.tiers`` per judge            those of ``tiers``
:func:`summarize`                  all of one label (the page's top)   as above
:func:`consensus_leaderboard`      consensus tiers ranked by SUI       those of ``tiers``
:func:`judge_tiers`                spread + consensus leaderboard      those of ``tiers``
=================================  ==================================  =========================

The coefficients come from statsmodels (``cohens_kappa``, ``fleiss_kappa``) and the
``krippendorff`` package; this module only lays the judgements out on an items × judges grid
(one scatter, no per-record loop) and adds what those libraries lack: Gwet's standard error of
Fleiss' κ, and bootstrap replicates that reweight items instead of re-running the library on
each resample.

The package's modules, all re-exported here: ``_labels`` (names, judges, labels, the items ×
judges grid), ``kappa`` (Cohen's and Fleiss' κ), ``alpha`` (Krippendorff's α), ``overview``
(percent agreement, :func:`label_agreement`), ``consensus`` and ``differences``
(:func:`disagreements`, :func:`confusion`, :func:`judge_spread`, :func:`spread_summary`) and
``summary`` (what the Judge agreement page shows, each from one call: :func:`summarize`,
:func:`consensus_leaderboard`, :func:`judge_tiers`).
"""

import sys

from kbench_core.agreement._labels import (  # noqa: F401  (the module's other names, as before)
    CONSENSUS,
    DEFAULT_LABELS,
    DETECTOR_FIELDS,
    FAILED_AS,
    FOUND_LABELS,
    HUMAN,
    ITEM_KEY,
    JUDGED_COLUMNS,
    LANDIS_KOCH,
    MAX_ALPHA_VALUES,
    MISSING,
    ORDERED_LABELS,
    REASONING,
    REPORTED,
    TRUTH_COLUMNS,
    Ci,
    FailedAs,
    Level,
    Weights,
    check_min_votes,
    count_failed_as_not_found,
    default_level,
    failed_rule,
    interpret,
    judged_labels,
    judges,
    voters,
)
from kbench_core.agreement.alpha import krippendorff_alpha, pairwise_alpha
from kbench_core.agreement.consensus import consensus, judge_rows
from kbench_core.agreement.differences import (
    confusion,
    disagreements,
    judge_spread,
    spread_summary,
    stacked_spread,
)
from kbench_core.agreement.kappa import fleiss_kappa, human_agreement, pairwise_kappa
from kbench_core.agreement.overview import label_agreement, percent_agreement
from kbench_core.agreement.summary import (
    FAILED_WORDS,
    AgreementSummary,
    ConsensusLeaderboard,
    JudgeTiers,
    agreement_by_label,
    consensus_leaderboard,
    judge_tiers,
    labels_as_judged,
    summarize,
)

__all__ = [
    "CONSENSUS", "DEFAULT_LABELS", "DETECTOR_FIELDS", "FAILED_AS", "FAILED_WORDS",
    "FOUND_LABELS", "HUMAN", "LANDIS_KOCH", "AgreementSummary", "ConsensusLeaderboard",
    "FailedAs", "JudgeTiers", "Level", "Weights", "agreement_by_label", "check_min_votes",
    "confusion", "consensus", "consensus_leaderboard", "count_failed_as_not_found",
    "default_level", "disagreements", "failed_rule", "fleiss_kappa", "human_agreement",
    "interpret", "judge_rows", "judge_spread", "judge_tiers", "judged_labels", "judges",
    "krippendorff_alpha", "label_agreement", "labels_as_judged", "pairwise_alpha",
    "pairwise_kappa", "percent_agreement", "spread_summary", "stacked_spread", "summarize",
    "voters",
]

# doctest.testmod(kbench_core.agreement) sees only what is defined here; hand it the examples
# of the functions and classes defined in the modules.
__test__ = {f"{module.__name__}.{name}": value
            for module in (sys.modules[f"{__name__}.{part}"] for part in
                           ("_labels", "kappa", "alpha", "overview", "consensus", "differences",
                             "summary"))
            for name, value in vars(module).items()
            if callable(value) and getattr(value, "__module__", None) == module.__name__}
