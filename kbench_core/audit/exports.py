"""The audit in the exports (``kbench figures --labels``, ``kbench report --labels``): its
figures and tables for a judged run and the labels given, with what the provenance records."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.audit._items import MAJORITY, judge_choices
from kbench_core.audit.accuracy import judge_accuracy
from kbench_core.audit.design import design
from kbench_core.audit.estimate import corrected
from kbench_core.audit.labels import drawn_judge, latest

__all__ = ["audit_objects", "audit_provenance", "confusion_tables"]


def confusion_tables(judged: pd.DataFrame, labels: pd.DataFrame, *,
                     design_judge: str | None = None) -> pd.DataFrame:
    """Each judge's decisions against the reviewers' labels on the labelled items, as counts
    (``n_*``) and weighted back to the run (``run_*``: the items the run holds of each kind):
    one row per judge, the columns of a 2×2 table (reviewer found / not found × judge found /
    not found)."""
    choices = judge_choices(judged)
    base = design(judged, labels, judge=design_judge or choices[0])
    rows = []
    for who in choices:
        data = design(judged, labels, judge=who)
        weights = _weights(base)
        data = data.assign(w=weights.reindex(_keys(data)).to_numpy(float))
        data = data[~np.isnan(data["human"].to_numpy(float)) & ~data["failed"].to_numpy(bool)]
        y = data["human"].to_numpy(float)
        d = data["yhat"].to_numpy(float)
        w = data["w"].to_numpy(float)
        row: dict[str, Any] = {"judge": who}
        for name, cell in (("both_found", y * d), ("reviewer_only", y * (1 - d)),
                           ("judge_only", (1 - y) * d), ("neither", (1 - y) * (1 - d))):
            row[f"n_{name}"] = float(cell.sum())
            row[f"run_{name}"] = float((w * cell).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _keys(frame: pd.DataFrame) -> pd.Index:
    from kbench_core.audit._items import item_keys

    return item_keys(frame)


def _weights(base: pd.DataFrame) -> pd.Series:
    from kbench_core.audit.design import _design_weights

    return pd.Series(_design_weights(base), index=_keys(base))


def audit_provenance(labels: pd.DataFrame, *, judge: str, method: str,
                     source: str = "", data: bytes | None = None) -> dict[str, Any]:
    """What an export of the audit records: the labels (count, reviewers, file and its
    SHA-256), the judge audited and the method."""
    current = latest(labels)
    out: dict[str, Any] = {"audit_judge": judge, "audit_method": method,
                           "audit_labels": len(current),
                           "audit_reviewers": int(current["reviewer"].nunique())}
    if source:
        out["audit_labels_file"] = source
    if data is not None:
        out["audit_labels_sha256"] = hashlib.sha256(data).hexdigest()
    return out


def audit_objects(judged: pd.DataFrame, labels: pd.DataFrame, *, judge: str = MAJORITY,
                  method: str = "ppi++") -> Iterator[tuple[str, str, Any, str]]:
    """``(stem, what, object, title)`` of every audit figure and table: the corrected rates
    (forest plot and table), each judge's accuracy (chart and table) and the judges'
    confusion tables."""
    from kbench_core.figures import audit as figures

    # the sample drawn with the judge audited (as ``kbench audit --judge`` and the page take
    # it): its strata weigh the labels
    design = drawn_judge(labels, judge)
    table = corrected(judged, labels, judge=judge, method=method, design_judge=design)
    accuracy = judge_accuracy(judged, labels, design_judge=design)
    yield ("audit_corrected", "figure", figures.corrected_forest(table),
           "Detection rate corrected for the judge's errors")
    yield ("audit_accuracy", "figure", figures.accuracy_chart(accuracy),
           "Each judge against the reviewers")
    yield ("audit_corrected_rates", "table", table,
           "Detection rate corrected for the judge's errors")
    yield ("audit_judge_accuracy", "table", accuracy, "Each judge against the reviewers")
    yield ("audit_confusion", "table", confusion_tables(judged, labels, design_judge=design),
           "Each judge's decisions against the reviewers' labels")
