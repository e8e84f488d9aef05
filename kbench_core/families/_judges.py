"""Which judge's verdicts a judged run is shown by: the consensus of several LLM judges
(:class:`ConsensusOptions`) or one judge, checked against the run (:func:`check_judges`), and
the runs whose detectors may share a leaderboard. A helper module of
:mod:`kbench_core.families.judged`, which re-exports every name (its name starts with ``_``,
so the registry does not take it for a family)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from kbench_core.families._base import Options

__all__ = ["MAJORITY", "SHARED_SAMPLES", "ConsensusOptions", "check_judges", "default_judge",
           "judge_views", "leaderboard_groups", "majority_provenance", "offered_judges"]

MAJORITY = "majority"  # = kbench_core.agreement.CONSENSUS (not imported: agreement is lazy)


@dataclass(frozen=True)
class ConsensusOptions(Options):
    """Which judge a multi-judge run is shown by, and how its majority is made
    (docs/metrics/agreement.md).

    ``judge`` is ``"majority"`` (the consensus; the default for several LLM judges) or one
    judge's name; None shows the majority first, then every judge. ``judges`` are the
    voters (empty: every LLM judge), ``min_votes`` the votes needed (None: a strict majority
    of them), ``failed_as`` what a failed judgement counts as (``"missing"`` or
    ``"not_found"``, BlockBench's convention). :meth:`consensus` gives the keyword arguments
    of :func:`kbench_core.agreement.consensus`; :meth:`provenance` what an export records.
    """

    judge: str | None = None
    judges: tuple[str, ...] = ()
    min_votes: int | None = None
    failed_as: Literal["missing", "not_found"] = "missing"

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any] | None) -> ConsensusOptions:
        """The options named in ``options`` (others ignored); ``judges`` may come as a list
        or as comma-separated text, ``failed_as`` as ``not-found``."""
        if isinstance(options, ConsensusOptions):
            return options
        given = dict(options or {})
        if isinstance(given.get("judges"), str):
            given["judges"] = tuple(j.strip() for j in given["judges"].split(",") if j.strip())
        elif given.get("judges") is not None:
            given["judges"] = tuple(map(str, given["judges"]))
        else:
            given.pop("judges", None)
        if isinstance(given.get("failed_as"), str):
            given["failed_as"] = given["failed_as"].replace("-", "_")
        return super().from_mapping(given)

    def consensus(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.agreement.consensus`."""
        return dict(judges=list(self.judges) or None, min_votes=self.min_votes,
                    failed_as=self.failed_as)

    def provenance(self) -> dict[str, Any]:
        """The choice as an exported file records it (the voters spelled out)."""
        return {"judge": self.judge or MAJORITY, "consensus_judges": list(self.judges) or "all",
                "min_votes": self.min_votes if self.min_votes is not None else "majority",
                "failed_as": self.failed_as}


def check_judges(judged: pd.DataFrame, options: Mapping[str, Any] | None) -> ConsensusOptions:
    """The :class:`ConsensusOptions` in ``options``, checked against the run before any work:
    ValueError naming the run's judges for an unknown ``judge`` or voter, or ``min_votes``
    out of range."""
    from kbench_core import agreement, vuln

    chosen = ConsensusOptions.from_mapping(options)
    agreement.failed_rule("target_found", chosen.failed_as)
    names = vuln.judges_of(judged)
    llm = [n for n in names if n != "human"]
    offered = offered_judges(judged)
    if chosen.judge is not None and chosen.judge not in offered:
        raise ValueError(f"no judge {chosen.judge!r} in this run; choose one of "
                         f"{', '.join(offered)}")
    if llm:
        voting = agreement.voters(judged, list(chosen.judges) or None)
        agreement.check_min_votes(chosen.min_votes, len(voting))
    return chosen


SHARED_SAMPLES = 0.5  # runs of one benchmark share at least this share of their contracts


def leaderboard_groups(frames: Mapping[str, pd.DataFrame]) -> list[list[str]]:
    """The runs (by name, in the order given) whose detectors may be ranked in one
    leaderboard: runs judged by the same LLM judges on the same benchmark, told by their
    contracts (two runs share at least :data:`SHARED_SAMPLES` of the smaller one's samples).
    Runs of different benchmarks or judges are never ranked together by default: one
    benchmark's detectors would be ranked on other contracts, by other judges and under
    another majority rule than the other's.

    >>> import pandas as pd
    >>> ds = pd.DataFrame({"sample": ["ds_1", "ds_2"], "judge": ["a", "b"]})
    >>> tc = pd.DataFrame({"sample": ["tc_1", "tc_2"], "judge": ["a", "b"]})
    >>> leaderboard_groups({"DS claude": ds, "TC": tc, "DS gpt": ds})
    [['DS claude', 'DS gpt'], ['TC']]
    """
    from kbench_core import vuln

    def signature(frame: pd.DataFrame) -> tuple[tuple[str, ...], set[str]]:
        judges = tuple(j for j in vuln.judges_of(frame) if j != "human")
        return judges, {str(s) for s in pd.unique(frame["sample"].dropna())}

    groups: list[tuple[tuple[str, ...], set[str], list[str]]] = []
    for name, frame in frames.items():
        judges, samples = signature(frame)
        for group_judges, group_samples, names in groups:
            shared = len(samples & group_samples)
            if group_judges == judges and shared >= SHARED_SAMPLES * min(
                    len(samples), len(group_samples)) and shared > 0:
                names.append(name)
                group_samples |= samples
                break
        else:
            groups.append((judges, set(samples), [name]))
    return [names for _, _, names in groups]


def default_judge(judged: pd.DataFrame) -> str | None:
    """The judge a judged run is shown by: ``majority`` with several LLM judges, else its
    first judge (None without any)."""
    from kbench_core import vuln

    names = vuln.judges_of(judged)
    return MAJORITY if sum(n != "human" for n in names) >= 2 else (names[0] if names else None)


def majority_provenance(kind: str, frame: pd.DataFrame,
                        options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What an export of a run records of its majority: the :class:`ConsensusOptions`
    provenance for a judged run with several LLM judges, else nothing."""
    if kind != "judged" or default_judge(frame) != MAJORITY:
        return {}
    return ConsensusOptions.from_mapping(options).provenance()


def offered_judges(judged: pd.DataFrame) -> list[str]:
    """The judges a judged run is shown by, in order (its tables, the Judge menu): with
    several LLM judges ``majority`` first, then each judge by name (``human`` last); with one,
    that judge. ``judged`` needs only its ``judge`` column."""
    from kbench_core import vuln

    names = vuln.judges_of(judged)
    return [MAJORITY, *names] if default_judge(judged) == MAJORITY else names


def judge_views(judged: pd.DataFrame, options: Mapping[str, Any] | None = None
                ) -> list[tuple[str, pd.DataFrame]]:
    """``(judge, rows)`` of a judged frame as its tables and figures show it: with several
    LLM judges the consensus ``majority`` first (:func:`kbench_core.agreement.consensus` with
    the :class:`ConsensusOptions` given), then each judge by name (``human`` last); with one,
    that judge. A ``judge`` option keeps only that one (``majority`` or a name).

    Raises ValueError naming the judges when a chosen judge, voter or ``min_votes`` does not
    fit the run."""
    chosen = check_judges(judged, options)
    views = []
    for name in [chosen.judge] if chosen.judge is not None else offered_judges(judged):
        if name == MAJORITY:
            from kbench_core.agreement import consensus

            views.append((name, consensus(judged, **chosen.consensus())))
        else:  # its failed judgements counted as the majority's are (failed_as)
            from kbench_core.agreement import judge_rows

            views.append((name, judge_rows(judged, name, failed_as=chosen.failed_as)))
    return views
