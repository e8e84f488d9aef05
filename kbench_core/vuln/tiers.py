r"""BlockBench's seven tiers of LLM-judged vulnerability detection (SPEC 2.3).

:func:`tiers` takes a validated ``judged`` frame (one row per sample × detector × prompt type ×
judge, see :mod:`kbench_core.io`), keeps one judge, and returns one row per group (``model`` by
default, ``("model", "prompt_type")`` to split by prompt) with every metric of the seed's seven
tiers, its 95% interval and the ``n`` it rests on. Everything is computed with ``np.bincount``
over integer group codes, all groups at once.

Defaults reproduce BlockBench's published rules; the critique's improvements
(``seeds/vuln_judge_metrics.md``, "Suggested Improvements") are options:

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
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.stats import rankdata

from kbench_core.calibration import Binned, Strategy, bin_calibration, sort_answers
from kbench_core.schema import FINDING_COUNTS, SEVERITIES, TYPE_MATCHES
from kbench_core.stats import bootstrap_groups, check_choice, t_interval, wilson

__all__ = [
    "HIGHER_IS_BETTER",
    "LOWER_IS_BETTER",
    "METRIC_LABELS",
    "SEVERITY_WEIGHTS",
    "SUI_COMPONENTS",
    "SUI_WEIGHTS",
    "TIERS",
    "fixed_claims",
    "judges_of",
    "reliability",
    "reweight_sui",
    "sample_findings",
    "sui_contributions",
    "tiers",
]

SUI_WEIGHTS: dict[str, float] = {"f2": 0.25, "tdr": 0.25, "finding_precision": 0.15,
                                 "reasoning": 0.25, "calibration": 0.10}
# The critique's suggestion (critical = 3x, high = 2x, medium = 1x; low not named, so 1x).
SEVERITY_WEIGHTS: dict[str, float] = {"critical": 3.0, "high": 2.0, "medium": 1.0, "low": 1.0}
VALID_COUNTS: tuple[str, ...] = ("n_target_match", "n_partial_match", "n_bonus_valid")
OVERCONFIDENT_ABOVE = 0.8
FEW_SAMPLES = 30  # a leaderboard marks a detector judged on fewer samples than this
UNDERCONFIDENT_BELOW = 0.5
REASONING: tuple[str, ...] = ("rcir", "ava", "fsv")

TIERS: dict[str, tuple[str, ...]] = {
    "1 detection": ("tp", "tn", "fp", "fn", "accuracy", "precision", "recall", "f1", "f2",
                    "fpr", "fnr"),
    "2 target": ("tdr", "lucky_guess_rate", "bonus_discovery_rate"),
    "3 findings": ("finding_precision", "invalid_rate", "hallucination_rate", "over_flagging"),
    "4 reasoning": ("mean_rcir", "mean_ava", "mean_fsv", "std_rcir", "std_ava", "std_fsv",
                    "avg_reasoning"),
    "5 type match": ("exact_match_rate", "semantic_match_rate", "partial_match_rate"),
    "6 calibration": ("ece", "mce", "brier", "overconfidence_rate", "underconfidence_rate"),
    "7 composite": ("sui", "tus", "tus_geometric", "lgi"),
    "location": ("location_accuracy",),
}
LOWER_IS_BETTER: frozenset[str] = frozenset({
    "fp", "fn", "fpr", "fnr", "lucky_guess_rate", "invalid_rate", "hallucination_rate",
    "over_flagging", "std_rcir", "std_ava", "std_fsv", "ece", "mce", "brier",
    "overconfidence_rate", "underconfidence_rate", "lgi"})
HIGHER_IS_BETTER: frozenset[str] = frozenset(
    m for metrics in TIERS.values() for m in metrics) - LOWER_IS_BETTER
METRIC_LABELS: dict[str, str] = {
    "tp": "TP", "tn": "TN", "fp": "FP", "fn": "FN", "accuracy": "Accuracy",
    "precision": "Precision", "recall": "Recall", "f1": "F1", "f2": "F2", "fpr": "FPR",
    "fnr": "FNR", "tdr": "Target detection rate (TDR)", "lucky_guess_rate": "Lucky-guess rate",
    "bonus_discovery_rate": "Bonus discovery rate", "finding_precision": "Finding precision",
    "invalid_rate": "Invalid-finding rate", "hallucination_rate": "Hallucination rate",
    "over_flagging": "Over-flagging (invalid findings per answer)", "mean_rcir": "Mean RCIR",
    "mean_ava": "Mean AVA", "mean_fsv": "Mean FSV", "std_rcir": "SD RCIR", "std_ava": "SD AVA",
    "std_fsv": "SD FSV", "avg_reasoning": "Mean reasoning", "exact_match_rate": "Exact type",
    "semantic_match_rate": "Exact or semantic type", "partial_match_rate": "Partial type",
    "ece": "ECE", "mce": "MCE", "brier": "Brier", "overconfidence_rate": "Overconfidence",
    "underconfidence_rate": "Underconfidence", "sui": "SUI", "tus": "TUS",
    "tus_geometric": "TUS (geometric)", "lgi": "Lucky-guess indicator (LGI)",
    "location_accuracy": "Location accuracy",
}

Binning = Strategy
_EXACT, _SEMANTIC, _PARTIAL = (TYPE_MATCHES.index(k) for k in ("exact", "semantic", "partial"))
_CLASSIFICATIONS = {"TARGET_MATCH", "PARTIAL_MATCH", "BONUS_VALID", "HALLUCINATED",
                    "MISCHARACTERIZED", "DESIGN_CHOICE", "OUT_OF_SCOPE", "SECURITY_THEATER",
                    "INFORMATIONAL"}


# ------------------------------------------------------------------------------ options



def _weights(name: str, given: Mapping[str, float] | None, defaults: Mapping[str, float],
             keys: Sequence[str]) -> dict[str, float]:
    if given is None:
        return dict(defaults)
    unknown = sorted(set(given) - set(keys))
    if unknown:
        raise ValueError(f"{name} has unknown keys {unknown}; allowed: {', '.join(keys)}")
    merged = {**defaults, **{k: float(v) for k, v in given.items()}}
    bad = {k: v for k, v in merged.items() if not math.isfinite(v) or v < 0}
    if bad:
        raise ValueError(f"{name} must be finite and >= 0; got {bad}")
    return merged


def judges_of(judged: pd.DataFrame) -> list[str]:
    """The judges in a judged frame, sorted (``human`` last, as the reference)."""
    if "judge" not in judged:
        return []
    names = sorted(map(str, judged["judge"].dropna().unique()))
    return [n for n in names if n != "human"] + [n for n in names if n == "human"]


def _one_judge(judged: pd.DataFrame, judge: str | None) -> tuple[pd.DataFrame, str | None]:
    found = judges_of(judged)
    if judge is None:
        if len(found) > 1:
            raise ValueError(
                f"the frame holds {len(found)} judges ({', '.join(found)}); tiers are computed "
                "one judge at a time: choose one with judge=..., or combine them first with "
                "kbench_core.agreement.consensus")
        return judged, (found[0] if found else None)
    if judge not in found:
        raise ValueError(f"judge {judge!r} is not in the frame; judges: "
                         f"{', '.join(found) or 'none'}")
    column = judged["judge"]
    # Compare on the categories, not on a million strings.
    mask = (column == judge) if isinstance(column.dtype, pd.CategoricalDtype) and all(
        isinstance(c, str) for c in column.cat.categories) else column.astype(str) == judge
    return judged[mask.to_numpy(dtype=bool)], judge


# ------------------------------------------------------------------------------ preparation


def _bools(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(values, missing) of a bool-like column, pandas NA as missing."""
    if series.dtype == bool:
        return series.to_numpy(), np.zeros(len(series), dtype=bool)
    values = pd.Series(series).astype("boolean")
    missing = values.isna().to_numpy()
    return values.fillna(False).to_numpy(dtype=bool), missing


