"""KahneBench result JSON (``docs/formats.md``): ``{"run_metadata": {...}, "results": [...]}``
or a bare list.

Each result record becomes one ``bias`` row:

=====================================  =============================================
KahneBench field                       kbench column
=====================================  =============================================
``bias_id``, ``model_id``, ``domain``  ``bias``, ``model``, ``domain``
``condition`` = ``control``            ``condition`` control
``condition`` = ``treatment_<i>``      ``condition`` treatment, ``intensity`` i
``condition`` = ``debiasing_<k>``      ``condition`` debiasing, ``method`` =
                                       ``metadata.debiasing_method`` else ``debiasing_<k>``
``bias_score``, else ``is_biased``     ``score`` (a bool as 0/1; neither: unknown)
``confidence_stated``                  ``confidence``
``metadata.trial``                     ``trial``
``prompt_used``, ``model_response``,   ``prompt``, ``response``, ``answer``,
``extracted_answer``,                  ``response_ms``
``response_time_ms``
=====================================  =============================================

Values are passed on as written; :mod:`kbench_core.io` validates them, so an intensity such as
``treatment_extreme`` is reported as record n, field ``intensity``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.native._base import Converted, NativeError, NativeFormat

__all__ = ["FORMATS"]

_SIGNATURE = frozenset({"bias_id", "model_id", "condition"})
_RENAMES = {"bias_id": "bias", "model_id": "model", "domain": "domain",
            "prompt_used": "prompt", "model_response": "response", "extracted_answer": "answer",
            "response_time_ms": "response_ms", "confidence_stated": "confidence"}


def _records(payload: Any) -> list[Any] | None:
    if isinstance(payload, dict) and isinstance(payload.get("results"), list):
        return payload["results"]
    return payload if isinstance(payload, list) else None


def _matches(payload: Any) -> bool:
    records = _records(payload)
    if not records:
        return False
    first = next((r for r in records if isinstance(r, dict)), None)
    return first is not None and set(first) >= _SIGNATURE


def _score(record: Mapping[str, Any]) -> Any:
    score = record.get("bias_score")
    if score is not None:
        return score
    biased = record.get("is_biased")
    if isinstance(biased, bool):
        return float(biased)
    return biased  # None (unknown), or a value the validator will name


def _convert(filename: str, payload: Any, options: Mapping[str, Any]) -> Converted:
    records = _records(payload) or []
    rows: list[dict[str, Any]] = []
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise NativeError(f"expected a result object, got {type(record).__name__}",
                              where=number, unit="result")
        metadata = record.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise NativeError("expected an object", where=number, field="metadata",
                              unit="result")
        row = {ours: record.get(theirs) for theirs, ours in _RENAMES.items()}
        condition = record.get("condition")
        intensity = method = None
        if isinstance(condition, str) and condition.startswith("treatment_"):
            condition, intensity = "treatment", condition.removeprefix("treatment_")
        elif isinstance(condition, str) and condition.startswith("debiasing_"):
            method = metadata.get("debiasing_method") or condition
            condition = "debiasing"
        row.update(condition=condition, intensity=intensity, method=method,
                   score=_score(record), trial=metadata.get("trial"))
        if "category" in metadata:
            row["category"] = metadata["category"]
        rows.append(row)
    if not rows:
        raise NativeError("the results list is empty")
    frame = pd.DataFrame.from_records(rows)
    frame = frame.astype({c: object for c in frame.columns})
    run_metadata = payload.get("run_metadata") if isinstance(payload, dict) else None
    meta = {"run_metadata": run_metadata} if isinstance(run_metadata, dict) else {}
    return Converted(kind="bias", frame=frame, numbers=np.arange(1, len(rows) + 1),
                     unit="result", meta=meta)


FORMATS = (NativeFormat(name="KahneBench results", kind="bias", matches_json=_matches,
                        from_json=_convert),)
