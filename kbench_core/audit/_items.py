"""What an audit is about: the items of a judged run whose label a reviewer can check, the
decision a judge (or the majority) made on each, and the strata an audit sample is drawn from.

An **item** is one answer of one detector (``sample``, ``model``, ``prompt_type``), the unit
every judge read (``docs/metrics/agreement.md``). For ``target_found`` only answers about a
vulnerable contract are items: on a safe (fixed) contract there is no target to find, so there
is nothing for a reviewer to overrule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

ITEM_KEY: tuple[str, ...] = ("sample", "model", "prompt_type")
HUMAN = "human"
MAJORITY = "majority"
# The yes/no labels a reviewer can give (target_found required, the others optional).
AUDIT_LABELS: tuple[str, ...] = ("target_found", "said_vulnerable")
# A label a reviewer may add where the run grades partial matches (BlockBench's
# ``partial_found``): a partial match is a found target under BlockBench's rule.
PARTIAL = "partial_found"
# The judge's decision in words, as a stratum and on the page.
FOUND, NOT_FOUND, FAILED = "found", "not found", "failed"


def item_frame(judged: pd.DataFrame) -> pd.DataFrame:
    """``judged`` with a ``prompt_type`` column (a run without prompt types has one, empty), so
    every item has the same three-part key."""
    if "prompt_type" in judged:
        return judged
    return judged.assign(prompt_type="")


def llm_judges(judged: pd.DataFrame) -> list[str]:
    """The run's LLM judges (every judge but ``human``), sorted."""
    return sorted({str(j) for j in judged["judge"].unique()} - {HUMAN})


def judge_choices(judged: pd.DataFrame) -> list[str]:
    """``majority`` first when the run has several LLM judges, then each judge."""
    names = llm_judges(judged)
    return ([MAJORITY] if len(names) > 1 else []) + names


def check_judge(judged: pd.DataFrame, judge: str) -> None:
    """A ``ValueError`` naming the choices when ``judge`` is not one of the run's (the
    majority of a run with one LLM judge is that judge)."""
    choices = judge_choices(judged)
    if judge not in choices and not (judge == MAJORITY and len(choices) == 1):
        raise ValueError(f"no judge {judge!r} in this run; choose one of: "
                         f"{', '.join(choices) or 'none (the run has no LLM judge)'}")


def effective_judge(judged: pd.DataFrame, judge: str) -> str:
    """The judge's own name: the majority of a run with one LLM judge is that judge."""
    names = llm_judges(judged)
    return names[0] if judge == MAJORITY and len(names) == 1 else judge


def judge_rows(judged: pd.DataFrame, judge: str, *, judges: Sequence[str] | None = None,
               min_votes: int | None = None, columns: Sequence[str] | None = None
               ) -> pd.DataFrame:
    """One row per item as ``judge`` decided it: the majority of the LLM judges
    (:func:`kbench_core.agreement.consensus`) or the named judge's own rows; ``columns``:
    only these (and the key), so that a majority votes on what is needed alone."""
    judged = item_frame(judged)
    check_judge(judged, judge)
    if columns is not None:
        keep = list(dict.fromkeys([*ITEM_KEY, "judge", *columns]))
        judged = judged[[c for c in keep if c in judged]]
    llm = judged[judged["judge"].astype(str) != HUMAN]
    if judge == MAJORITY and len(llm_judges(judged)) == 1:
        return llm
    if judge == MAJORITY:
        from kbench_core.agreement import consensus

        return consensus(llm, judges=judges, min_votes=min_votes)
    return llm[llm["judge"].astype(str) == judge]