def _flag(series: pd.Series) -> np.ndarray:
    """An optional true/false column that io keeps as given (e.g. ``partial_found``): bools,
    or text true/false/yes/no/1/0; anything else counts as not set."""
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.fillna(False).to_numpy(dtype=bool)
    codes, labels = pd.factorize(series)
    truthy = np.array([v is True or (isinstance(v, str) and v.strip().lower() in
                                     ("true", "1", "yes", "t", "y"))
                       or (isinstance(v, int | float | np.number) and not isinstance(v, bool)
                           and v == 1)
                       for v in labels] + [False], dtype=bool)
    return truthy[codes]


def _label_codes(series: pd.Series) -> tuple[np.ndarray, list[object]]:
    """Codes that sort like the labels' text (missing last) and the labels in that order."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        codes = series.cat.codes.to_numpy().astype(np.int64)
        labels = list(series.cat.categories)
    else:
        codes, uniques = pd.factorize(series, sort=False)
        codes, labels = codes.astype(np.int64), list(uniques)
    rank = np.argsort(np.argsort(np.array([str(v) for v in labels], dtype=object),
                                 kind="stable"), kind="stable") if labels else np.array([], int)
    ordered = [labels[i] for i in np.argsort(rank)] if labels else []
    lut = np.concatenate([rank, [len(labels)]]).astype(np.int64)  # missing (-1) sorts last
    return lut[codes], [*ordered, None]


def _lookup(series: pd.Series, labels: Sequence[str]) -> np.ndarray:
    """Position of each value in ``labels`` (-1 for missing or other), via the distinct
    values only."""
    codes, found = (series.cat.codes.to_numpy(), list(series.cat.categories)) \
        if isinstance(series.dtype, pd.CategoricalDtype) else pd.factorize(series)
    position = {label: i for i, label in enumerate(labels)}
    lut = np.array([position.get(str(v).strip().lower(), -1) for v in found] + [-1],
                   dtype=np.int64)
    return lut[np.asarray(codes, dtype=np.int64)]


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Dense group id per row (in the sorted order of the keys) and the key table."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=range(1))
    combined = np.zeros(len(frame), dtype=np.int64)
    parts = []
    for column in by:
        codes, labels = _label_codes(frame[column])
        combined = combined * len(labels) + codes
        parts.append(labels)
    unique, gid = np.unique(combined, return_inverse=True)
    keys = {}
    rest = unique.copy()
    for column, labels in zip(reversed(by), reversed(parts), strict=True):
        keys[column] = np.array(labels, dtype=object)[rest % len(labels)]
        rest = rest // len(labels)
    table = pd.DataFrame({c: keys[c] for c in by})
    for column in by:
        if isinstance(frame[column].dtype, pd.CategoricalDtype):
            table[column] = pd.Categorical(table[column], categories=frame[column].cat.categories,
                                           ordered=frame[column].cat.ordered)
    return gid.ravel().astype(np.int64), table


def _line_overlap(claimed: pd.Series, true: pd.Series, eligible: np.ndarray) -> np.ndarray:
    """|claimed ∩ true| / |true| per row where eligible and both are known, else NaN.

    Line lists are ``"12;13"`` text (or lists). Work is on the distinct (claimed, true) pairs:
    each distinct list is split once and the intersections are counted with merges."""
    out = np.full(len(claimed), np.nan)
    rows = np.flatnonzero(eligible & claimed.notna().to_numpy() & true.notna().to_numpy())
    if rows.size == 0:
        return out

    def codes(series: pd.Series) -> tuple[np.ndarray, pd.Index]:
        values = series.iloc[rows]
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.cat.remove_unused_categories()
            return values.cat.codes.to_numpy(), pd.Index(values.cat.categories.astype(str))
        try:
            found, uniques = pd.factorize(values)
        except TypeError:  # lists (unhashable) from a frame that did not pass io
            found, uniques = pd.factorize(values.astype(object).map(
                lambda v: ";".join(map(str, v)) if isinstance(v, list | tuple | np.ndarray)
                else v))
        return found, pd.Index(np.asarray(uniques, dtype=object)).astype(str)

    c_codes, c_uniques = codes(claimed)
    t_codes, t_uniques = codes(true)
    pair_key = c_codes.astype(np.int64) * max(len(t_uniques), 1) + t_codes
    pairs, pair_of_row = np.unique(pair_key, return_inverse=True)

    def exploded(uniques: pd.Index) -> pd.DataFrame:
        lines = pd.Series(np.asarray(uniques, dtype=object)).astype(str).str.split(r"[;,\s]+",
                                                                                   regex=True)
        long = lines.explode()
        long = long[long.astype(str).str.fullmatch(r"\d+")]
        return pd.DataFrame({"code": long.index.to_numpy(dtype=np.int64),
                             "line": long.astype(np.int64).to_numpy()}).drop_duplicates()

    claimed_lines, true_lines = exploded(c_uniques), exploded(t_uniques)
    pair_table = pd.DataFrame({"pair": np.arange(pairs.size),
                               "c": pairs // max(len(t_uniques), 1),
                               "t": pairs % max(len(t_uniques), 1)})
    pt = pair_table.merge(true_lines, left_on="t", right_on="code")[["pair", "line"]]
    pc = pair_table.merge(claimed_lines, left_on="c", right_on="code")[["pair", "line"]]
    shared = pt.merge(pc, on=["pair", "line"])
    n_true = np.bincount(pt["pair"].to_numpy(), minlength=pairs.size).astype(float)
    n_shared = np.bincount(shared["pair"].to_numpy(), minlength=pairs.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(n_true > 0, n_shared / n_true, np.nan)
    out[rows] = fraction[pair_of_row.ravel()]
    return out


# Columns of the per-answer quantity matrix that the composites need (summed per group).
_Q = ("n", "tp", "fp", "fn", "tn", "vul_weight", "credit_weight", "valid_credit", "findings",
      "invalid", "rcir_sum", "ava_sum", "fsv_sum", "rcir_n", "ava_n", "fsv_n", "vulnerable",
      "found")
_QI = {name: i for i, name in enumerate(_Q)}


@dataclass(frozen=True)
class _Prepared:
    """One judge's answers reduced to arrays, group codes and sample codes."""

    keys: pd.DataFrame
    gid: np.ndarray
    sample: np.ndarray
    n_samples: int
    q: np.ndarray                # answers x len(_Q)
    conf_rows: np.ndarray        # answers with a stated confidence
    confidence: np.ndarray       # of those rows
    correct: np.ndarray          # of those rows (0/1)
    conf_order: np.ndarray       # lexsort((confidence, gid)) of those rows
    missing: np.ndarray          # per group: answers left out as failed judgements

    @property
    def n_groups(self) -> int:
        return len(self.keys)


