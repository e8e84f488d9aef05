"""The options of the Judge agreement page (of judged runs), as the page sets them and an
export records them; :mod:`kbench_core.families.judged` re-exports them (a helper module of
that family: its name starts with ``_``, so the registry does not take it for a family)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from kbench_core.families._base import Options

__all__ = ["AgreementOptions"]


@dataclass(frozen=True)
class AgreementOptions(Options):
    """The options of the Judge agreement page as it sets them and an export records them.

    ``label`` is the judged column compared; ``weights`` the κ weights of ordered labels
    (``"none"``, ``"linear"``, ``"quadratic"``); ``bootstrap`` gives Krippendorff's α its
    interval; ``min_votes`` is what the consensus needs (None: a strict majority of its
    ``judges``, empty: every LLM judge); ``failed_as`` what a failed judgement counts as in the
    coefficients of the found labels and in the consensus (``"missing"``, or ``"not_found"``:
    BlockBench's convention). :meth:`summarize`, :meth:`label_agreement` and :meth:`consensus`
    give the keyword arguments of :func:`kbench_core.agreement.summarize`,
    ``agreement_by_label`` and ``judge_tiers`` / ``consensus_leaderboard``.
    """

    label: str = "target_found"
    weights: Literal["none", "linear", "quadratic"] = "none"
    bootstrap: bool = False
    min_votes: int | None = None
    judges: tuple[str, ...] = ()
    failed_as: Literal["missing", "not_found"] = "missing"

    def summarize(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.agreement.summarize` (after the label)."""
        return dict(weights=None if self.weights == "none" else self.weights,
                    ci="bootstrap" if self.bootstrap else None, failed_as=self.failed_as)

    def label_agreement(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.agreement.agreement_by_label`."""
        return dict(ci_alpha="bootstrap" if self.bootstrap else None,
                    failed_as=self.failed_as)

    def consensus(self) -> dict[str, Any]:
        """Keyword arguments of :func:`kbench_core.agreement.judge_tiers` and
        :func:`kbench_core.agreement.consensus_leaderboard`."""
        return dict(judges=list(self.judges) or None, min_votes=self.min_votes,
                    failed_as=self.failed_as)
