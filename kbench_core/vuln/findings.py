"""The findings behind some judged answers, read from the importer's JSON text, one row per
finding."""

from __future__ import annotations

import json

import pandas as pd

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
