"""One judge's answers reduced to arrays: option checks, the judge chosen, bool and label
columns read once, dense group codes, line overlap, and the per-answer quantity matrix
(:class:`_Prepared`) that :func:`~kbench_core.vuln.tiers` and its bootstrap sum per group."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from kbench_core.schema import FINDING_COUNTS, TYPE_MATCHES
from kbench_core.select import labels_in
from kbench_core.vuln._formulas import Clusters
from kbench_core.vuln.definitions import _PARTIAL, _Q, _QI, REASONING


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
    column = judged["judge"].array
    if isinstance(column, pd.Categorical):  # the categories in use, from their codes
        codes = column.codes
        used = np.bincount(codes[codes >= 0], minlength=len(column.categories)) > 0
        names = sorted(str(c) for c, u in zip(column.categories, used, strict=True) if u)
    else:
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
    if len(found) == 1 and column.notna().all():  # one judge's rows already: no copy
        return judged, judge
    return judged[labels_in(column, [judge])], judge  # on the categories, not a million strings


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


def _text_order(series: pd.Series) -> tuple[np.ndarray, list[object], np.ndarray]:
    """Codes that sort like the labels' text (missing last), the labels in that order (None
    last) and, for a categorical, each position's category code (-1 for missing)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        values = series.array
        codes = values.codes.astype(np.int64)
        distinct = pd.Index(values.categories)
    else:
        codes, uniques = pd.factorize(series, sort=False)
        codes, distinct = codes.astype(np.int64), pd.Index(uniques)
    if pd.api.types.infer_dtype(distinct, skipna=False) == "string":
        # Text labels (sample ids: one per contract, tens of thousands): taken out of pandas
        # in one call, not iterated one by one; the same str objects, so the same order.
        labels = distinct.to_numpy(dtype=object)
        texts = labels
    else:
        labels = list(distinct)
        texts = np.array([str(v) for v in labels], dtype=object)
    rank = np.argsort(np.argsort(texts, kind="stable"), kind="stable") if len(labels) \
        else np.array([], int)
    source = np.argsort(rank) if len(labels) else np.array([], int)
    ordered = (labels[source].tolist() if isinstance(labels, np.ndarray)
               else [labels[i] for i in source])
    lut = np.concatenate([rank, [len(labels)]]).astype(np.int64)  # missing (-1) sorts last
    return lut[codes], [*ordered, None], np.append(source, -1).astype(np.int64)


def _label_codes(series: pd.Series) -> tuple[np.ndarray, list[object]]:
    """Codes that sort like the labels' text (missing last) and the labels in that order."""
    codes, labels, _ = _text_order(series)
    return codes, labels


def _numbers(frame: pd.DataFrame, name: str, missing: float, n: int) -> np.ndarray:
    """A numeric column as floats, ``missing`` where absent or NaN (a column not in the frame
    is all ``missing``). Plain numpy columns skip pandas' NA scan, a third of a small run's
    preparation when repeated over a dozen count columns."""
    if name not in frame:
        return np.full(n, missing)
    series = frame[name]
    if isinstance(series.dtype, np.dtype) and series.dtype.kind in "iuf":
        values = series.to_numpy().astype(float)
        if series.dtype.kind == "f" and not np.isnan(missing):
            values[np.isnan(values)] = missing
        return values
    return series.to_numpy(dtype=float, na_value=missing)


def _lookup(series: pd.Series, labels: Sequence[str]) -> np.ndarray:
    """Position of each value in ``labels`` (-1 for missing or other), via the distinct
    values only."""
    codes, found = (series.cat.codes.to_numpy(), list(series.cat.categories)) \
        if isinstance(series.dtype, pd.CategoricalDtype) else pd.factorize(series)
    position = {label: i for i, label in enumerate(labels)}
    lut = np.array([position.get(str(v).strip().lower(), -1) for v in found] + [-1],
                   dtype=np.int64)
    return lut[np.asarray(codes, dtype=np.int64)]