def _prepare(judged: pd.DataFrame, by: Sequence[str], partial_credit: float,
             severity_weights: Mapping[str, float] | None, *,
             samples: bool = False) -> tuple[_Prepared, dict]:
    gid_all, keys = _groups(judged, by)
    n_groups = len(keys)
    vulnerable, miss_v = _bools(judged["is_vulnerable"])
    said, miss_s = _bools(judged["said_vulnerable"])
    found_raw, miss_f = _bools(judged["target_found"])
    failed = miss_v | miss_s | miss_f
    missing = np.bincount(gid_all[failed], minlength=n_groups)
    keep = ~failed
    frame = judged[keep] if failed.any() else judged
    gid = gid_all[keep]
    vulnerable, said, found_raw = vulnerable[keep], said[keep], found_raw[keep]
    n = keep.sum()
    found = found_raw & vulnerable  # a safe contract has no target to find

    type_match = (_lookup(frame["type_match"], TYPE_MATCHES) if "type_match" in frame
                  else np.full(n, -1, dtype=np.int64))
    partial = found & (type_match == _PARTIAL)
    if "partial_found" in frame:
        partial |= found & _flag(frame["partial_found"])
    credit = np.where(partial, partial_credit, 1.0) * found
    if severity_weights is None or "severity" not in frame:
        sev_w = np.ones(n)
    else:
        codes, labels = _label_codes(frame["severity"])
        lut = np.array([float(severity_weights.get(str(lbl), 1.0)) if lbl is not None else 1.0
                        for lbl in labels])
        sev_w = lut[codes]

    counts = {}
    for name in FINDING_COUNTS:
        counts[name] = (frame[name].to_numpy(dtype=float, na_value=0.0) if name in frame
                        else np.zeros(n))
    valid = counts["n_target_match"] + counts["n_partial_match"] + counts["n_bonus_valid"]
    findings = np.sum([counts[name] for name in FINDING_COUNTS], axis=0) if n else np.zeros(0)
    valid_credit = (counts["n_target_match"] + partial_credit * counts["n_partial_match"]
                    + counts["n_bonus_valid"])
    invalid = findings - valid

    q = np.zeros((n, len(_Q)), order="F")  # column sums read contiguous memory
    q[:, _QI["n"]] = 1.0
    q[:, _QI["tp"]] = vulnerable & said
    q[:, _QI["fp"]] = ~vulnerable & said
    q[:, _QI["fn"]] = vulnerable & ~said
    q[:, _QI["tn"]] = ~vulnerable & ~said
    q[:, _QI["vul_weight"]] = sev_w * vulnerable
    q[:, _QI["credit_weight"]] = sev_w * credit
    q[:, _QI["valid_credit"]] = valid_credit
    q[:, _QI["findings"]] = findings
    q[:, _QI["invalid"]] = invalid
    q[:, _QI["vulnerable"]] = vulnerable
    q[:, _QI["found"]] = found
    scores = {}
    for name in REASONING:
        values = (frame[name].to_numpy(dtype=float, na_value=np.nan) if name in frame
                  else np.full(n, np.nan))
        used = found & ~np.isnan(values)
        scores[name] = (values, used)
        q[:, _QI[f"{name}_sum"]] = np.where(used, values, 0.0)
        q[:, _QI[f"{name}_n"]] = used

    confidence = (frame["confidence"].to_numpy(dtype=float, na_value=np.nan)
                  if "confidence" in frame else np.full(n, np.nan))
    correct = (said == vulnerable).astype(float)
    conf_rows = np.flatnonzero(~np.isnan(confidence))
    conf, corr = confidence[conf_rows], correct[conf_rows]
    order = np.lexsort((conf, gid[conf_rows]))
    if samples:  # only the bootstrap needs them
        sample_codes, _ = _label_codes(frame["sample"])
        distinct, sample = np.unique(sample_codes, return_inverse=True)
        sample, n_samples = sample.ravel().astype(np.int64), int(distinct.size)
    else:
        sample, n_samples = np.zeros(0, dtype=np.int64), 0
    prepared = _Prepared(keys=keys, gid=gid, sample=sample, n_samples=n_samples, q=q,
                         conf_rows=conf_rows, confidence=conf, correct=corr,
                         conf_order=order, missing=missing)
    lines = (_line_overlap(frame["claimed_lines"], frame["true_lines"], found)
             if {"claimed_lines", "true_lines"} <= set(frame.columns) else np.full(n, np.nan))
    rows = {"vulnerable": vulnerable, "said": said, "found": found, "partial": partial,
            "lucky": vulnerable & said & ~found, "bonus": valid > found,
            "valid": valid, "hallucinated": counts["n_hallucinated"], "invalid": invalid,
            "type_match": type_match, "scores": scores, "location": lines,
            "confidence": confidence, "correct": correct}
    return prepared, rows


# ------------------------------------------------------------------------------ formulas


def _ratio(num: np.ndarray, den: np.ndarray, zero_division: float) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), zero_division)


def _fbeta(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, beta: float,
           zero_division: float) -> np.ndarray:
    """(1 + β²)·TP / ((1 + β²)·TP + β²·FN + FP): the harmonic form (1 + β²)PR/(β²P + R)
    written with counts, as scikit-learn computes it; ``zero_division`` only when TP = FP =
    FN = 0."""
    b2 = beta * beta
    return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zero_division)


@dataclass(frozen=True)
class _Core:
    """The metrics the composites need, per group (recomputed in every bootstrap replicate)."""

    accuracy: np.ndarray
    f1: np.ndarray
    f2: np.ndarray
    tdr: np.ndarray
    finding_precision: np.ndarray
    invalid_rate: np.ndarray
    means: dict[str, np.ndarray]
    avg_reasoning: np.ndarray
    composite_reasoning: np.ndarray
    ece: np.ndarray
    mce: np.ndarray
    sui: np.ndarray
    sui_renormalised: np.ndarray
    tus: np.ndarray
    tus_geometric: np.ndarray
    tus_renormalised: np.ndarray
    lgi: np.ndarray


