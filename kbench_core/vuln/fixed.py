"""BlockBench's differential test: how often a detector still claims a vulnerability that was
fixed, beside its TDR on the vulnerable versions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kbench_core.vuln._formulas import Clusters, _rate
from kbench_core.vuln._prepare import _bools, _groups, _label_codes, _one_judge


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

    Returns an empty frame (with these columns) when the run has no ``claims_fixed_target``.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    columns = [*by, "judge", "n_fixed", "fixed_claims", "fixed_claim_rate",
               "fixed_claim_rate_low", "fixed_claim_rate_high", "n_fixed_unknown",
               "n_vulnerable", "targets_found", "tdr", "tdr_low", "tdr_high"]
    if "claims_fixed_target" not in judged:
        return pd.DataFrame(columns=columns)
    frame, judge_name = _one_judge(judged, judge)
    gid, keys = _groups(frame, by)
    size = len(keys)
    vulnerable, miss_v = _bools(frame["is_vulnerable"])
    claims, miss_c = _bools(frame["claims_fixed_target"])
    found, miss_f = _bools(frame["target_found"])
    fixed = ~miss_v & ~vulnerable
    known = fixed & ~miss_c
    vul = ~miss_v & vulnerable & ~miss_f

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(gid[mask], minlength=size).astype(float)

    sample_codes, _ = _label_codes(frame["sample"])
    clusters = Clusters.of(gid, sample_codes, int(sample_codes.max(initial=-1)) + 2, size)

    def deff(num: np.ndarray, den: np.ndarray) -> dict[str, np.ndarray]:
        den_c = clusters.per_cell(den.astype(float))
        return {"deff": clusters.deff(clusters.per_cell(num.astype(float)), den_c)[2],
                "boundary_n": clusters.boundary_n(den_c)}

    out: dict[str, object] = {c: keys[c].to_numpy() for c in by}
    out["judge"] = np.full(size, judge_name, dtype=object)
    n_fixed, n_claims = count(known), count(known & claims)
    out["n_fixed"], out["fixed_claims"] = n_fixed.astype(np.int64), n_claims.astype(np.int64)
    _rate(out, "fixed_claim_rate", n_claims, n_fixed, np.nan, **deff(known & claims, known))
    out["n_fixed_unknown"] = count(fixed & miss_c).astype(np.int64)
    n_vul, n_found = count(vul), count(vul & found)
    out["n_vulnerable"], out["targets_found"] = n_vul.astype(np.int64), n_found.astype(np.int64)
    _rate(out, "tdr", n_found, n_vul, np.nan, **deff(vul & found, vul))
    table = pd.DataFrame(out)
    return table[table["n_fixed"] + table["n_fixed_unknown"] > 0][columns].reset_index(
        drop=True)
