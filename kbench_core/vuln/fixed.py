"""BlockBench's differential test: how often a detector still claims a vulnerability that was
fixed, beside its TDR on the vulnerable versions.

Computed in two steps (issue 39): the counts per (group × sample) cell (:class:`FixedCells`,
:func:`fixed_cells` from a frame; :func:`kbench_core.engines.judged_fixed.fixed_claims` sums
the same cells in an engine), then every output column from those sums
(:func:`fixed_claims_from_sums`). :func:`fixed_claims` is the two in turn, so a run in memory
and a run summed by an engine share one formula (``docs/metrics/vuln.md``, "Intervals")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kbench_core.vuln._formulas import Clusters, _rate
from kbench_core.vuln._prepare import _bools, _groups, _label_codes, _one_judge

__all__ = ["FIXED_SUMS", "FixedCells", "fixed_cells", "fixed_claims", "fixed_claims_from_sums",
           "fixed_columns"]

# The counts per (group × sample) cell that every column of fixed_claims is computed from:
#   n_rows         answers in the cell (any label; whether every cell holds one answer)
#   fixed_known    fixed contracts (is_vulnerable false) with a readable claims_fixed_target
#   fixed_claims   ... of them claiming the fixed target (claims_fixed_target true)
#   fixed_unknown  fixed contracts whose claims_fixed_target is missing
#   vulnerable     vulnerable answers (is_vulnerable true) with a readable target_found
#   found          ... of them with the target found
FIXED_SUMS: tuple[str, ...] = ("n_rows", "fixed_known", "fixed_claims", "fixed_unknown",
                               "vulnerable", "found")


def fixed_columns(by: Sequence[str] = ("model",)) -> list[str]:
    """The columns of :func:`fixed_claims`' table grouped ``by``."""
    return [*by, "judge", "n_fixed", "fixed_claims", "fixed_claim_rate",
            "fixed_claim_rate_low", "fixed_claim_rate_high", "n_fixed_unknown",
            "n_vulnerable", "targets_found", "tdr", "tdr_low", "tdr_high"]


@dataclass(frozen=True)
class FixedCells:
    """One judge's answers counted per (group × sample) cell, cells sorted by group (then
    sample): ``keys`` the groups' key values (one row per group, in the keys' text order,
    missing last), ``group`` each cell's group, ``sums`` each of :data:`FIXED_SUMS` per cell,
    ``singletons`` whether every cell holds one answer (then no interval is clustered)."""

    keys: pd.DataFrame
    group: np.ndarray
    sums: Mapping[str, np.ndarray] = field(repr=False)
    singletons: bool

    @property
    def size(self) -> int:
        return len(self.keys)

    def clusters(self) -> Clusters:
        """The cells as :class:`~kbench_core.stats.Clusters` of one unit each (their sums)."""
        filled, starts = np.unique(self.group, return_index=True)
        return Clusters(cell=np.arange(self.group.size), cell_group=self.group,
                        size=self.size, singletons=self.singletons, starts=starts,
                        filled=filled)


def fixed_cells(judged: pd.DataFrame, *, by: Sequence[str] = ("model",),
                judge: str | None = None) -> tuple[FixedCells, str | None]:
    """The :data:`FIXED_SUMS` per (group × sample) cell of one judge's answers in ``judged``
    (``judge`` as :func:`fixed_claims` takes it), and the judge's name. The frame needs
    ``claims_fixed_target``."""
    by = (by,) if isinstance(by, str) else tuple(by)
    frame, judge_name = _one_judge(judged, judge)
    gid, keys = _groups(frame, by)
    vulnerable, miss_v = _bools(frame["is_vulnerable"])
    claims, miss_c = _bools(frame["claims_fixed_target"])
    found, miss_f = _bools(frame["target_found"])
    fixed = ~miss_v & ~vulnerable
    known = fixed & ~miss_c
    vul = ~miss_v & vulnerable & ~miss_f
    sample_codes, _ = _label_codes(frame["sample"])
    clusters = Clusters.of(gid, sample_codes, int(sample_codes.max(initial=-1)) + 2, len(keys))
    masks = {"n_rows": np.ones(len(frame), dtype=bool), "fixed_known": known,
             "fixed_claims": known & claims, "fixed_unknown": fixed & miss_c,
             "vulnerable": vul, "found": vul & found}
    sums = {name: clusters.per_cell(mask.astype(float)) for name, mask in masks.items()}
    cells = FixedCells(keys=keys if by else pd.DataFrame(index=range(1)),
                       group=clusters.cell_group, sums=sums, singletons=clusters.singletons)
    return cells, judge_name


