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

from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from kbench_core.agreement._labels import (
    CONSENSUS,
    HUMAN,
    Level,
    Weights,
    default_level,
    interpret,
    judges,
)
from kbench_core.agreement.alpha import krippendorff_alpha, pairwise_alpha
from kbench_core.agreement.consensus import consensus
from kbench_core.agreement.differences import judge_spread, spread_summary
from kbench_core.agreement.kappa import fleiss_kappa, human_agreement, pairwise_kappa
from kbench_core.agreement.overview import percent_agreement
from kbench_core.stats import Estimate, check_choice

__all__ = ["AgreementSummary", "ConsensusLeaderboard", "JudgeTiers", "consensus_leaderboard",
           "judge_tiers", "summarize"]

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
              random_state: int = 0) -> AgreementSummary:
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
    level = default_level(judged, label)
    numeric = level == "interval"
    used: Weights = weights if level == "ordinal" else None
    n_llm = sum(j != HUMAN for j in judges(judged))
    pairs = fleiss = alpha = percent = None
    if n_llm >= 2:
        boot = dict(n_boot=n_boot, random_state=random_state)
        pairs = (pairwise_alpha(judged, label, ci=ci, **boot) if numeric
                 else pairwise_kappa(judged, label, weights=used))
        fleiss = None if numeric else fleiss_kappa(judged, label)
        alpha = krippendorff_alpha(judged, label, level=level, ci=ci, **boot)
        percent = percent_agreement(judged, label)
    human = None
    if not numeric and HUMAN in judges(judged):
        table = human_agreement(judged, label, weights=used)
        if len(table):
            human = table.assign(band=interpret(table["kappa"].to_numpy(dtype=float)))
    return AgreementSummary(label=label, level=level, numeric=numeric, n_llm=n_llm,
                            weights=used, pairs=pairs, fleiss=fleiss, alpha=alpha,
                            percent=percent, human=human)


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


def _ranked(tiers: pd.DataFrame) -> pd.DataFrame:
    from kbench_core.ranking import rank_by

    return rank_by(tiers, "sui", few_label=FEW_LABEL)


def _board(voted: pd.DataFrame, tiers: pd.DataFrame, n_llm: int) -> ConsensusLeaderboard:
    return ConsensusLeaderboard(
        table=_ranked(tiers), min_votes=int(voted.attrs["min_votes"]), n_llm=n_llm,
        n_items=len(voted), n_undecided=int((voted["no_majority"] != "").sum()),
        no_majority=tuple((str(k), int(v)) for k, v in voted.attrs["no_majority"].items()))


def consensus_leaderboard(judged: pd.DataFrame, *, min_votes: int | None = None,
                          **tier_options: Any) -> ConsensusLeaderboard:
    """The tiers of the majority-vote judge (:func:`~kbench_core.agreement.consensus`),
    ranked by SUI.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame with at least one LLM judge.
    min_votes : int, optional
        Votes the consensus needs (default: a strict majority of the LLM judges).
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

    voted = consensus(judged, min_votes=min_votes)
    n_llm = sum(j != HUMAN for j in judges(judged))
    return _board(voted, vuln.tiers(voted, **tier_options), n_llm)


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


def judge_tiers(judged: pd.DataFrame, *, min_votes: int | None = None,
                metrics: tuple[str, ...] = ("tdr", "sui"),
                **tier_options: Any) -> JudgeTiers:
    """How much the judge moves the score: the spread of ``metrics`` across the judges and
    the consensus leaderboard, with the consensus built once for both.

    Same numbers as ``judge_spread(judged, min_votes=...)``, its ``spread_summary`` and
    :func:`consensus_leaderboard`; ``tier_options`` go to every :func:`kbench_core.vuln.tiers`.
    """
    from kbench_core import vuln

    names = judges(judged)
    llm = [n for n in names if n != HUMAN]
    if not llm:
        raise ValueError("judge_tiers needs at least one judge other than 'human'")
    voted = consensus(judged, min_votes=min_votes)
    voted_tiers = vuln.tiers(voted, **tier_options)
    each = judge_spread(judged, include_consensus=False, **tier_options)
    spread = pd.concat([each.astype({"judge": str}), voted_tiers], ignore_index=True)
    spread["judge"] = pd.Categorical(spread["judge"].astype(str),
                                     categories=[*names, CONSENSUS], ordered=True)
    return JudgeTiers(spread=spread, summary=spread_summary(spread, metrics),
                      consensus=_board(voted, voted_tiers, len(llm)))
