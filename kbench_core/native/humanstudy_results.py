"""HumanStudy-Bench's published leaderboard (``results/benchmark/``) as ``replication_summary``
runs (see ``docs/formats.md``).

``simple_results.json``: ``{"metadata": {...}, "configs": {config: {pas_raw, ecs, total_tokens,
total_cost, studies: [{study_id, title, pas_raw, ecs, total_tokens, total_cost}], findings:
[{study_id, finding_idx, sub_study_id, finding_id, finding_score, n_tests}]}}}``.

=====================================  =========================================================
HumanStudy-Bench field                 kbench column
=====================================  =========================================================
config name                            ``model`` (every row of the configuration)
``configs[c].pas_raw`` / ``.ecs``      ``config_pas`` / ``config_ecs`` (the published
                                       configuration-level values, on each of its rows)
``studies[].study_id``, ``title``      ``study``, ``title``
``studies[].pas_raw`` / ``ecs``        ``pas`` / ``ecs`` (study rows)
``total_tokens`` / ``total_cost``      ``tokens`` / ``cost`` (per study; the configuration's
                                       totals are their sums)
``findings[]``                         finding rows: ``finding`` = ``sub_study_id/finding_id``
                                       (``finding_id`` alone when ``sub_study_id`` is empty;
                                       ``#finding_idx`` appended when that still repeats),
                                       ``finding_score``, ``n_tests``
=====================================  =========================================================

``simple_findings.csv`` (``config, study_id, finding_idx, sub_study_id, finding_id,
finding_score, n_tests``) gives the same finding rows from a table. Values are passed on as
written; :mod:`kbench_core.io` validates them like any canonical cell (a word where a number
goes is an error naming the entry and the field). A structural problem (``configs`` not an
object, a study that is not an object, a missing ``study_id``) raises
:class:`~kbench_core.native.NativeError` naming the entry.

The published configuration PAS (``pas_raw``) is the mean of its study PAS values; the published
configuration ECS is *not* the mean of the per-study ECS (it pools the tests), so the two are kept
under their own names and never recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.native._base import MAX_LABEL_CHARS, Converted, NativeError, NativeFormat

__all__ = ["FORMATS"]

_STUDY_FIELDS = {"study_id": "study", "title": "title", "pas_raw": "pas", "ecs": "ecs",
                 "total_tokens": "tokens", "total_cost": "cost"}
_FINDING_COLUMNS = frozenset({"config", "study_id", "sub_study_id", "finding_id",
                              "finding_score", "n_tests"})


def _matches(payload: Any) -> bool:
    return (isinstance(payload, dict) and isinstance(payload.get("configs"), dict)
            and any(isinstance(c, dict) and ("studies" in c or "findings" in c)
                    for c in payload["configs"].values()))


def _text(value: Any) -> str:
    # an empty CSV cell is read as NaN: it is an empty text, not the word "nan" (the JSON
    # writes "" for the same sub_study_id)
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value).strip()


def finding_names(sub: pd.Series, finding_id: pd.Series, idx: pd.Series,
                  keys: pd.DataFrame) -> pd.Series:
    """``sub/finding_id`` (``finding_id`` alone when ``sub`` is empty), with ``#idx`` appended
    where that name repeats within the same ``keys`` (configuration, study)."""
    sub, fid = sub.map(_text), finding_id.map(_text)
    names = pd.Series(np.where(sub != "", sub + "/" + fid, fid), index=sub.index)
    repeated = pd.concat([keys, names.rename("_name")], axis=1).duplicated(keep=False)
    return names.where(~repeated, names + " #" + idx.map(_text))


def _convert(filename: str, payload: Any, options: Mapping[str, Any]) -> Converted:
    configs = payload["configs"]
    study_rows: list[dict[str, Any]] = []
    finding_rows: list[dict[str, Any]] = []
    study_where: list[str] = []
    finding_where: list[str] = []
    for name, config in configs.items():
        # The key is the configuration's name (a label): capped like every label, and never
        # repeated whole in a message.
        where = f"configs[{name!r}]" if len(name) <= 80 else f"configs[{name[:60]!r}...]"
        if len(name) > MAX_LABEL_CHARS:
            raise NativeError(f"a configuration name of {len(name):,} characters, over the "
                              f"limit of {MAX_LABEL_CHARS:,} characters for a name",
                              where=where, field="model", unit="entry")
        if not isinstance(config, dict):
            raise NativeError(f"expected a configuration object, got {type(config).__name__}",
                              where=where, unit="entry")
        shared = {"model": name, "config_pas": config.get("pas_raw"),
                  "config_ecs": config.get("ecs")}
        studies = config.get("studies", [])
        if not isinstance(studies, list):
            raise NativeError("expected a list of studies", where=where, field="studies",
                              unit="entry")
        for i, study in enumerate(studies):
            at = f"{where}.studies[{i}]"
            if not isinstance(study, dict):
                raise NativeError(f"expected a study object, got {type(study).__name__}",
                                  where=at, unit="entry")
            if _text(study.get("study_id")) == "":
                raise NativeError("missing study_id", where=at, field="study_id", unit="entry")
            row = dict(shared)
            row.update({ours: study.get(theirs) for theirs, ours in _STUDY_FIELDS.items()
                        if theirs in study})
            study_rows.append(row)
            study_where.append(at)
        findings = config.get("findings", [])
        if not isinstance(findings, list):
            raise NativeError("expected a list of findings", where=where, field="findings",
                              unit="entry")
        for i, finding in enumerate(findings):
            at = f"{where}.findings[{i}]"
            if not isinstance(finding, dict):
                raise NativeError(f"expected a finding object, got {type(finding).__name__}",
                                  where=at, unit="entry")
            if _text(finding.get("study_id")) == "":
                raise NativeError("missing study_id", where=at, field="study_id", unit="entry")
            finding_rows.append({**shared, "study": finding.get("study_id"),
                                 "sub_study_id": finding.get("sub_study_id"),
                                 "finding_id": finding.get("finding_id"),
                                 "finding_idx": finding.get("finding_idx"),
                                 "finding_score": finding.get("finding_score"),
                                 "n_tests": finding.get("n_tests")})
            finding_where.append(at)
    if not study_rows and not finding_rows:
        raise NativeError("the file lists no study and no finding", where="configs",
                          unit="entry")
    studies_frame = pd.DataFrame.from_records(study_rows).astype(object)
    findings_frame = pd.DataFrame.from_records(finding_rows).astype(object)
    if len(findings_frame):
        findings_frame["study"] = findings_frame["study"].map(_text)
        findings_frame["finding"] = finding_names(
            findings_frame["sub_study_id"], findings_frame["finding_id"],
            findings_frame["finding_idx"], findings_frame[["model", "study"]])
        findings_frame = findings_frame.drop(columns=["sub_study_id", "finding_id"])
    frame = pd.concat([studies_frame, findings_frame], ignore_index=True).astype(object)
    frame = frame.where(frame.notna(), None)
    notes = []
    unscored = [name for name, config in configs.items() if isinstance(config, dict)
                and config.get("pas_raw") is None and config.get("ecs") is None]
    if unscored:
        shown = ", ".join(unscored[:5]) + (f" and {len(unscored) - 5} more"
                                           if len(unscored) > 5 else "")
        notes.append(f"{len(unscored)} configuration(s) have no published score: {shown}")
    meta: dict[str, Any] = {}
    if isinstance(payload.get("metadata"), dict):
        meta["published"] = {k: str(v) for k, v in payload["metadata"].items()
                             if isinstance(v, str | int | float)}
    return Converted(kind="replication_summary", frame=frame,
                     numbers=np.array(study_where + finding_where, dtype=object), unit="entry",
                     warnings=tuple(notes), meta=meta)


def _matches_findings(columns: Sequence[str]) -> bool:
    return set(columns) >= _FINDING_COLUMNS and "finding" not in columns


def _findings_table(filename: str, frame: pd.DataFrame,
                    options: Mapping[str, Any]) -> Converted:
    out = frame.rename(columns={"config": "model", "study_id": "study"})
    idx = out["finding_idx"] if "finding_idx" in out else pd.Series(out.index, index=out.index)
    out["finding"] = finding_names(out["sub_study_id"], out["finding_id"], idx,
                                   out[["model", "study"]].astype(str))
    out = out.drop(columns=["sub_study_id", "finding_id"])
    return Converted(kind="replication_summary", frame=out,
                     numbers=np.arange(1, len(out) + 1), unit="row")


FORMATS = (
    NativeFormat(name="HumanStudy-Bench results", kind="replication_summary",
                 matches_json=_matches, from_json=_convert),
    NativeFormat(name="HumanStudy-Bench findings", kind="replication_summary",
                 matches_table=_matches_findings, from_table=_findings_table),
)