def _composite_reasoning(avg_reasoning: np.ndarray, n_vulnerable: np.ndarray,
                         targets_found: np.ndarray, no_target_reasoning: str) -> np.ndarray:
    """The reasoning score SUI and TUS use: the displayed mean, except that a group which had
    vulnerable answers and found no target has understood nothing, so it counts as 0
    (``"zero"``) rather than being left out and its weight spread over the other components
    (``"renormalise"``, the old behaviour, which let finding nothing score above finding
    something)."""
    if no_target_reasoning == "renormalise":
        return avg_reasoning
    return np.where((n_vulnerable > 0) & (targets_found == 0), 0.0, avg_reasoning)


def _core(sums: np.ndarray, binned: Binned, sui_weights: Mapping[str, float],
          zero_division: float, no_target_reasoning: str = "zero") -> _Core:
    s = {name: sums[:, i] for name, i in _QI.items()}
    accuracy = _ratio(s["tp"] + s["tn"], s["n"], np.nan)
    tdr = _ratio(s["credit_weight"], s["vul_weight"], zero_division)
    empty_precision = np.nan if math.isnan(zero_division) else 1.0  # BlockBench: no findings
    finding_precision = _ratio(s["valid_credit"], s["findings"], empty_precision)
    invalid_rate = _ratio(s["invalid"], s["findings"], zero_division)
    means = {name: _ratio(s[f"{name}_sum"], s[f"{name}_n"], np.nan) for name in REASONING}
    stacked = np.column_stack([means[name] for name in REASONING])
    present = ~np.isnan(stacked)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg_reasoning = np.where(present.any(axis=1),
                                 np.where(present, stacked, 0).sum(axis=1) / present.sum(axis=1),
                                 np.nan)
    ece = binned.ece()
    f2 = _fbeta(s["tp"], s["fp"], s["fn"], 2.0, zero_division)
    reasoning = _composite_reasoning(avg_reasoning, s["vulnerable"], s["found"],
                                     no_target_reasoning)
    sui, sui_flag = _weighted_mean(
        {"f2": f2, "tdr": tdr, "finding_precision": finding_precision,
         "reasoning": reasoning, "calibration": 1 - ece}, sui_weights)
    tus_parts = np.column_stack([tdr, reasoning, 1 - invalid_rate])
    tus, tus_geometric, tus_flag = _products(tus_parts)
    return _Core(accuracy=accuracy, f1=_fbeta(s["tp"], s["fp"], s["fn"], 1.0, zero_division),
                 f2=f2, tdr=tdr, finding_precision=finding_precision,
                 invalid_rate=invalid_rate, means=means, avg_reasoning=avg_reasoning,
                 composite_reasoning=reasoning, ece=ece,
                 mce=binned.mce(), sui=sui, sui_renormalised=sui_flag, tus=tus,
                 tus_geometric=tus_geometric, tus_renormalised=tus_flag, lgi=accuracy - tdr)