def fixed_claims_from_sums(cells: FixedCells, *, by: Sequence[str] = ("model",),
                           judge: str | None = None) -> pd.DataFrame:
    r""":func:`fixed_claims`' table from the counts per (group × sample) cell
    (:class:`FixedCells`), wherever they were summed (a frame: :func:`fixed_cells`; an engine:
    :func:`kbench_core.engines.judged_fixed.fixed_claims`). Per group, with the cells' sums
    :math:`K = \sum_c k_c` (fixed, readable claim), :math:`C = \sum_c y_c` (of them claimed),
    :math:`V = \sum_c v_c` (vulnerable, readable found label), :math:`F = \sum_c f_c` (found):

    .. math:: \mathrm{fixed\_claim\_rate} = C / K,\qquad \mathrm{tdr} = F / V

    (NaN on an empty denominator), each with the Wilson interval on the effective numbers
    C/deff of K/deff, deff the delete-one-sample jackknife's design effect
    (:meth:`~kbench_core.stats.Clusters.deff`, from the per-cell sums only) kept monotone by
    Kish's effective number of clusters (:meth:`~kbench_core.stats.Clusters.boundary_n`,
    :func:`~kbench_core.stats.wilson_effective`); ``docs/metrics/vuln.md``, "Intervals". Only
    groups with a fixed contract (readable claim or not) are kept."""
    by = (by,) if isinstance(by, str) else tuple(by)
    size = cells.size
    clusters = cells.clusters()
    s = {name: np.asarray(cells.sums[name], dtype=float) for name in FIXED_SUMS}

    def deff(num_c: np.ndarray, den_c: np.ndarray) -> dict[str, np.ndarray]:
        return {"deff": clusters.deff(num_c, den_c)[2], "boundary_n": clusters.boundary_n(den_c)}

    total = {name: clusters.per_group(values) for name, values in s.items()}
    out: dict[str, object] = {c: cells.keys[c].to_numpy() for c in by}
    out["judge"] = np.full(size, judge, dtype=object)
    n_fixed, n_claims = total["fixed_known"], total["fixed_claims"]
    out["n_fixed"], out["fixed_claims"] = n_fixed.astype(np.int64), n_claims.astype(np.int64)
    _rate(out, "fixed_claim_rate", n_claims, n_fixed, np.nan,
          **deff(s["fixed_claims"], s["fixed_known"]))
    out["n_fixed_unknown"] = total["fixed_unknown"].astype(np.int64)
    n_vul, n_found = total["vulnerable"], total["found"]
    out["n_vulnerable"], out["targets_found"] = n_vul.astype(np.int64), n_found.astype(np.int64)
    _rate(out, "tdr", n_found, n_vul, np.nan, **deff(s["found"], s["vulnerable"]))
    table = pd.DataFrame(out)
    return table[table["n_fixed"] + table["n_fixed_unknown"] > 0][fixed_columns(by)] \
        .reset_index(drop=True)


def fixed_claims(judged: pd.DataFrame, *, by: Sequence[str] = ("model",),
                 judge: str | None = None) -> pd.DataFrame:
    r"""How often a detector still claims a vulnerability that was fixed (BlockBench's
    differential, "TC" contracts), beside its TDR on the vulnerable versions; one judge at a
    time (or a :func:`kbench_core.agreement.consensus` frame).

    A fixed contract is a row with ``is_vulnerable`` false and a ``claims_fixed_target`` value
    (from the judge's ``false_positive_detected``). Per group:

    .. math:: \mathrm{fixed\_claim\_rate} = \frac{\#\{\text{fixed, claims the fixed
              target}\}}{n_\mathrm{fixed}}

    with its Wilson 95% interval on the effective n of answers clustered by sample
    (:class:`~kbench_core.vuln._formulas.Clusters`; one answer per sample: statsmodels'
    Wilson interval), ``n_fixed``
    (fixed contracts with a readable claim), ``n_fixed_unknown`` (fixed contracts whose judge
    gave no readable claim: left out, never a "no"), and ``tdr`` (targets found / vulnerable
    answers, Wilson) with ``n_vulnerable`` from the same rows. The two are unpaired: a fixed
    contract and its vulnerable original are different samples. Lower is better for the
    claim rate (the vulnerability is gone), higher for TDR.

    The counts per (group × sample) cell (:func:`fixed_cells`), then the table from them
    (:func:`fixed_claims_from_sums`, which an engine's sums finish the same way).

    Returns an empty frame (with these columns) when the run has no ``claims_fixed_target``.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    if "claims_fixed_target" not in judged:
        return pd.DataFrame(columns=fixed_columns(by))
    cells, judge_name = fixed_cells(judged, by=by, judge=judge)
    return fixed_claims_from_sums(cells, by=by, judge=judge_name)