def population(judged: pd.DataFrame, judge: str = MAJORITY, *, label: str = "target_found",
               by: Sequence[str] = ("model",), judges: Sequence[str] | None = None,
               min_votes: int | None = None) -> pd.DataFrame:
    """Every item a reviewer could audit, with ``judge``'s decision on ``label``.

    Returns one row per item: the item key, the ``by`` columns, ``decision`` (1.0 found, 0.0
    not found, NaN when the judgement failed), ``decision_text`` (found / not found / failed)
    and ``stratum`` (the ``by`` values and the decision, joined by `` · ``). For
    ``target_found`` only vulnerable items are kept (``is_vulnerable``).
    """
    if label not in AUDIT_LABELS:  # (partial_found is kept with a label, never audited alone)
        raise ValueError(f"label must be one of {', '.join(AUDIT_LABELS)}; got {label!r}")
    rows = judge_rows(judged, judge, judges=judges, min_votes=min_votes,
                      columns=[label, "is_vulnerable", *by])
    if label == "target_found" and "is_vulnerable" in rows:
        rows = rows[rows["is_vulnerable"].astype("boolean").fillna(False).to_numpy(bool)]
    by = list(by)
    unknown = [c for c in by if c not in rows]
    if unknown:
        raise ValueError(f"no column {', '.join(map(repr, unknown))} to stratify by; "
                         f"columns: {', '.join(map(str, rows.columns))}")
    keep = list(dict.fromkeys([*ITEM_KEY, *by]))
    out = pd.DataFrame({c: _labels(rows[c]) for c in keep})
    decision = pd.to_numeric(rows[label].astype("Float64"), errors="coerce").to_numpy(float) \
        if label in rows else np.full(len(rows), np.nan)
    out["decision"] = decision
    out["decision_text"] = pd.Categorical.from_codes(
        np.where(np.isnan(decision), 2, np.where(decision > 0.5, 0, 1)),
        categories=[FOUND, NOT_FOUND, FAILED])
    out["stratum"] = joined([out[c] for c in by] + [out["decision_text"]])
    out = out[~item_keys(out).duplicated()]
    return out.reset_index(drop=True)


def _labels(values: pd.Series) -> pd.Categorical:
    """A key column as a categorical of text (a categorical keeps its codes; anything else is
    factorised once): joins and strata then work on codes, never on Python strings."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        cats = values.cat.categories
        if cats.dtype != object:
            cats = pd.Index(cats.astype(str).to_numpy(dtype=object), dtype=object)
        return pd.Categorical.from_codes(values.cat.codes.to_numpy(), categories=cats)
    codes, uniques = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=False)
    cats = pd.Index(np.array([str(u) for u in uniques], dtype=object), dtype=object)
    if cats.has_duplicates:  # 1 and "1" are one label as text
        return pd.Categorical(cats.to_numpy()[codes])
    return pd.Categorical.from_codes(codes, categories=cats)


def joined(parts: Sequence[pd.Series | np.ndarray | pd.Categorical]) -> pd.Categorical:
    """Row-wise ``" · "``-joined labels of several columns (a categorical), each distinct
    combination joined once."""
    factors = []
    for part in parts:
        cat = part.array if isinstance(part, pd.Series) else part
        if not isinstance(cat, pd.Categorical):
            cat = _labels(pd.Series(np.asarray(part, dtype=object)))
        factors.append((cat.codes.astype(np.int64), cat.categories))
    if len(factors) == 1:
        codes, cats = factors[0]
        return pd.Categorical.from_codes(codes, categories=cats.astype(str))
    flat = np.ravel_multi_index([np.maximum(c, 0) for c, _ in factors],
                                [max(len(values), 1) for _, values in factors])
    first, codes = np.unique(flat, return_index=True, return_inverse=True)[1:]
    names = [" · ".join(str(values[c[i]]) for c, values in factors) for i in first]
    return pd.Categorical.from_codes(codes.reshape(-1), categories=pd.Index(names,
                                                                           dtype=object))


def _equals(values: pd.Series, value: str) -> np.ndarray:
    """``values == value`` as text, on a categorical's codes (one lookup, no string per
    row)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        text = np.asarray(values.cat.categories.astype(str), dtype=object)
        codes = np.flatnonzero(text == value)
        return np.isin(values.cat.codes.to_numpy(), codes)
    return values.astype(str).to_numpy() == value