def _weighted_mean(components: Mapping[str, np.ndarray],
                   weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    """Σ w_k c_k / Σ w_k over the components present (not NaN); flagged where one was NaN."""
    values = np.column_stack([components[k] for k in SUI_WEIGHTS])
    w = np.array([weights[k] for k in SUI_WEIGHTS])
    present = ~np.isnan(values)
    used = present * w
    total = used.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(total > 0, (np.where(present, values, 0) * w).sum(axis=1) / total,
                         np.nan)
    flag = ((~present) & (w > 0)).any(axis=1) & ~np.isnan(value)
    return value, flag


def _products(parts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TUS = Π c_k and its geometric mean (Π c_k)^(1/3); with k < 3 components present the
    exponents are renormalised (product of the present ones to the power 3/k, geometric mean
    over the present ones), which imputes a missing factor by the others' geometric mean."""
    present = ~np.isnan(parts)
    k = present.sum(axis=1)
    product = np.where(present, np.clip(parts, 0, None), 1.0).prod(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tus = np.where(k > 0, product ** (3.0 / np.maximum(k, 1)), np.nan)
        geometric = np.where(k > 0, product ** (1.0 / np.maximum(k, 1)), np.nan)
    return tus, geometric, (k > 0) & (k < parts.shape[1])


def _distinct_samples(frame: pd.DataFrame, prep: _Prepared, size: int) -> np.ndarray:
    """Distinct samples (contracts) behind each group: the units a rank rests on."""
    answered = frame
    if len(prep.gid) != len(frame):  # failed judgements were left out of the groups
        _, miss_s = _bools(frame["said_vulnerable"])
        _, miss_v = _bools(frame["is_vulnerable"])
        _, miss_f = _bools(frame["target_found"])
        answered = frame[~(miss_s | miss_v | miss_f)]
    codes = pd.factorize(answered["sample"])[0].astype(np.int64)
    pairs = np.unique(prep.gid * (int(codes.max(initial=0)) + 1) + codes)
    return np.bincount(pairs // (int(codes.max(initial=0)) + 1), minlength=size).astype(
        np.int64)


def _interval_columns(out: dict, name: str, low: np.ndarray, high: np.ndarray) -> None:
    out[f"{name}_low"], out[f"{name}_high"] = low, high


def _rate(out: dict, name: str, num: np.ndarray, den: np.ndarray,
          zero_division: float, value: np.ndarray | None = None) -> None:
    """A proportion with its Wilson interval (NaN interval when the denominator is 0)."""
    out[name] = _ratio(num, den, zero_division) if value is None else value
    _interval_columns(out, name, *wilson(num, den))


def _mean_sd(gid: np.ndarray, values: np.ndarray, used: np.ndarray,
             size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, mean and population variance of ``values[used]`` per group (two passes)."""
    g, v = gid[used], values[used]
    n = np.bincount(g, minlength=size).astype(float)
    mean = _ratio(np.bincount(g, weights=v, minlength=size), n, np.nan)
    dev = v - mean[g]
    var = _ratio(np.bincount(g, weights=dev * dev, minlength=size), n, np.nan)
    return n, mean, var


def _t(out: dict, name: str, n: np.ndarray, mean: np.ndarray, var: np.ndarray) -> None:
    """Mean with its t interval (sample SD from the population variance)."""
    out[name] = mean
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.where(n > 1, var * n / np.maximum(n - 1, 1), np.nan))
    _interval_columns(out, name, *t_interval(mean, sd, n))


# ------------------------------------------------------------------------------ tiers


def tiers(judged: pd.DataFrame, *, by: Sequence[str] = ("model",),
          sui_weights: Mapping[str, float] | None = None, partial_credit: float = 1.0,
          severity_weights: Mapping[str, float] | None = None, n_bins: int = 10,
          binning: Binning = "uniform", zero_division: float = 0.0,
          judge: str | None = None, ci: Literal["bootstrap"] | None = None,
          n_boot: int = 1000, random_state: int = 0,
          no_target_reasoning: Literal["zero", "renormalise"] = "zero") -> pd.DataFrame:
    r"""Every metric of BlockBench's seven tiers, one row per group, one judge at a time.

    Parameters
    ----------
    judged : DataFrame
        A validated ``judged`` frame (SPEC 1.3), or any frame with its columns (e.g. a
        consensus of several judges).
    by : sequence of str
        Group columns, default ``("model",)``; ``("model", "prompt_type")`` splits by prompt.
    sui_weights : mapping, optional
        Weights of SUI's components ``f2, tdr, finding_precision, reasoning, calibration``
        (unnamed ones keep the defaults .25, .25, .15, .25, .10); SUI divides by the sum of
        the weights used, so weights need not add to 1.
    partial_credit : float in [0, 1]
        Credit of a PARTIAL_MATCH finding in finding precision and of a target found only
        partially (``partial_found`` column, or ``type_match`` ``"partial"``) in TDR; 1.0 is
        the seed, 0.5 the critique's suggestion.
    severity_weights : mapping, optional
        Severity-weighted TDR, e.g. :data:`SEVERITY_WEIGHTS` (critical 3, high 2, medium 1,
        low 1); a target without severity weighs 1.
    n_bins, binning : int, {"uniform", "quantile"}
        Calibration bins for ECE/MCE (10 uniform bins in the seed; ``"quantile"`` = equal
        mass, see :mod:`kbench_core.calibration`).
    zero_division : float
        Value of a ratio whose denominator is 0: 0.0 (the seed, with finding precision 1.0
        when there are no findings) or ``np.nan`` (undefined stays undefined).
    judge : str, optional
        The judge to use; required when the frame holds several.
    ci : {None, "bootstrap"}
        ``"bootstrap"`` adds percentile intervals to SUI, TUS, TUS (geometric), LGI, ECE, MCE,
        F1 and F2: ``n_boot`` resamples of the samples (contracts, with all their answers, so
        models stay paired), ``random_state`` seeded.
    no_target_reasoning : {"zero", "renormalise"}
        How SUI and TUS treat a group that had vulnerable answers but found no target (its
        reasoning means are undefined): ``"zero"`` (default) counts its reasoning as 0, since
        it understood nothing; ``"renormalise"`` leaves the component out and spreads its
        weight over the others (the old behaviour, under which a model that found 0 of 10
        targets could outscore one that found 1). The displayed reasoning means stay NaN
        either way; ``composite_reasoning`` holds the value the composites used.

    Returns
    -------
    DataFrame
        The ``by`` columns, ``judge``, ``n`` (answers used), ``n_missing`` (failed judgements
        left out), ``n_samples`` (distinct samples behind them) and ``few_items`` (fewer than
        30 samples: marked in every leaderboard) and per tier (see :data:`TIERS`) each
        metric, with ``<metric>_low`` and ``<metric>_high``: Wilson for rates, t for means,
        bootstrap for the rest on request.
        Supporting counts: ``n_vulnerable``, ``targets_found``, ``lucky_guesses``,
        ``total_findings``, ``valid_findings``, ``invalid_findings``,
        ``hallucinated_findings``, ``n_reasoning``, ``n_type_match``, ``n_confidence``,
        ``n_location``, ``composite_reasoning``; flags ``sui_renormalised``,
        ``tus_renormalised`` (a component was undefined and left out, the weights of the
        others renormalised) and ``renormalised`` (either).

    Notes
    -----
    Per answer i with ground truth :math:`v_i`, verdict :math:`s_i`, target found
    :math:`f_i` (only on vulnerable samples), confidence :math:`c_i`, correct
    :math:`y_i = [s_i = v_i]`:

    * Tier 1: TP = Σ v s, TN = Σ ¬v ¬s, FP = Σ ¬v s, FN = Σ v ¬s; accuracy = (TP + TN)/N,
      precision = TP/(TP + FP), recall = TP/(TP + FN), FPR = FP/(FP + TN), FNR = FN/(FN + TP),
      :math:`F_\beta = (1+\beta^2)TP / ((1+\beta^2)TP + \beta^2 FN + FP)`, β = 1, 2.
    * Tier 2: TDR = Σ w_i κ_i f_i / Σ w_i v_i (severity weight w, credit κ = 1 or
      ``partial_credit`` for a partial find); lucky guess = v ∧ s ∧ ¬f, rate over TP; bonus
      discovery = share of answers whose valid findings (target + partial + bonus-valid)
      outnumber [f] (BlockBench's rule).
    * Tier 3 (pooled over findings): finding precision = (target + κ·partial + bonus)/all,
      invalid rate = (all − valid)/all, hallucination rate = hallucinated/all, over-flagging
      = invalid/N. No findings: precision 1.0, rates ``zero_division``.
    * Tier 4: mean and population SD (ddof 0) of rcir, ava, fsv over answers with the target
      found; ``avg_reasoning`` = mean of the three means.
    * Tier 5 over answers with the target found and a type_match: exact, exact or semantic,
      partial.
    * Tier 6 over answers with a confidence: ECE, MCE (:mod:`kbench_core.calibration`),
      Brier = mean((c − y)²), overconfidence = P(¬y | c > 0.8), underconfidence =
      P(y | c < 0.5).
    * Tier 7: SUI = Σ w_k c_k / Σ w_k over F2, TDR, finding precision, reasoning, 1 − ECE;
      TUS = TDR · reasoning · (1 − invalid rate); ``tus_geometric`` = its cube root;
      LGI = accuracy − TDR. Reasoning is ``avg_reasoning``, or 0 when vulnerable answers
      found no target (``no_target_reasoning``). Any other NaN component is left out and
      the weights renormalised (``*_renormalised`` says so).
    * Location accuracy = mean over found targets with known lines of
      |claimed ∩ true| / |true|.

    References
    ----------
    BlockBench evaluation metrics and their critique, ``seeds/vuln_judge_metrics.md``;
    SPEC 2.3.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    missing_cols = [c for c in (*by, "sample", "is_vulnerable", "said_vulnerable",
                                "target_found") if c not in judged]
    if missing_cols:
        raise ValueError(f"tiers needs the column(s) {', '.join(missing_cols)}")
    check_choice("binning", binning, ("uniform", "quantile"))
    check_choice("ci", ci, (None, "bootstrap"))
    check_choice("no_target_reasoning", no_target_reasoning, ("zero", "renormalise"))
    if not 0.0 <= float(partial_credit) <= 1.0:
        raise ValueError(f"partial_credit must lie in [0, 1]; got {partial_credit!r}")
    zero_division = float(zero_division)
    weights = _weights("sui_weights", sui_weights, SUI_WEIGHTS, tuple(SUI_WEIGHTS))
    if sum(weights.values()) <= 0:
        raise ValueError("sui_weights must not all be 0")
    severity = (None if severity_weights is None else
                _weights("severity_weights", severity_weights, dict.fromkeys(SEVERITIES, 1.0),
                         SEVERITIES))
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be a whole number >= 1; got {n_bins!r}")

    frame, judge_name = _one_judge(judged, judge)
    prep, rows = _prepare(frame, by, float(partial_credit), severity,
                          samples=ci == "bootstrap")
    size = prep.n_groups
    sums = np.column_stack([np.bincount(prep.gid, weights=prep.q[:, j], minlength=size)
                            for j in range(len(_Q))]) if len(_Q) else np.zeros((size, 0))
    binned = bin_calibration(prep.gid[prep.conf_rows], prep.confidence, prep.correct,
                             n_groups=size, n_bins=n_bins, strategy=binning,
                             order=prep.conf_order)
    core = _core(sums, binned, weights, zero_division, no_target_reasoning)
    s = {name: sums[:, i] for name, i in _QI.items()}
    gid = prep.gid

    def count(mask: np.ndarray, weights_: np.ndarray | None = None) -> np.ndarray:
        w = mask.astype(float) if weights_ is None else np.where(mask, weights_, 0.0)
        return np.bincount(gid, weights=w, minlength=size)

    out: dict[str, object] = {c: prep.keys[c].to_numpy() for c in by} if by else {}
    out["judge"] = np.full(size, judge_name, dtype=object)
    out["n"] = s["n"].astype(np.int64)
    out["n_missing"] = prep.missing.astype(np.int64)
    n_samples = _distinct_samples(frame, prep, size)
    out["n_samples"] = n_samples
    out["few_items"] = n_samples < FEW_SAMPLES
    # Tier 1
    tp, fp, fn, tn = s["tp"], s["fp"], s["fn"], s["tn"]
    for name, values in (("tp", tp), ("tn", tn), ("fp", fp), ("fn", fn)):
        out[name] = values.astype(np.int64)
    _rate(out, "accuracy", tp + tn, s["n"], np.nan, core.accuracy)
    _rate(out, "precision", tp, tp + fp, zero_division)
    _rate(out, "recall", tp, tp + fn, zero_division)
    out["f1"], out["f2"] = core.f1, core.f2
    _rate(out, "fpr", fp, fp + tn, zero_division)
    _rate(out, "fnr", fn, fn + tp, zero_division)
    # Tier 2
    n_vulnerable = count(rows["vulnerable"])
    out["n_vulnerable"] = n_vulnerable.astype(np.int64)
    out["targets_found"] = count(rows["found"]).astype(np.int64)
    # Weighted or partial TDR: Wilson on the equivalent count (TDR x vulnerable answers).
    _rate(out, "tdr", core.tdr * n_vulnerable, n_vulnerable, zero_division, core.tdr)
    lucky = count(rows["lucky"])
    out["lucky_guesses"] = lucky.astype(np.int64)
    _rate(out, "lucky_guess_rate", lucky, tp, zero_division)
    _rate(out, "bonus_discovery_rate", count(rows["bonus"]), s["n"], zero_division)
    # Tier 3
    findings = s["findings"]
    out["total_findings"] = findings.astype(np.int64)
    out["valid_findings"] = count(np.ones(gid.size, bool), rows["valid"]).astype(np.int64)
    out["invalid_findings"] = s["invalid"].astype(np.int64)
    hallucinated = count(np.ones(gid.size, bool), rows["hallucinated"])
    out["hallucinated_findings"] = hallucinated.astype(np.int64)
    _rate(out, "finding_precision", s["valid_credit"], findings, zero_division,
          core.finding_precision)
    _rate(out, "invalid_rate", s["invalid"], findings, zero_division, core.invalid_rate)
    _rate(out, "hallucination_rate", hallucinated, findings, zero_division)
    n_all, mean_invalid, var_invalid = _mean_sd(gid, rows["invalid"], np.ones(gid.size, bool),
                                                size)
    _t(out, "over_flagging", n_all, mean_invalid, var_invalid)
    # Tier 4
    out["n_reasoning"] = count(rows["found"]).astype(np.int64)
    for name in REASONING:
        values, used = rows["scores"][name]
        n_used, mean, var = _mean_sd(gid, values, used, size)
        _t(out, f"mean_{name}", n_used, mean, var)
    for name in REASONING:
        values, used = rows["scores"][name]
        out[f"std_{name}"] = np.sqrt(_mean_sd(gid, values, used, size)[2])
    out["avg_reasoning"] = core.avg_reasoning
    out["composite_reasoning"] = core.composite_reasoning
    # Tier 5
    type_match = rows["type_match"]
    typed = rows["found"] & (type_match >= 0)
    n_typed = count(typed)
    out["n_type_match"] = n_typed.astype(np.int64)
    _rate(out, "exact_match_rate", count(typed & (type_match == _EXACT)), n_typed,
          zero_division)
    _rate(out, "semantic_match_rate",
          count(typed & ((type_match == _EXACT) | (type_match == _SEMANTIC))), n_typed,
          zero_division)
    _rate(out, "partial_match_rate", count(typed & (type_match == _PARTIAL)), n_typed,
          zero_division)
    # Tier 6
    conf, correct = rows["confidence"], rows["correct"]
    stated = ~np.isnan(conf)
    out["n_confidence"] = count(stated).astype(np.int64)
    out["ece"], out["mce"] = core.ece, core.mce
    n_conf, brier_mean, brier_var = _mean_sd(gid, (conf - correct) ** 2, stated, size)
    _t(out, "brier", n_conf, brier_mean, brier_var)
    with np.errstate(invalid="ignore"):
        high, low = stated & (conf > OVERCONFIDENT_ABOVE), stated & (conf < UNDERCONFIDENT_BELOW)
    _rate(out, "overconfidence_rate", count(high & (correct == 0)), count(high), zero_division)
    _rate(out, "underconfidence_rate", count(low & (correct == 1)), count(low), zero_division)
    # Tier 7
    out["sui"], out["sui_renormalised"] = core.sui, core.sui_renormalised
    out["tus"], out["tus_geometric"] = core.tus, core.tus_geometric
    out["tus_renormalised"] = core.tus_renormalised
    out["renormalised"] = core.sui_renormalised | core.tus_renormalised
    out["lgi"] = core.lgi
    # Location
    location = rows["location"]
    n_loc, mean_loc, var_loc = _mean_sd(gid, location, ~np.isnan(location), size)
    out["n_location"] = n_loc.astype(np.int64)
    _t(out, "location_accuracy", n_loc, mean_loc, var_loc)

    table = pd.DataFrame(out)
    if ci == "bootstrap":
        _bootstrap(table, prep, weights, zero_division, n_bins, binning, n_boot, random_state,
                   no_target_reasoning)
    return table


_BOOTSTRAPPED = ("sui", "tus", "tus_geometric", "lgi", "ece", "mce", "f1", "f2")


def _bootstrap(table: pd.DataFrame, prep: _Prepared, weights: Mapping[str, float],
               zero_division: float, n_bins: int, binning: str, n_boot: int,
               random_state: int, no_target_reasoning: str = "zero") -> None:
    """Percentile intervals of the composites over resampled samples (contracts).

    Answers are first summed per (group, sample) cell, so a replicate costs one sparse
    product over cells, not a pass over every answer; with uniform bins the calibration sums
    are cells too (the bin is part of the cell), with equal-mass bins each replicate
    recomputes its edges from the reweighted answers."""
    size = prep.n_groups
    cell_key = prep.gid * max(prep.n_samples, 1) + prep.sample
    cells, cell_of_row = np.unique(cell_key, return_inverse=True)
    cell_of_row = cell_of_row.ravel()
    q_cells = np.column_stack([np.bincount(cell_of_row, weights=prep.q[:, j],
                                           minlength=cells.size) for j in range(len(_Q))])
    cell_group = cells // max(prep.n_samples, 1)
    cell_sample = cells % max(prep.n_samples, 1)
    to_group = sparse.csr_matrix((np.ones(cells.size), (cell_group, np.arange(cells.size))),
                                 shape=(size, cells.size))
    conf_group = prep.gid[prep.conf_rows]
    conf_sample = prep.sample[prep.conf_rows]
    uniform = binning == "uniform"
    if uniform:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        bin_of = np.searchsorted(edges[1:-1], prep.confidence, side="left")
        calib_key = (conf_group * max(prep.n_samples, 1) + conf_sample) * n_bins + bin_of
        calib_cells, calib_of_row = np.unique(calib_key, return_inverse=True)
        calib_of_row = calib_of_row.ravel()
        calib_sums = np.column_stack([
            np.bincount(calib_of_row, minlength=calib_cells.size),
            np.bincount(calib_of_row, weights=prep.confidence, minlength=calib_cells.size),
            np.bincount(calib_of_row, weights=prep.correct, minlength=calib_cells.size)])
        calib_bin = calib_cells % n_bins
        calib_gs = calib_cells // n_bins
        calib_sample = calib_gs % max(prep.n_samples, 1)
        calib_group = calib_gs // max(prep.n_samples, 1)
        to_bin = sparse.csr_matrix(
            (np.ones(calib_cells.size), (calib_group * n_bins + calib_bin,
                                         np.arange(calib_cells.size))),
            shape=(size * n_bins, calib_cells.size))
        edge_table = np.broadcast_to(edges, (size, n_bins + 1))
    else:
        answers = sort_answers(conf_group, prep.confidence, size, order=prep.conf_order)

    def statistic(counts: np.ndarray) -> np.ndarray:
        sums = to_group @ (q_cells * counts[cell_sample][:, None])
        if uniform:
            per_bin = to_bin @ (calib_sums * counts[calib_sample][:, None])
            binned = Binned(edge_table, per_bin[:, 0].reshape(size, n_bins),
                            per_bin[:, 1].reshape(size, n_bins),
                            per_bin[:, 2].reshape(size, n_bins))
        else:
            binned = bin_calibration(conf_group, prep.confidence, prep.correct,
                                     n_groups=size, n_bins=n_bins, strategy="quantile",
                                     weight=counts[conf_sample], order=answers)
        core = _core(np.asarray(sums), binned, weights, zero_division, no_target_reasoning)
        # The SUI rank of each group in this replicate (1 = best; undefined SUI ranks last),
        # so the leaderboard can show each rank's interval.
        sui = np.where(np.isfinite(core.sui), core.sui, -np.inf)
        ranks = rankdata(-sui, method="average")
        return np.concatenate([*(getattr(core, name) for name in _BOOTSTRAPPED), ranks])

    low, high = bootstrap_groups(max(prep.n_samples, 1), statistic, n_boot=n_boot,
                                 random_state=random_state)
    for k, name in enumerate(_BOOTSTRAPPED):
        position = table.columns.get_loc(name) + 1
        table.insert(position, f"{name}_low", low[k * size:(k + 1) * size])
        table.insert(position + 1, f"{name}_high", high[k * size:(k + 1) * size])
    k = len(_BOOTSTRAPPED)
    table["sui_rank_low"] = low[k * size:(k + 1) * size]
    table["sui_rank_high"] = high[k * size:(k + 1) * size]


# ------------------------------------------------------------------------------ views


def reliability(judged: pd.DataFrame, *, by: Sequence[str] = ("model",), n_bins: int = 10,
                binning: Binning = "uniform", judge: str | None = None) -> pd.DataFrame:
    """Reliability tables of every group at once, for reliability diagrams.

    One row per group × non-empty bin: the ``by`` columns, ``bin lo hi count
    mean_confidence accuracy accuracy_low accuracy_high gap`` (as
    :func:`kbench_core.calibration.reliability_table`) and the group's ``ece``, ``mce`` and
    ``n`` (answers with a confidence). Correct = said_vulnerable equals is_vulnerable;
    failed judgements and answers without a confidence are left out.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    check_choice("binning", binning, ("uniform", "quantile"))
    frame, _ = _one_judge(judged, judge)
    gid, keys = _groups(frame, by)
    vulnerable, miss_v = _bools(frame["is_vulnerable"])
    said, miss_s = _bools(frame["said_vulnerable"])
    _, miss_f = _bools(frame["target_found"])
    confidence = (frame["confidence"].to_numpy(dtype=float, na_value=np.nan)
                  if "confidence" in frame else np.full(len(frame), np.nan))
    used = ~(miss_v | miss_s | miss_f) & ~np.isnan(confidence)  # as tiers: failed left out
    size = len(keys)
    binned = bin_calibration(gid[used], confidence[used], (said == vulnerable)[used],
                             n_groups=size, n_bins=n_bins, strategy=binning)
    group, bins = np.nonzero(binned.count > 0)
    n = binned.count[group, bins]
    accuracy = binned.correct_sum[group, bins] / n
    mean_conf = binned.confidence_sum[group, bins] / n
    low, high = wilson(binned.correct_sum[group, bins], n)
    table = keys.iloc[group].reset_index(drop=True)
    extra = pd.DataFrame({
        "bin": bins.astype(np.int64), "lo": binned.edges[group, bins],
        "hi": binned.edges[group, bins + 1], "count": n.astype(np.int64),
        "mean_confidence": mean_conf, "accuracy": accuracy, "accuracy_low": low,
        "accuracy_high": high, "gap": mean_conf - accuracy,
        "ece": binned.ece()[group], "mce": binned.mce()[group],
        "n": binned.n[group].astype(np.int64)})
    return pd.concat([table, extra], axis=1)


_FINDING_FIELDS = ("finding_id", "classification", "vulnerability_type_claimed",
                   "severity_claimed", "location_claimed", "description", "reasoning")


def sample_findings(rows: pd.DataFrame) -> pd.DataFrame:
    """The findings behind some answers, one row per finding, as plain text.

    ``rows`` are judged rows carrying a ``findings`` column (JSON text written by the
    BlockBench importer); returns ``sample, model, prompt_type, judge`` and the finding's
    fields (classification, claimed type, severity and location, description, reasoning).
    Rows without findings text give nothing; text that is not a JSON list is shown as one
    ``raw`` entry rather than parsed further.
    """
    keys = [c for c in ("sample", "model", "prompt_type", "judge") if c in rows]
    columns = [*keys, *_FINDING_FIELDS]
    if "findings" not in rows or rows.empty:
        return pd.DataFrame(columns=columns)
    records = []
    for key_values, text in zip(rows[keys].astype(object).itertuples(index=False, name=None),
                                rows["findings"], strict=True):
        if not isinstance(text, str) or not text.strip():
            continue
        try:
            findings = json.loads(text)
        except ValueError:
            findings = [{"description": text}]
        if not isinstance(findings, list):
            findings = [{"description": text}]
        for finding in findings:
            finding = finding if isinstance(finding, dict) else {"description": finding}
            records.append([*key_values, *(None if finding.get(f) is None else str(finding[f])
                                           for f in _FINDING_FIELDS)])
    return pd.DataFrame(records, columns=columns)


SUI_COMPONENTS: dict[str, str] = {"f2": "F2", "tdr": "Target detection", "finding_precision":
                                  "Finding precision", "reasoning": "Reasoning",
                                  "calibration": "Calibration (1 − ECE)"}


def sui_contributions(table: pd.DataFrame, *, by: Sequence[str] = ("model",),
                      sui_weights: Mapping[str, float] | None = None) -> pd.DataFrame:
    """What each component adds to SUI, per group of a :func:`tiers` table (long format).

    Returns the ``by`` columns, ``component`` (``f2, tdr, finding_precision, reasoning,
    calibration``), ``label``, ``value`` (the component, 1 − ECE for calibration),
    ``weight`` (renormalised over the components present, as SUI does) and ``contribution``
    = weight × value; the contributions of a group add up to its SUI.
    """
    by = (by,) if isinstance(by, str) else tuple(by)
    weights = _weights("sui_weights", sui_weights, SUI_WEIGHTS, tuple(SUI_WEIGHTS))
    values = pd.DataFrame({"f2": table["f2"], "tdr": table["tdr"],
                           "finding_precision": table["finding_precision"],
                           "reasoning": _reasoning_column(table),
                           "calibration": 1 - table["ece"]})
    raw = np.array([weights[k] for k in SUI_WEIGHTS])
    present = values.notna().to_numpy()
    total = (present * raw).sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        effective = np.where(present & (total > 0), raw / total, np.nan)
    long = []
    for k, component in enumerate(SUI_WEIGHTS):
        part = table[list(by)].copy()
        part["component"] = component
        part["label"] = SUI_COMPONENTS[component]
        part["value"] = values[component].to_numpy()
        part["weight"] = effective[:, k]
        part["contribution"] = part["weight"] * part["value"]
        long.append(part)
    return pd.concat(long, ignore_index=True)


def _reasoning_column(table: pd.DataFrame) -> pd.Series:
    """The reasoning component the table's composites used (``composite_reasoning``; tables
    from before it existed: ``avg_reasoning``)."""
    return table["composite_reasoning" if "composite_reasoning" in table else "avg_reasoning"]


def reweight_sui(table: pd.DataFrame,
                 sui_weights: Mapping[str, float] | None = None) -> pd.DataFrame:
    """A :func:`tiers` table with SUI recomputed under other weights, from its component
    columns (``f2, tdr, finding_precision, avg_reasoning, ece``): the same value as calling
    :func:`tiers` again with ``sui_weights``, without touching the answers (for live sliders).

    A bootstrap interval of SUI belongs to the weights it was drawn with, so ``sui_low`` and
    ``sui_high`` are dropped; call :func:`tiers` with the weights to get them again.
    """
    weights = _weights("sui_weights", sui_weights, SUI_WEIGHTS, tuple(SUI_WEIGHTS))
    if sum(weights.values()) <= 0:
        raise ValueError("sui_weights must not all be 0")
    out = table.drop(columns=["sui_low", "sui_high"], errors="ignore").copy()
    out["sui"], out["sui_renormalised"] = _weighted_mean(
        {"f2": out["f2"].to_numpy(dtype=float), "tdr": out["tdr"].to_numpy(dtype=float),
         "finding_precision": out["finding_precision"].to_numpy(dtype=float),
         "reasoning": _reasoning_column(out).to_numpy(dtype=float),
         "calibration": 1 - out["ece"].to_numpy(dtype=float)}, weights)
    if "tus_renormalised" in out:
        out["renormalised"] = out["sui_renormalised"] | out["tus_renormalised"]
    return out


def fixed_claims(judged: pd.DataFrame, *, by: Sequence[str] = ("model",),
                 judge: str | None = None) -> pd.DataFrame:
    r"""How often a detector still claims a vulnerability that was fixed (BlockBench's
    differential, "TC" contracts), beside its TDR on the vulnerable versions; one judge at a
    time (or a :func:`kbench_core.agreement.consensus` frame).

    A fixed contract is a row with ``is_vulnerable`` false and a ``claims_fixed_target`` value
    (from the judge's ``false_positive_detected``). Per group:

    .. math:: \mathrm{fixed\_claim\_rate} = \frac{\#\{\text{fixed, claims the fixed
              target}\}}{n_\mathrm{fixed}}

    with its Wilson 95% interval (``fixed_claim_rate_low``/``_high``, statsmodels), ``n_fixed``
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

    out: dict[str, object] = {c: keys[c].to_numpy() for c in by}
    out["judge"] = np.full(size, judge_name, dtype=object)
    n_fixed, n_claims = count(known), count(known & claims)
    out["n_fixed"], out["fixed_claims"] = n_fixed.astype(np.int64), n_claims.astype(np.int64)
    _rate(out, "fixed_claim_rate", n_claims, n_fixed, np.nan)
    out["n_fixed_unknown"] = count(fixed & miss_c).astype(np.int64)
    n_vul, n_found = count(vul), count(vul & found)
    out["n_vulnerable"], out["targets_found"] = n_vul.astype(np.int64), n_found.astype(np.int64)
    _rate(out, "tdr", n_found, n_vul, np.nan)
    table = pd.DataFrame(out)
    return table[table["n_fixed"] + table["n_fixed_unknown"] > 0][columns].reset_index(
        drop=True)