def _group_keys(frame: pd.DataFrame, by: Sequence[str],
                ) -> tuple[np.ndarray, dict[str, np.ndarray | pd.Categorical], int]:
    """Dense group id per row (in the sorted order of the keys), each key column's value per
    group (a categorical stays one, built from its codes rather than by re-hashing its
    labels) and the number of groups."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), {}, 1
    combined = np.zeros(len(frame), dtype=np.int64)
    parts = []
    for column in by:
        codes, labels, source = _text_order(frame[column])
        combined = combined * len(labels) + codes
        parts.append((labels, source))
    unique, gid = np.unique(combined, return_inverse=True)
    keys: dict[str, np.ndarray | pd.Categorical] = {}
    rest = unique.copy()
    for column, (labels, source) in zip(reversed(by), reversed(parts), strict=True):
        position = rest % len(labels)
        dtype = frame[column].dtype
        keys[column] = (pd.Categorical.from_codes(source[position], dtype=dtype)
                        if isinstance(dtype, pd.CategoricalDtype)
                        else np.array(labels, dtype=object)[position])
        rest = rest // len(labels)
    return gid.ravel().astype(np.int64), {c: keys[c] for c in by}, int(unique.size)


def _groups(frame: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Dense group id per row (in the sorted order of the keys) and the key table."""
    gid, keys, _ = _group_keys(frame, by)
    return gid, pd.DataFrame(keys) if by else pd.DataFrame(index=range(1))


_LINE_SEPARATORS = re.compile(r"[;,\s]+")
_LINE_NUMBER = re.compile(r"\d+")


@lru_cache(maxsize=1 << 16)
def _line_set(text: str) -> frozenset[int]:
    """The line numbers of a ``"12;13"`` list: tokens between ``;``, ``,`` or blanks that
    are all digits. Remembered (a pure function of the text): a run's few hundred distinct
    lists are parsed once, not on every call of tiers."""
    if text.replace(";", "").isdecimal():  # the usual "12;13": the same tokens, no regex
        return frozenset(int(token) for token in text.split(";") if token)
    return frozenset(int(token) for token in _LINE_SEPARATORS.split(text)
                     if _LINE_NUMBER.fullmatch(token))


def _texts(values: pd.Index) -> list[str]:
    """The values as text (``Index.astype(str)``), without converting what already is."""
    if pd.api.types.is_string_dtype(values.dtype) and values.dtype != object:
        return values.tolist()
    return values.astype(str).tolist()


