"""HumanStudy-Bench's per-test effect list (``docs/formats.md``): a JSON list of records with
``Model, Method, ES_Original, ES_Replication, Study_ID, Sub_Study_ID, Finding_ID, Test_Name, Power,
Significant_Replication``, one per agent configuration × statistical test.

=========================================  =============================================
HumanStudy-Bench field                     kbench column
=========================================  =============================================
``Model``, ``Method``                      ``model`` = ``Model (Method)`` (``Model`` alone
                                           when Method is empty)
``Study_ID``                               ``study``
``Sub_Study_ID``, ``Finding_ID``           ``finding`` = ``Sub_Study_ID/Finding_ID``
                                           (``Sub_Study_ID`` alone when Finding_ID is empty
                                           or absent)
``Test_Name``                              ``test``; repeats within a finding are numbered
                                           ``name #2``, ``name #3`` (with a warning)
``ES_Original``, ``ES_Replication``        ``human_d``, ``agent_d`` (Cohen's d; null = not
                                           computed, left out of ECS, with a warning)
``Power``                                  ``power`` (number or null, kept)
``Significant_Replication``                ``significant_replication`` (true/false/null, kept)
=========================================  =============================================

The released files repeat test names within a finding (27 times in one), which would otherwise
be duplicate keys. Other fields of a record are kept as extra columns. A structural problem
(a record that is not an object, a missing required field, a value of the wrong JSON type)
raises :class:`~kbench_core.native.NativeError` naming the record (1-based) and the
HumanStudy-Bench field; :mod:`kbench_core.io` then validates the canonical table as usual.
The file carries effect sizes only, so PAS is unavailable for it (``docs/formats.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.native._base import Converted, NativeError, NativeFormat

__all__ = ["FORMATS"]

# Enough to recognise the format even when a record lacks other fields (then the converter
# says which, instead of the loader failing to tell the kind).
_SIGNATURE = frozenset({"ES_Original", "ES_Replication"})
_NAMES = ("Model", "Study_ID", "Sub_Study_ID", "Test_Name")
_NUMBERS = ("ES_Original", "ES_Replication")
_JSON_CONSTANTS = frozenset({"NaN", "Infinity", "-Infinity"})  # io keeps them as text
_RENAME = {"Study_ID": "study", "Test_Name": "test", "ES_Original": "human_d",
           "ES_Replication": "agent_d", "Power": "power",
           "Significant_Replication": "significant_replication"}
_MAX_LISTED = 5


def _matches(payload: Any) -> bool:
    if not isinstance(payload, list) or not payload:
        return False
    first = next((r for r in payload if isinstance(r, dict)), None)
    return first is not None and set(first) >= _SIGNATURE


def _problem(bad: np.ndarray, field: str, expected: str, values: pd.Series) -> NativeError:
    """A NativeError for the first offending record, listing a few more."""
    rows = np.flatnonzero(bad)
    first = int(rows[0])
    more = ""
    if rows.size > 1:
        shown = ", ".join(str(r + 1) for r in rows[1:_MAX_LISTED])
        extra = rows.size - _MAX_LISTED
        more = f" (also records {shown}{f' and {extra} more' if extra > 0 else ''})"
    value = values.iloc[first]
    if isinstance(value, str) and value in _JSON_CONSTANTS:
        message = "NaN and infinity are not valid values; write null when it is unknown"
    else:
        shown = "null" if value is None else repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        message = f"expected {expected}, got {shown}"
    return NativeError(message + more, where=first + 1, field=field)


def _check(raw: pd.DataFrame, field: str, ok: Callable[[Any], bool], expected: str) -> None:
    values = raw[field]
    bad = ~values.map(ok).to_numpy(bool)
    if bad.any():
        raise _problem(bad, field, expected, values)


def _number_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, Real) and not isinstance(value, bool))


def _name(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip() != ""


def _text(values: pd.Series) -> pd.Series:
    return values.map(lambda v: "" if v is None else str(v).strip())


def _convert(filename: str, payload: Any, options: Mapping[str, Any]) -> Converted:
    for number, record in enumerate(payload, start=1):
        if not isinstance(record, dict):
            raise NativeError("expected a test record (a JSON object), got "
                              f"{type(record).__name__}", where=number)
    raw = pd.DataFrame.from_records(payload).astype(object)
    raw = raw.where(raw.notna(), None)  # a key absent from a record arrives as NaN: null
    for field in (*_NAMES, *_NUMBERS):
        if field not in raw:
            raise NativeError(f"the records have no field {field!r}", where=1, field=field)
    for field in _NAMES:
        _check(raw, field, _name, "a non-empty name")
    for field in (*_NUMBERS, *(["Power"] if "Power" in raw else [])):
        _check(raw, field, _number_or_null, "a number or null")
    if "Significant_Replication" in raw:
        _check(raw, "Significant_Replication", lambda v: v is None or isinstance(v, bool),
               "true, false or null")

    blank = pd.Series("", index=raw.index)
    model, sub = _text(raw["Model"]), _text(raw["Sub_Study_ID"])
    method = _text(raw["Method"]) if "Method" in raw else blank
    finding_id = _text(raw["Finding_ID"]) if "Finding_ID" in raw else blank
    frame = raw.drop(columns=[c for c in ("Model", "Method", "Sub_Study_ID", "Finding_ID")
                              if c in raw]).rename(columns=_RENAME)
    frame["model"] = np.where(method != "", model + " (" + method + ")", model)
    frame["finding"] = np.where(finding_id != "", sub + "/" + finding_id, sub)
    frame["study"] = _text(frame["study"])
    frame["test"] = _text(frame["test"])
    for column in ("human_d", "agent_d", "power"):
        if column in frame:
            frame[column] = frame[column].astype(float)
    if "significant_replication" in frame:
        frame["significant_replication"] = frame["significant_replication"].astype("boolean")
    key = ["model", "study", "finding", "test"]
    frame = frame[[*key, *[c for c in frame.columns if c not in key]]]

    notes: list[str] = []
    # Number repeated test names within a (model, study, finding): name, name #2, name #3.
    repeat = frame.groupby(key, sort=False).cumcount().to_numpy()
    if (repeat > 0).any():
        frame["test"] = np.where(repeat > 0, frame["test"] + " #" + (repeat + 1).astype(str),
                                 frame["test"])
        notes.append(f"{int((repeat > 0).sum())} repeated test names within a finding were "
                     "numbered ('name #2', 'name #3', ...), as HumanStudy-Bench's files repeat "
                     "them")
    missing = frame["human_d"].isna() | frame["agent_d"].isna()
    if missing.any():
        notes.append(f"{int(missing.sum())} of {len(frame)} records have no ES_Original or "
                     "ES_Replication; they are left out of ECS")
    return Converted(kind="replication", frame=frame.reset_index(drop=True),
                     numbers=np.arange(1, len(frame) + 1), unit="record",
                     warnings=tuple(notes))


FORMATS = (NativeFormat(name="HumanStudy-Bench effects", kind="replication",
                        matches_json=_matches, from_json=_convert),)
