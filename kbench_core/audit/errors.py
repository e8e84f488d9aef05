"""Where the judge goes wrong (``docs/metrics/audit.md``, "Where the judge goes wrong"): its
errors against the reviewers by model, prompt type, difficulty, vulnerability type, severity
and answer length, one test per factor with Holm's adjustment over the factors, and the items
the reviewers overruled.

The rates are those of the labelled sample as drawn (not weighted back to the run): they say
where the errors are, not how many the run holds (:func:`kbench_core.audit.corrected` does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps

from kbench_core.audit._items import ITEM_KEY, MAJORITY, first_per_item, item_frame, item_keys
from kbench_core.audit.design import design
from kbench_core.stats import wilson

FACTORS: tuple[str, ...] = ("model", "prompt_type", "difficulty", "vuln_type", "severity",
                            "answer_length")
_FINDINGS = ("n_target_match", "n_partial_match", "n_bonus_valid", "n_hallucinated",
             "n_mischaracterized", "n_design_choice", "n_out_of_scope", "n_security_theater",
             "n_informational", "n_other_invalid")


def _labelled(judged: pd.DataFrame, labels: pd.DataFrame, judge: str, label: str,
              judges: Sequence[str] | None, min_votes: int | None) -> pd.DataFrame:
    """The labelled items with the judge's decision, the reviewers' label and the factors."""
    pop = design(judged, labels, label=label, judge=judge, by=("model",), judges=judges,
                 min_votes=min_votes)
    # an item whose reviewers are split evenly (mean label ½) has no reviewers' label to set
    # against the judge's: left out, as a failed judgement is
    human = pop["human"].to_numpy(float)
    pop = pop[~np.isnan(human) & (human != 0.5) & ~pop["failed"].to_numpy(bool)]
    judged = item_frame(judged)
    rows = first_per_item(judged).reindex(item_keys(pop))
    out = pop.reset_index(drop=True)
    for c in ("difficulty", "vuln_type", "severity"):
        if c in rows:
            out[c] = rows[c].astype(object).where(rows[c].notna(), "(none)").astype(str) \
                .to_numpy()
    out["answer_length"] = _answer_length(rows)
    out["error"] = (out["human"].to_numpy(float) > 0.5) != (out["yhat"].to_numpy(float) > 0.5)
    return out


def _answer_length(rows: pd.DataFrame) -> np.ndarray:
    """The answer's length in thirds of the run's answers (by characters of ``response`` when
    the run has it, else by the number of findings the detector listed)."""
    if "response" in rows:
        size = rows["response"].astype(str).str.len().to_numpy(float)
        unit = "characters"
    else:
        present = [c for c in _FINDINGS if c in rows]
        if not present:
            return np.full(len(rows), "(unknown)", dtype=object)
        size = rows[present].astype(float).fillna(0).sum(axis=1).to_numpy()
        unit = "findings"
    edges = np.unique(np.nanquantile(size, [1 / 3, 2 / 3])) if len(size) else np.array([])
    if len(edges) == 0:
        return np.full(len(rows), "(unknown)", dtype=object)
    bins = np.searchsorted(edges, size, side="left")
    names = []
    for k in range(len(edges) + 1):
        lo = "" if k == 0 else f"> {edges[k - 1]:g}"
        hi = "" if k == len(edges) else f"≤ {edges[k]:g}"
        names.append(f"{' '.join(x for x in (lo, hi) if x)} {unit}")
    return np.array(names, dtype=object)[bins]


def judge_errors(judged: pd.DataFrame, labels: pd.DataFrame, *, judge: str = MAJORITY,
                 factors: Sequence[str] = FACTORS, label: str = "target_found",
                 alpha: float = 0.05, judges: Sequence[str] | None = None,
                 min_votes: int | None = None) -> pd.DataFrame:
    """The judge's error rate on the labelled items by each factor's levels, and whether the
    factor matters.

    One row per factor and level: ``factor, level, n, errors, error_rate`` with a Wilson
    interval (``_low``/``_high``), the factor's ``p_value`` (Fisher's exact test for two
    levels, else the χ² test of independence; scipy), ``p_holm`` (Holm over the factors
    tested; statsmodels) and ``flagged`` (``p_holm`` < ``alpha``). A factor with a single
    level in the labels is left out.
    """
    from statsmodels.stats.multitest import multipletests

    data = _labelled(judged, labels, judge, label, judges, min_votes)
    parts = []
    for factor in factors:
        if factor not in data or data[factor].nunique() < 2:
            continue
        grouped = data.groupby(factor, sort=True)["error"]
        table = pd.DataFrame({"n": grouped.size(), "errors": grouped.sum()}).reset_index()
        table = table.rename(columns={factor: "level"})
        counts = np.column_stack([table["errors"], table["n"] - table["errors"]])
        if counts[:, 0].sum() in (0, counts.sum()):
            p = 1.0
        elif len(table) == 2:
            p = float(sps.fisher_exact(counts)[1])
        else:
            keep = counts.sum(axis=1) > 0
            p = float(sps.chi2_contingency(counts[keep])[1])
        table.insert(0, "factor", factor)
        table["error_rate"] = table["errors"] / table["n"]
        table["error_rate_low"], table["error_rate_high"] = wilson(table["errors"], table["n"])
        table["p_value"] = p
        parts.append(table)
    columns = ["factor", "level", "n", "errors", "error_rate", "error_rate_low",
               "error_rate_high", "p_value", "p_holm", "flagged"]
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat(parts, ignore_index=True)
    raw = out.drop_duplicates("factor")["p_value"].to_numpy(float)
    adjusted = multipletests(raw, method="holm")[1]
    out["p_holm"] = out["factor"].map(dict(zip(out["factor"].unique(), adjusted,
                                               strict=True)))
    out["flagged"] = out["p_holm"] < alpha
    return out[columns]


def overruled(judged: pd.DataFrame, labels: pd.DataFrame, *, judge: str = MAJORITY,
              label: str = "target_found", judges: Sequence[str] | None = None,
              min_votes: int | None = None) -> pd.DataFrame:
    """The labelled items where the reviewers' label (their majority) differs from the
    judge's decision: the item key, ``judge_decision``, ``reviewer_label``, ``reviewers``,
    ``notes`` (the reviewers' notes, joined) and the ground truth."""
    from kbench_core.audit.labels import latest

    data = _labelled(judged, labels, judge, label, judges, min_votes)
    data = data[data["error"].to_numpy(bool)]
    found = lambda v: np.where(v > 0.5, "found", "not found")  # noqa: E731
    out = data[list(ITEM_KEY)].copy()
    out["judge_decision"] = found(data["yhat"].to_numpy(float))
    out["reviewer_label"] = found(data["human"].to_numpy(float))
    current = latest(labels)
    keys = item_keys(current)
    levels = 0  # the items' keys: one level
    who = pd.Series(current["reviewer"].astype(str).to_numpy(), index=keys)
    notes = pd.Series(current["note"].astype(str).to_numpy(), index=keys)
    wanted = item_keys(out)
    out["reviewers"] = who.groupby(level=levels).agg(", ".join).reindex(wanted).to_numpy()
    notes = notes[(notes.str.len() > 0).to_numpy()]
    out["notes"] = notes.groupby(level=levels).agg(" | ".join).reindex(wanted).fillna("") \
        .to_numpy()
    for c in ("vuln_type", "severity", "difficulty"):
        if c in data:
            out[c] = data[c].to_numpy()
    return out.reset_index(drop=True)
