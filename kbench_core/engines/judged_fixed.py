"""The "fixed versions" table of a judged run (BlockBench's differential test,
:func:`kbench_core.vuln.fixed_claims`) computed in the engine (issue 39): one judge's answers
(or the majority's) made by :func:`kbench_core.engines.judged.answers`, counted per (group ×
sample) cell by one group-by, and only those counts fetched; every column (the fixed-claim
rate and TDR with their Wilson intervals on the effective n of answers clustered by sample)
is then computed from them by :func:`kbench_core.vuln.fixed.fixed_claims_from_sums`, the
finish the memory path uses too (``docs/metrics/vuln.md``, "Intervals").

:func:`fixed_versions` is :func:`kbench_core.families.judged.fixed_versions` of a run that
stays in the engine: with several LLM judges the majority first, then each judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kbench_core.agreement._labels import CONSENSUS, HUMAN
from kbench_core.engines.judged_cells import _PLACE, _grouped, _text_codes
from kbench_core.vuln.fixed import FIXED_SUMS, FixedCells, fixed_claims_from_sums, fixed_columns

if TYPE_CHECKING:
    from kbench_core.engines.judged import Answers

__all__ = ["fixed_cells", "fixed_claims", "fixed_versions"]


def _counts(answers: Any) -> dict[str, Any]:
    """The :data:`~kbench_core.vuln.fixed.FIXED_SUMS` of a group of ``answers`` as Ibis
    aggregates, each answer read as :func:`kbench_core.vuln.fixed.fixed_cells` reads a row: a
    fixed contract is ``is_vulnerable`` false, its claim known when ``claims_fixed_target`` is
    (else counted in ``fixed_unknown``, never a "no"); a vulnerable answer counts when its
    ``target_found`` is known; a missing ground truth counts in neither."""
    truth, claim, found = (answers["is_vulnerable"], answers["claims_fixed_target"],
                           answers["target_found"])
    fixed = (truth == False).fill_null(False)  # noqa: E712
    known = fixed & claim.notnull()
    vulnerable = (truth == True).fill_null(False) & found.notnull()  # noqa: E712
    flags = {"fixed_known": known,
             "fixed_claims": known & (claim == True).fill_null(False),  # noqa: E712
             "fixed_unknown": fixed & claim.isnull(),
             "vulnerable": vulnerable,
             "found": vulnerable & (found == True).fill_null(False)}  # noqa: E712
    return {"n_rows": answers.count(),
            **{name: flag.cast("int64").sum() for name, flag in flags.items()}}


def fixed_cells(chosen: Answers, *, by: Sequence[str] = ("model",)) -> FixedCells:
    """The :data:`~kbench_core.vuln.fixed.FIXED_SUMS` per (group × sample) cell of the
    answers ``chosen`` (:func:`kbench_core.engines.judged.answers`), summed by one group-by in
    the engine: groups in their keys' text order (missing last) and cells by sample within a
    group, as :func:`kbench_core.vuln.fixed.fixed_cells` orders a frame's. The answers need
    ``claims_fixed_target``."""
    by = (by,) if isinstance(by, str) else tuple(by)
    unknown = [c for c in (*by, "sample", "claims_fixed_target") if c not in chosen.columns]
    if unknown:
        raise ValueError(f"fixed_claims needs the column(s) {', '.join(unknown)}")
    answers = chosen.expr.drop(_PLACE) if _PLACE in chosen.expr.columns else chosen.expr
    frame = (answers.group_by([*by, "sample"]).aggregate(**_counts(answers))
             .to_pyarrow().to_pandas())
    gid, keys, _ = _grouped(frame, by)
    sample, _ = _text_codes(frame["sample"])
    order = np.lexsort((sample, gid))
    sums = {name: frame[name].fillna(0).to_numpy(dtype=float)[order] for name in FIXED_SUMS}
    table = pd.DataFrame({c: pd.Series(keys[c], dtype=object) for c in by}) if by \
        else pd.DataFrame(index=range(1))
    return FixedCells(keys=table, group=gid[order], sums=sums,
                      singletons=bool((sums["n_rows"] == 1).all()))


def fixed_claims(chosen: Answers, *, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    r""":func:`kbench_core.vuln.fixed_claims` of the answers ``chosen``
    (:func:`kbench_core.engines.judged.answers`: one judge's, or the majority's) without
    fetching them: per group the fixed-claim rate C/K (fixed contracts still claimed / fixed
    contracts with a readable claim), ``n_fixed_unknown``, and TDR F/V (targets found /
    vulnerable answers with a readable found label), each with the Wilson interval on the
    effective n of answers clustered by sample (the delete-one-sample jackknife's design
    effect, :class:`~kbench_core.stats.Clusters`), from the counts per (group × sample) cell
    (:func:`fixed_cells`) finished by :func:`kbench_core.vuln.fixed.fixed_claims_from_sums`
    (``docs/metrics/vuln.md``, "Intervals"). The ``judge`` column is ``chosen.judge``
    (``"majority"`` for the consensus). Empty (with the columns) when the answers have no
    ``claims_fixed_target``."""
    by = (by,) if isinstance(by, str) else tuple(by)
    if "claims_fixed_target" not in chosen.columns:
        return pd.DataFrame(columns=fixed_columns(by))
    return fixed_claims_from_sums(fixed_cells(chosen, by=by), by=by, judge=chosen.judge)


def fixed_versions(table: Any, consensus: Mapping[str, Any] | None = None,
                   files: Sequence[str] = (), *,
                   judges: Sequence[str] | None = None,
                   normalised_rows: Any = None,
                   names: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`kbench_core.families.judged.fixed_versions` of a judged run in the engine
    (``table`` as :func:`~kbench_core.engines.source.open_table` opens it and
    :func:`~kbench_core.engines.judged.supported` accepts it; ``files`` its files in the
    order the memory engine reads them): with several LLM judges, :func:`fixed_claims` of
    their majority (:func:`~kbench_core.engines.judged.answers` under ``consensus``: the
    keyword arguments of :func:`kbench_core.agreement.consensus`, ``judges`` the voters,
    ``min_votes`` and ``failed_as``) first, then of each of ``judges`` (default: every judge;
    ``majority`` among them is the consensus), each judge's failed judgements counted as
    ``failed_as`` says. Empty (with the
    columns) when the run has no ``claims_fixed_target`` or no fixed contract.
    ``normalised_rows`` and ``names`` (the run's judges, when known): as
    :func:`~kbench_core.engines.judged.answers` takes them."""
    from kbench_core.engines.judged import answers, judge_names

    given = dict(consensus or {})
    voters, min_votes = given.get("judges"), given.get("min_votes")
    failed_as = given.get("failed_as", "missing")
    if "claims_fixed_target" not in table.columns:
        return pd.DataFrame(columns=fixed_columns(("model",)))
    names = judge_names(table) if names is None else list(names)
    llm = [j for j in names if j != HUMAN]
    every = [*llm, *(j for j in names if j == HUMAN)]  # human last, as vuln.judges_of
    parts = []
    if len(llm) > 1:
        parts.append(fixed_claims(answers(
            table, judges=list(voters) if voters else None, min_votes=min_votes,
            failed_as=failed_as, files=tuple(files), normalised_rows=normalised_rows,
            names=names)))
    parts += [fixed_claims(answers(table, judge=judge, failed_as=failed_as,
                                   files=tuple(files), normalised_rows=normalised_rows,
                                   names=names))
              for judge in (every if judges is None else judges) if judge != CONSENSUS]
    kept = [p for p in parts if len(p)]
    if kept:
        return pd.concat(kept, ignore_index=True)
    return parts[0] if parts else pd.DataFrame(columns=fixed_columns(("model",)))
