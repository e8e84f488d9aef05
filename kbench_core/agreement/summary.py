"""What the Judge agreement page (and any export of it) shows, each built by one function:

* :func:`summarize`: every coefficient of one label as an :class:`AgreementSummary` (the
  pairwise table, Fleiss' κ, Krippendorff's α, percent agreement, κ against ``human``);
* :func:`consensus_leaderboard`: the majority-vote judge's tiers, ranked by SUI, as a
  :class:`ConsensusLeaderboard` with what the vote left undecided;
* :func:`judge_tiers`: the tiers of every judge and of the consensus (one consensus for both
  the spread and the leaderboard) as :class:`JudgeTiers`.

Nothing here computes a coefficient: these functions choose and combine the functions of the
package's other modules, so a page, a report and a test get the same numbers from one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from kbench_core.agreement._labels import (
    CONSENSUS,
    DEFAULT_LABELS,
    HUMAN,
    FailedAs,
    Level,
    Weights,
    count_failed_as_not_found,
    default_level,
    failed_rule,
    interpret,
    shared_layouts,
)
from kbench_core.agreement._labels import judges as judges_of
from kbench_core.agreement.alpha import krippendorff_alpha, pairwise_alpha
from kbench_core.agreement.consensus import consensus
from kbench_core.agreement.differences import judge_spread, spread_summary
from kbench_core.agreement.kappa import fleiss_kappa, human_agreement, pairwise_kappa
from kbench_core.agreement.overview import label_agreement, percent_agreement
from kbench_core.stats import Estimate, check_choice

__all__ = ["FAILED_WORDS", "AgreementSummary", "ConsensusLeaderboard", "JudgeTiers",
           "agreement_by_label", "consensus_leaderboard", "judge_tiers", "labels_as_judged",
           "summarize"]

# How each rule for failed judgements reads in a caption or an export.
FAILED_WORDS = {"missing": "failed judgements left out (missing, not 'no')",
                "not_found": "failed judgements counted as 'not found' (BlockBench's "
                             "convention)"}


def labels_as_judged(judged: pd.DataFrame, label: str,
                     failed_as: FailedAs = "missing") -> tuple[pd.DataFrame, FailedAs]:
    """The judgements every coefficient of ``label`` is computed from, and the rule applied
    to failed judgements: the frame itself (``missing``), or with every failed LLM judgement
    of a found label counted as "not found" (:func:`~kbench_core.agreement.
    count_failed_as_not_found`). Other labels keep their failures missing whatever
    ``failed_as`` says: they have no "not found"."""
    rule = failed_rule(label, failed_as)
    return (count_failed_as_not_found(judged, label) if rule == "not_found" else judged), rule

# A leaderboard row resting on fewer samples than this is marked "few samples"
# (docs/statistics.md).
FEW_LABEL = "few samples"


@dataclass(frozen=True)
class AgreementSummary:
    """Every agreement coefficient of one label of a judged run (see :func:`summarize`).

    Attributes
    ----------
    label : str
        The judged column compared.
    level : {"nominal", "ordinal", "interval"}
        Its measurement level (:func:`~kbench_core.agreement.default_level`).
    numeric : bool
        True for numbers (interval level): the pairwise table holds α, not κ, and there is no
        Fleiss' κ and no κ against ``human``.
    n_llm : int
        Judges other than ``human``.
    weights : {None, "linear", "quadratic"}
        The κ weights used (only ordinal labels are weighted).
    pairs : DataFrame or None
        :func:`~kbench_core.agreement.pairwise_kappa` (categorical labels) or
        :func:`~kbench_core.agreement.pairwise_alpha` (numbers); None with fewer than two LLM
        judges.
    fleiss : Estimate or None
        Fleiss' κ (categorical labels, two LLM judges or more).
    alpha : Estimate or None
        Krippendorff's α at ``level`` (two LLM judges or more).
    percent : Estimate or None
        Percent agreement (two LLM judges or more).
    human : DataFrame or None
        :func:`~kbench_core.agreement.human_agreement` with the Landis & Koch ``band`` of each
        κ; None for numbers or without a ``human`` judge.
    failed_as : {"missing", "not_found"}
        What a failed judgement counted as (``not_found`` only for the found labels).
    """

    label: str
    level: Level
    numeric: bool
    n_llm: int
    weights: Weights
    pairs: pd.DataFrame | None
    fleiss: Estimate | None
    alpha: Estimate | None
    percent: Estimate | None
    human: pd.DataFrame | None
    failed_as: FailedAs = "missing"

    @property
    def pair_value(self) -> Literal["kappa", "alpha"]:
        """The coefficient column of :attr:`pairs`."""
        return "alpha" if self.numeric else "kappa"

    @property
    def comparable(self) -> bool:
        """True when the LLM judges can be compared among themselves (two or more)."""
        return self.n_llm >= 2


def summarize(judged: pd.DataFrame, label: str, *, weights: Weights = None,
              ci: Literal["bootstrap"] | None = None, n_boot: int = 1000,
              random_state: int = 0, failed_as: FailedAs = "missing") -> AgreementSummary:
    """Every coefficient of ``label``: what the Judge agreement page shows at its top.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least two judges (LLM judges, or one of them and
        ``human``).
    label : str
        Any judged column.
    weights : {None, "linear", "quadratic"}
        Weighted κ; used for ordinal labels (``type_match``) only, ignored for the others
        (:attr:`AgreementSummary.weights` records what was used).
    ci : {None, "bootstrap"}
        Krippendorff's α (overall and per pair) gets a bootstrap interval over items with
        ``"bootstrap"``; κ and percent agreement always have their analytic intervals.
    n_boot, random_state : int
        The bootstrap's resamples and seed.
    failed_as : {"missing", "not_found"}
        A failed judgement (a judge without a row or a value for an item) is left out by
        default; ``"not_found"`` counts it as "not found" on ``target_found`` and
        ``partial_found`` (BlockBench's published convention), so every item enters Fleiss'
        κ. Other labels keep failures missing (:attr:`AgreementSummary.failed_as` says which
        rule was applied).

    Returns
    -------
    AgreementSummary

    Examples
    --------
    >>> from kbench_core.samples import judged_samples
    >>> s = summarize(judged_samples(), "target_found")
    >>> s.level, s.n_llm, s.pair_value, round(s.fleiss.value, 3) == round(
    ...     fleiss_kappa(judged_samples(), "target_found").value, 3)
    ('nominal', 3, 'kappa', True)
    """
    check_choice("ci", ci, (None, "bootstrap"))
    check_choice("weights", weights, (None, "linear", "quadratic"))
    judged, rule = labels_as_judged(judged, label, failed_as)
    level = default_level(judged, label)
    numeric = level == "interval"
    used: Weights = weights if level == "ordinal" else None
    n_llm = sum(j != HUMAN for j in judges_of(judged))
    pairs = fleiss = alpha = percent = None
    if n_llm >= 2:
        boot = dict(n_boot=n_boot, random_state=random_state)
        with shared_layouts():  # the four coefficients place the rows once
            pairs = (pairwise_alpha(judged, label, ci=ci, **boot) if numeric
                     else pairwise_kappa(judged, label, weights=used))
            fleiss = None if numeric else fleiss_kappa(judged, label)
            alpha = krippendorff_alpha(judged, label, level=level, ci=ci, **boot)
            percent = percent_agreement(judged, label)
    human = None
    if not numeric and HUMAN in judges_of(judged):
        table = human_agreement(judged, label, weights=used)
        if len(table):
            human = table.assign(band=interpret(table["kappa"].to_numpy(dtype=float)))
    return AgreementSummary(label=label, level=level, numeric=numeric, n_llm=n_llm,
                            weights=used, pairs=pairs, fleiss=fleiss, alpha=alpha,
                            percent=percent, human=human, failed_as=rule)


def agreement_by_label(judged: pd.DataFrame, labels: Sequence[str] | None = None, *,
                       failed_as: FailedAs = "missing", **options: Any) -> pd.DataFrame:
    """:func:`~kbench_core.agreement.label_agreement` with the rule for failed judgements
    applied label by label, and a ``failed_as`` column saying which rule each row used.

    ``labels`` defaults to those of :data:`DEFAULT_LABELS` the frame holds (the detector's
    own ``said_vulnerable`` and ``confidence`` are not among them); ``options`` go to
    ``label_agreement`` (``ci_alpha``, ``n_boot``, ``random_state``)."""
    if labels is None:
        labels = [c for c in DEFAULT_LABELS if c in judged and judged[c].notna().any()]
    parts, plain = [], []
    for name in labels:
        data, rule = labels_as_judged(judged, name, failed_as)
        if rule == "missing":
            plain.append(name)
        else:
            parts.append((name, label_agreement(data, [name], **options).assign(
                failed_as=rule)))
    if plain or not parts:  # the labels without a "not found" in one call (one layout)
        parts.append(("", label_agreement(judged, plain, **options).assign(
            failed_as="missing")))
    order = {name: i for i, name in enumerate(labels)}
    table = pd.concat([p for _, p in parts], ignore_index=True)
    return table.iloc[table["label"].map(order).to_numpy().argsort(kind="stable")].reset_index(
        drop=True)


@dataclass(frozen=True)
class ConsensusLeaderboard:
    """The majority-vote judge's leaderboard (see :func:`consensus_leaderboard`).

    Attributes
    ----------
    table : DataFrame
        :func:`kbench_core.vuln.tiers` of the consensus, ranked by SUI with
        :func:`kbench_core.ranking.rank_by` (``rank`` 1 = best, ``rank_text``), with ``n``,
        ``n_samples``, ``few_items`` (fewer than 30 samples, marked "few samples" in
        ``rank_text``) and ``renormalised``.
    min_votes : int
        Votes a value needed.
    n_llm : int
        The LLM judges that voted.
    judges : tuple of str
        Their names.
    failed_as : {"missing", "not_found"}
        What a failed judgement counted as in the vote.
    n_items : int
        Answers (sample × detector × prompt type).
    n_undecided : int
        Answers without a majority on at least one reported label.
    no_majority : tuple of (str, int)
        Answers without a majority, per reported label.
    """

    table: pd.DataFrame
    min_votes: int
    n_llm: int
    n_items: int
    n_undecided: int
    no_majority: tuple[tuple[str, int], ...]
    judges: tuple[str, ...] = ()
    failed_as: FailedAs = "missing"


def _ranked(tiers: pd.DataFrame) -> pd.DataFrame:
    from kbench_core.ranking import rank_by

    return rank_by(tiers, "sui", few_label=FEW_LABEL)


def _board(voted: pd.DataFrame, tiers: pd.DataFrame, n_llm: int) -> ConsensusLeaderboard:
    return ConsensusLeaderboard(
        table=_ranked(tiers), min_votes=int(voted.attrs["min_votes"]), n_llm=n_llm,
        n_items=len(voted), n_undecided=int((voted["no_majority"] != "").sum()),
        no_majority=tuple((str(k), int(v)) for k, v in voted.attrs["no_majority"].items()),
        judges=tuple(voted.attrs["judges"]), failed_as=voted.attrs["failed_as"])


def consensus_leaderboard(judged: pd.DataFrame, *, judges: Sequence[str] | None = None,
                          min_votes: int | None = None, failed_as: FailedAs = "missing",
                          **tier_options: Any) -> ConsensusLeaderboard:
    """The tiers of the majority-vote judge (:func:`~kbench_core.agreement.consensus`),
    ranked by SUI.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least one LLM judge.
    judges, min_votes, failed_as
        The consensus's voters, the votes it needs (default: a strict majority of them) and
        what a failed judgement counts as (:func:`~kbench_core.agreement.consensus`).
    **tier_options
        Keyword arguments of :func:`kbench_core.vuln.tiers` (``partial_credit``, ``ci``, ...).

    Examples
    --------
    >>> from kbench_core.samples import judged_samples
    >>> board = consensus_leaderboard(judged_samples())
    >>> board.min_votes, board.table["rank"].tolist() == sorted(board.table["rank"].tolist())
    (2, True)
    """
    from kbench_core import vuln

    voted = consensus(judged, judges=judges, min_votes=min_votes, failed_as=failed_as)
    return _board(voted, vuln.tiers(voted, **tier_options), len(voted.attrs["judges"]))


@dataclass(frozen=True)
class JudgeTiers:
    """The tiers of every judge and of their consensus (see :func:`judge_tiers`).

    Attributes
    ----------
    spread : DataFrame
        :func:`~kbench_core.agreement.judge_spread`: the tiers of each judge, then of the
        consensus, ``judge`` an ordered categorical.
    summary : DataFrame
        :func:`~kbench_core.agreement.spread_summary` of ``metrics``: the range across the LLM
        judges per model.
    consensus : ConsensusLeaderboard
        The consensus's leaderboard.
    """

    spread: pd.DataFrame
    summary: pd.DataFrame
    consensus: ConsensusLeaderboard


def judge_tiers(judged: pd.DataFrame, *, judges: Sequence[str] | None = None,
                min_votes: int | None = None, failed_as: FailedAs = "missing",
                metrics: tuple[str, ...] = ("tdr", "sui"),
                **tier_options: Any) -> JudgeTiers:
    """How much the judge moves the score: the spread of ``metrics`` across the judges and
    the consensus leaderboard, with the consensus built once for both.

    Same numbers as ``judge_spread(judged, judges=..., min_votes=..., failed_as=...)``, its
    ``spread_summary`` and :func:`consensus_leaderboard`; ``tier_options`` go to every
    :func:`kbench_core.vuln.tiers`. Every judge's own tiers are shown (a judge left out of
    the vote still has its row).
    """
    from kbench_core import vuln

    names = judges_of(judged)
    if not any(n != HUMAN for n in names):
        raise ValueError("judge_tiers needs at least one judge other than 'human'")
    voted = consensus(judged, judges=judges, min_votes=min_votes, failed_as=failed_as)
    voted_tiers = vuln.tiers(voted, **tier_options)
    each = judge_spread(judged, include_consensus=False, failed_as=failed_as, **tier_options)
    spread = pd.concat([each.astype({"judge": str}), voted_tiers], ignore_index=True)
    spread["judge"] = pd.Categorical(spread["judge"].astype(str),
                                     categories=[*names, CONSENSUS], ordered=True)
    return JudgeTiers(spread=spread, summary=spread_summary(spread, metrics),
                      consensus=_board(voted, voted_tiers, len(voted.attrs["judges"])))