def _text_hash(values: pd.Series) -> np.ndarray:
    """A 64-bit hash of each value's text (pandas' ``hash_array``, vectorised): a
    categorical's categories are hashed once and taken by code."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        cats = np.asarray(values.cat.categories.astype(str), dtype=object)
        hashed = pd.util.hash_array(cats, categorize=False) if len(cats) else \
            np.zeros(0, np.uint64)
        codes = values.cat.codes.to_numpy()
        missing = pd.util.hash_array(np.array(["nan"], dtype=object), categorize=False)[0]
        return np.where(codes >= 0, hashed[np.maximum(codes, 0)] if len(cats) else missing,
                        missing).astype(np.uint64)
    text = values.astype(str).to_numpy(dtype=object)
    return pd.util.hash_array(text, categorize=True)


def item_keys(frame: pd.DataFrame) -> pd.Index:
    """The rows' items, (sample, model, prompt_type) as text, as one 64-bit key each: for
    joins that must not depend on the columns' dtypes or categories, computed without a
    string per row (a 100k-item run's keys took seconds as text). Two distinct items share a
    key with probability about n²/2⁶⁵ (1e-10 for 100k items)."""
    with np.errstate(over="ignore"):
        key = np.zeros(len(frame), dtype=np.uint64)
        for column in ITEM_KEY:
            key = key * np.uint64(0x9E3779B97F4A7C15) + _text_hash(frame[column])
    return pd.Index(key, name="item")


def first_per_item(frame: pd.DataFrame) -> pd.DataFrame:
    """Each item's first row in ``frame``, indexed by its :func:`item_keys` key (for joins
    on the item: ``first_per_item(rows).reindex(item_keys(other))``)."""
    keys = item_keys(frame)
    return frame.set_axis(keys)[~keys.duplicated()]


def evidence(judged: pd.DataFrame, item: Sequence[Any]) -> dict[str, Any]:
    """What a reviewer reads about one item: the ground truth, the detector's verdict and
    findings, and each LLM judge's decision and scores (one row per judge).

    Returns ``{"truth": dict, "detector": dict, "findings": DataFrame, "judges":
    DataFrame}``: the verdict from a judge who read the answer (not a failed judgement), the
    findings as the detector wrote them (:func:`_claims`); text stays text (the caller shows
    it as such).
    """
    judged = item_frame(judged)
    key = dict(zip(ITEM_KEY, map(str, item), strict=True))
    mask = np.ones(len(judged), dtype=bool)
    for c, v in key.items():
        mask &= _equals(judged[c], v)
    rows = judged[mask]
    rows = rows[rows["judge"].astype(str) != HUMAN]
    if rows.empty:
        raise KeyError(f"no item {key}")
    # the detector's answer as a judge who read it saw it: a failed judgement carries no
    # verdict, so the first judge by name who did not fail (else the first)
    failed = (rows["failed_judgement"].notna().to_numpy(bool) if "failed_judgement" in rows
              else np.zeros(len(rows), dtype=bool))
    readable = rows.iloc[np.argsort(failed, kind="stable")]
    first = readable.iloc[0]
    truth = {c: first[c] for c in ("is_vulnerable", "severity", "vuln_type", "true_lines",
                                   "difficulty") if c in rows}
    detector = {c: first[c] for c in ("said_vulnerable", "confidence", "claimed_lines",
                                      "response", "answer") if c in rows}
    columns = [c for c in ("judge", "target_found", "said_vulnerable", "type_match", "rcir",
                           "ava", "fsv", "n_target_match", "n_partial_match", "n_bonus_valid",
                           "n_hallucinated", "claimed_lines", "explanation", "reasoning")
               if c in rows]
    return {"truth": truth, "detector": detector, "findings": _claims(readable),
            "judges": rows[columns].reset_index(drop=True)}


CLAIM_FIELDS = ("finding_id", "vulnerability_type_claimed", "severity_claimed",
                "location_claimed", "description")


def _claims(rows: pd.DataFrame) -> pd.DataFrame:
    """The detector's findings as it wrote them (:data:`CLAIM_FIELDS`, text), read from the
    first of ``rows`` that lists them; no judge's classification or reasoning (the reviewer
    decides). Empty when no row lists findings."""
    from kbench_core.vuln.findings import sample_findings

    listed = (rows[rows["findings"].notna()] if "findings" in rows else rows.iloc[:0])
    found = sample_findings(listed.iloc[:1])
    return found[[c for c in CLAIM_FIELDS if c in found]].reset_index(drop=True)
