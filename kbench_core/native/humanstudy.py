"""HumanStudy-Bench's per-test effect list (SPEC 1.2): a JSON list of records with ``Model,
Method, ES_Original, ES_Replication, Study_ID, Sub_Study_ID, Finding_ID, Test_Name, Power,
Significant_Replication``.

=========================================  =============================================
HumanStudy-Bench field                     kbench column
=========================================  =============================================
``Model``, ``Method``                      ``model`` = ``Model (Method)``
``Study_ID``                               ``study``
``Sub_Study_ID``, ``Finding_ID``           ``finding`` = ``Sub_Study_ID/Finding_ID``
                                           (``Sub_Study_ID`` alone when Finding_ID is empty)
``Test_Name``                              ``test``; repeats within a finding are numbered
                                           ``name #2``, ``name #3`` (with a warning)
``ES_Original``, ``ES_Replication``        ``human_d``, ``agent_d`` (Cohen's d)
``Power``, ``Significant_Replication``     ``power``, ``significant_replication`` (kept)
=========================================  =============================================

The released files repeat test names within a finding (27 times in one), which would otherwise
be duplicate keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.native import Converted, NativeError, NativeFormat

__all__ = ["FORMATS"]

_SIGNATURE = frozenset({"ES_Original", "ES_Replication", "Study_ID", "Test_Name"})


def _matches(payload: Any) -> bool:
    if not isinstance(payload, list) or not payload:
        return False
    first = next((r for r in payload if isinstance(r, dict)), None)
    return first is not None and set(first) >= _SIGNATURE


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _convert(filename: str, payload: Any, options: Mapping[str, Any]) -> Converted:
    rows = []
    for number, record in enumerate(payload, start=1):
        if not isinstance(record, dict):
            raise NativeError(f"expected a test record, got {type(record).__name__}",
                              where=number)
        model, method = _text(record.get("Model")), _text(record.get("Method"))
        sub, finding_id = _text(record.get("Sub_Study_ID")), _text(record.get("Finding_ID"))
        rows.append({
            "model": f"{model} ({method})" if method else model,
            "study": record.get("Study_ID"),
            "finding": f"{sub}/{finding_id}" if finding_id else sub,
            "test": record.get("Test_Name"),
            "human_d": record.get("ES_Original"), "agent_d": record.get("ES_Replication"),
            "power": record.get("Power"),
            "significant_replication": record.get("Significant_Replication"),
        })
    frame = pd.DataFrame.from_records(rows).astype(object)
    # Number repeated test names within a (model, study, finding): name, name #2, name #3.
    key = ["model", "study", "finding", "test"]
    repeat = frame[key].astype(str).groupby(key, sort=False).cumcount().to_numpy()
    warnings: tuple[str, ...] = ()
    if (repeat > 0).any():
        frame["test"] = np.where(repeat > 0, frame["test"].astype(str) + " #"
                                 + (repeat + 1).astype(str), frame["test"])
        warnings = (f"{int((repeat > 0).sum())} repeated test names within a finding were "
                    "numbered ('name #2', 'name #3', ...), as HumanStudy-Bench's files repeat "
                    "them",)
    return Converted(kind="replication", frame=frame, numbers=np.arange(1, len(rows) + 1),
                     unit="record", warnings=warnings)


FORMATS = (NativeFormat(name="HumanStudy-Bench effects", kind="replication",
                        matches_json=_matches, from_json=_convert),)