def _line_overlap(claimed: pd.Series, true: pd.Series, eligible: np.ndarray) -> np.ndarray:
    """|claimed ∩ true| / |true| per row where eligible and both are known, else NaN.

    Line lists are ``"12;13"`` text (or lists). Work is on the distinct (claimed, true) pairs:
    each distinct list is parsed once into a set of line numbers and each distinct pair
    intersected once."""
    out = np.full(len(claimed), np.nan)
    rows = np.flatnonzero(eligible)
    if rows.size == 0:
        return out

    def codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
        """Codes of the eligible rows (-1 where the list is missing) and the distinct lists
        as text: only the eligible rows are hashed (under half of a run's answers found
        their target), and no separate scan for missing values."""
        if isinstance(series.dtype, pd.CategoricalDtype):
            # Unused categories cost a parse only if a pair uses them, which none does.
            return series.array.codes[rows], _texts(series.array.categories)
        values = series.to_numpy()[rows] if series.dtype == object else series.iloc[rows]
        try:
            found, uniques = pd.factorize(values)
            return found, _texts(pd.Index(uniques))
        except TypeError:  # lists (unhashable) from a frame that did not pass io
            found, uniques = pd.factorize(pd.Series(values, dtype=object).map(
                lambda v: ";".join(map(str, v)) if isinstance(v, list | tuple | np.ndarray)
                else v))
        return found, list(pd.Index(np.asarray(uniques, dtype=object)).astype(str))

    c_codes, c_uniques = codes(claimed)
    t_codes, t_uniques = codes(true)
    known = (c_codes >= 0) & (t_codes >= 0)
    rows, c_codes, t_codes = rows[known], c_codes[known], t_codes[known]
    if rows.size == 0:
        return out
    pair_key = c_codes.astype(np.int64) * max(len(t_uniques), 1) + t_codes
    pairs, pair_of_row = np.unique(pair_key, return_inverse=True)

    # A run has few distinct line lists: each is parsed once into a set (Python sets on a
    # few hundred short strings cost less than the merges of exploded tables they replace).
    width = max(len(t_uniques), 1)
    true_sets: dict[int, frozenset[int]] = {}
    claimed_sets: dict[int, frozenset[int]] = {}
    fraction = np.empty(pairs.size)
    for i, (c, t) in enumerate(zip((pairs // width).tolist(), (pairs % width).tolist(),
                                   strict=True)):
        if t not in true_sets:
            true_sets[t] = _line_set(t_uniques[t])
        if c not in claimed_sets:
            claimed_sets[c] = _line_set(c_uniques[c])
        true_lines = true_sets[t]
        fraction[i] = (len(claimed_sets[c] & true_lines) / len(true_lines) if true_lines
                       else np.nan)
    out[rows] = fraction[pair_of_row.ravel()]
    return out




@dataclass(frozen=True)
class _Prepared:
    """One judge's answers reduced to arrays, group codes and sample codes."""

    keys: dict[str, np.ndarray | pd.Categorical]  # per key column, its value per group
    size: int                                      # groups (1 when there are no keys)
    gid: np.ndarray
    sample: np.ndarray
    n_samples: int
    q: np.ndarray                # answers x len(_Q)
    conf_rows: np.ndarray        # answers with a stated confidence
    confidence: np.ndarray       # of those rows
    correct: np.ndarray          # of those rows (0/1)
    conf_order: np.ndarray       # lexsort((confidence, gid)) of those rows
    missing: np.ndarray          # per group: answers left out as failed judgements
    clusters: Clusters           # the (group, sample) cells of the answers

    @property
    def n_groups(self) -> int:
        return self.size


@dataclass(frozen=True)
class _Answers:
    """One judge's answers reduced to arrays before any option applies: what
    :func:`_prepare` reads from the frame (its costly part: group and sample codes, line
    overlaps, every column as an array), so another partial credit or severity weighting
    re-weighs arrays instead of re-reading the frame."""

    keys: dict[str, np.ndarray | pd.Categorical]
    size: int
    gid: np.ndarray
    missing: np.ndarray
    vulnerable: np.ndarray
    said: np.ndarray
    found: np.ndarray
    partial: np.ndarray
    type_match: np.ndarray
    severity: tuple[np.ndarray, list[object]] | None  # label codes and labels, or absent
    counts: dict[str, np.ndarray]  # the finding counts a credit weighs, their total
    scores: dict[str, tuple[np.ndarray, np.ndarray]]
    confidence: np.ndarray
    conf_rows: np.ndarray
    conf_order: np.ndarray
    sample: np.ndarray
    n_samples: int
    location: np.ndarray
    clusters: Clusters


def _answers(judged: pd.DataFrame, by: Sequence[str]) -> _Answers:
    """Read one judge's answers into arrays (:class:`_Answers`); failed judgements out."""
    gid_all, keys, n_groups = _group_keys(judged, by)
    vulnerable, miss_v = _bools(judged["is_vulnerable"])
    said, miss_s = _bools(judged["said_vulnerable"])
    found_raw, miss_f = _bools(judged["target_found"])
    failed = miss_v | miss_s | miss_f
    missing = np.bincount(gid_all[failed], minlength=n_groups)
    keep = ~failed
    frame = judged[keep] if failed.any() else judged
    gid = gid_all[keep]
    vulnerable, said, found_raw = vulnerable[keep], said[keep], found_raw[keep]
    n = int(keep.sum())
    found = found_raw & vulnerable  # a safe contract has no target to find

    type_match = (_lookup(frame["type_match"], TYPE_MATCHES) if "type_match" in frame
                  else np.full(n, -1, dtype=np.int64))
    partial = found & (type_match == _PARTIAL)
    if "partial_found" in frame:
        partial |= found & _flag(frame["partial_found"])
    severity = _label_codes(frame["severity"]) if "severity" in frame else None
    every = {name: _numbers(frame, name, 0.0, n) for name in FINDING_COUNTS}
    # (kept: what a credit weighs and the total; not every count: a big run's arrays stay
    # in the app's cache)
    counts = {name: every[name] for name in ("n_target_match", "n_partial_match",
                                             "n_bonus_valid", "n_hallucinated")}
    counts["findings"] = np.sum(list(every.values()), axis=0) if n else np.zeros(0)
    del every
    scores = {}
    for name in REASONING:
        values = _numbers(frame, name, np.nan, n)
        scores[name] = (values, found & ~np.isnan(values))

    confidence = _numbers(frame, "confidence", np.nan, n)
    conf_rows = np.flatnonzero(~np.isnan(confidence))
    order = np.lexsort((confidence[conf_rows], gid[conf_rows]))
    # Every interval is clustered by sample (a contract's prompt types share its verdicts),
    # so the sample codes are always needed, not only by the bootstrap.
    # Codes in the samples' text order, so a bootstrap replicate draws the same samples
    # whatever order the rows came in.
    sample_codes, _ = _label_codes(frame["sample"])
    distinct, sample = np.unique(sample_codes, return_inverse=True)
    sample, n_samples = sample.ravel().astype(np.int64), int(distinct.size)
    lines = (_line_overlap(frame["claimed_lines"], frame["true_lines"], found)
             if {"claimed_lines", "true_lines"} <= set(frame.columns) else np.full(n, np.nan))
    return _Answers(keys=keys, size=n_groups, gid=gid, missing=missing, vulnerable=vulnerable,
                    said=said, found=found, partial=partial, type_match=type_match,
                    severity=severity, counts=counts, scores=scores, confidence=confidence,
                    conf_rows=conf_rows, conf_order=order,
                    sample=sample, n_samples=n_samples, location=lines,
                    clusters=Clusters.of(gid, sample, n_samples, n_groups))


def _prepare(judged: pd.DataFrame | _Answers, by: Sequence[str], partial_credit: float,
             severity_weights: Mapping[str, float] | None) -> tuple[_Prepared, dict]:
    """The per-answer quantity matrix and rows of :func:`~kbench_core.vuln.tiers` under a
    partial credit and severity weights, from a frame or its :func:`_answers`."""
    a = judged if isinstance(judged, _Answers) else _answers(judged, by)
    n = a.gid.size
    vulnerable, said, found = a.vulnerable, a.said, a.found
    credit = np.where(a.partial, partial_credit, 1.0) * found
    if severity_weights is None or a.severity is None:
        sev_w = np.ones(n)
    else:
        codes, labels = a.severity
        lut = np.array([float(severity_weights.get(str(lbl), 1.0)) if lbl is not None else 1.0
                        for lbl in labels])
        sev_w = lut[codes]

    counts = a.counts
    valid = counts["n_target_match"] + counts["n_partial_match"] + counts["n_bonus_valid"]
    findings = counts["findings"]
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
    for name in REASONING:
        values, used = a.scores[name]
        q[:, _QI[f"{name}_sum"]] = np.where(used, values, 0.0)
        q[:, _QI[f"{name}_n"]] = used

    conf_rows = a.conf_rows
    correct = (said == vulnerable).astype(float)
    prepared = _Prepared(keys=a.keys, size=a.size, gid=a.gid, sample=a.sample,
                         n_samples=a.n_samples, q=q, conf_rows=conf_rows,
                         confidence=a.confidence[conf_rows], correct=correct[conf_rows],
                         conf_order=a.conf_order, missing=a.missing, clusters=a.clusters)
    rows = {"vulnerable": vulnerable, "said": said, "found": found, "partial": a.partial,
            "lucky": vulnerable & said & ~found, "bonus": valid > found,
            "valid": valid, "hallucinated": counts["n_hallucinated"], "invalid": invalid,
            "type_match": a.type_match, "scores": a.scores, "location": a.location,
            "confidence": a.confidence, "correct": correct}
    return prepared, rows
