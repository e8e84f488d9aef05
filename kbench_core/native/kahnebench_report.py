"""KahneBench fingerprint reports (``fingerprint_<model>.json``) as ``bias_summary`` runs (see
``docs/formats.md`` and ``docs/metrics/bias.md``).

What KahneBench writes per model after scoring its trials: ``model_id``, ``biases_tested``,
``magnitude_scores``, ``consistency_indices``, ``mitigation_potentials``, ``human_alignments``,
``response_consistencies``, ``calibration_scores`` (each ``{bias: {...}}``), ``summary``, and
optionally ``unknown_rates_by_bias`` and ``run_metadata``. One report, a JSON list of reports,
or a folder or zip of report files is one run, one row per model × bias:

==========================  ===========================================================
report section (field)      kbench column
==========================  ===========================================================
magnitude_scores            ``bms`` (overall_magnitude), ``sensitivity``
                            (intensity_sensitivity), ``control_mean`` (control_score),
                            ``mean_<intensity>`` (treatment_scores), ``unknown_rate``
                            (``unknown_rates_by_bias`` when present, else its own)
consistency_indices         ``bci_consistency`` (consistency_score), ``bci_mean_score``
                            (mean_bias_score), ``bci_std`` (standard_deviation),
                            ``systematic`` (is_systematic), ``domain_<name>`` (domain_scores)
mitigation_potentials       ``bmp_baseline`` (baseline_bias_score), ``best_method``
                            (best_mitigation_method), ``effectiveness``
                            (mitigation_effectiveness), ``requires_warning``
                            (requires_explicit_warning), ``debias_<method>`` (debiased_scores)
human_alignments            ``model_rate``, ``human_rate``, ``alignment`` (alignment_score),
                            ``direction`` (bias_direction, as written), ``direction_std``
                            (super-human → under, human → aligned, worse than human → over)
response_consistencies      ``rci_consistency`` (consistency_score), ``rci_mean``
                            (mean_response), ``rci_variance`` (variance), ``rci_stable``
                            (is_stable), ``rci_trials`` (trial_count)
calibration_scores          ``calibration_score``, ``cas_error`` (calibration_error),
                            ``cas_confidence`` (mean_confidence), ``cas_accuracy``
                            (actual_accuracy), ``overconfident``, ``metacognitive_gap``,
                            ``cas_insufficient`` (insufficient_confidence_data)
==========================  ===========================================================

Values are the report's own, passed on as written and validated by :mod:`kbench_core.io` like
any cell; nothing is recomputed. Where ``insufficient_confidence_data`` is true every
calibration column is left empty: the report's 0.5 placeholders are not data. The report's
``summary`` is kept per model in ``Run.meta["summary"]``, as published. When several reports
share a model id, each becomes ``model_id (file stem)``, with a warning; files in a folder or
zip that are not reports (a LICENSE, a README) are skipped and named in the warnings.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.native._base import Converted, JsonProblem, NativeError, NativeFormat, load_json
from kbench_core.schema import DIRECTIONS_STD

__all__ = ["FORMATS"]

SECTIONS = ("magnitude_scores", "consistency_indices", "mitigation_potentials",
            "human_alignments", "response_consistencies", "calibration_scores")
_FIELDS: dict[str, dict[str, str]] = {
    "magnitude_scores": {"overall_magnitude": "bms", "intensity_sensitivity": "sensitivity",
                         "control_score": "control_mean", "unknown_rate": "unknown_rate"},
    "consistency_indices": {"consistency_score": "bci_consistency",
                            "mean_bias_score": "bci_mean_score",
                            "standard_deviation": "bci_std", "is_systematic": "systematic"},
    "mitigation_potentials": {"baseline_bias_score": "bmp_baseline",
                              "best_mitigation_method": "best_method",
                              "mitigation_effectiveness": "effectiveness",
                              "requires_explicit_warning": "requires_warning"},
    "human_alignments": {"model_bias_rate": "model_rate", "human_baseline_rate": "human_rate",
                         "alignment_score": "alignment", "bias_direction": "direction"},
    "response_consistencies": {"consistency_score": "rci_consistency",
                               "mean_response": "rci_mean", "variance": "rci_variance",
                               "is_stable": "rci_stable", "trial_count": "rci_trials"},
    "calibration_scores": {"calibration_score": "calibration_score",
                           "calibration_error": "cas_error",
                           "mean_confidence": "cas_confidence",
                           "actual_accuracy": "cas_accuracy", "overconfident": "overconfident",
                           "metacognitive_gap": "metacognitive_gap",
                           "insufficient_confidence_data": "cas_insufficient"},
}
_NESTED = {("magnitude_scores", "treatment_scores"): "mean_",
           ("consistency_indices", "domain_scores"): "domain_",
           ("mitigation_potentials", "debiased_scores"): "debias_"}
CALIBRATION_COLUMNS = ("calibration_score", "cas_error", "cas_confidence", "cas_accuracy",
                       "overconfident", "metacognitive_gap")
_MAX_NAME = 100  # a domain or method name becomes part of a column name
# The report's summary: its one number (the mean BMS, so in [0, 1]) and its lists of biases.
SUMMARY_NUMBER = "overall_bias_susceptibility"
SUMMARY_LISTS = ("most_susceptible_biases", "most_resistant_biases", "human_like_biases",
                 "ai_specific_biases")


def is_report(payload: Any) -> bool:
    """Whether a parsed JSON object looks like a KahneBench fingerprint report."""
    return (isinstance(payload, dict) and "model_id" in payload
            and any(isinstance(payload.get(section), dict) for section in SECTIONS))


def _matches(payload: Any) -> bool:
    if isinstance(payload, list):
        first = next((item for item in payload if isinstance(item, dict)), None)
        return first is not None and is_report(first)
    return is_report(payload)


def _matches_files(paths: Sequence[str]) -> bool:
    # KahneBench names its reports fingerprint_<model>.json; other JSON in the folder is
    # looked at too (and skipped with a warning when it is not a report).
    return any(PurePosixPath(p).name.lower().startswith("fingerprint")
               and p.lower().endswith(".json") for p in paths)


def _name(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
        raise NativeError(f"expected a non-empty name, got {value!r}"[:200], where=where,
                          field=field, unit="report")
    text = str(value).strip()
    if len(text) > _MAX_NAME:
        raise NativeError(f"a name longer than {_MAX_NAME} characters", where=where,
                          field=field, unit="report")
    return text


def clean_summary(summary: Any, where: str | None, notes: list[str]) -> dict[str, Any] | None:
    """A report's ``summary`` checked like every other field: the susceptibility a finite
    number in [0, 1], each list a list of names (:func:`_name`); ``None`` when there is none.

    Keys kbench does not use are dropped and named in ``notes``; anything else wrong raises
    :class:`NativeError` naming the field (``summary.<key>``), so a 400-digit or ``NaN``
    susceptibility or a list of objects never reaches a table as NaN or as joined text.
    """
    if summary is None:
        return None
    if not isinstance(summary, dict):
        raise NativeError(f"expected an object, got {type(summary).__name__}", where=where,
                          field="summary", unit="report")
    out: dict[str, Any] = {}
    value = summary.get(SUMMARY_NUMBER)
    if value is not None:
        # JsonBigInt and JsonConstant (400 digits, bare NaN) are text, so refused here too.
        if not isinstance(value, int | float) or isinstance(value, bool) \
                or not math.isfinite(value) or not 0 <= value <= 1:
            raise NativeError(f"expected a number in [0, 1] (the mean BMS), got "
                              f"{str(value)[:40]!r}", where=where,
                              field=f"summary.{SUMMARY_NUMBER}", unit="report")
        out[SUMMARY_NUMBER] = float(value)
    for key in SUMMARY_LISTS:
        items = summary.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise NativeError(f"expected a list of bias names, got {type(items).__name__}",
                              where=where, field=f"summary.{key}", unit="report")
        out[key] = [_name(item, where or "", f"summary.{key}") for item in items]
    dropped = [str(k)[:40] for k in summary if k not in out and k not in SUMMARY_LISTS
               and k != SUMMARY_NUMBER]
    if dropped:
        notes.append(f"{where}: summary fields kbench does not use, dropped: "
                     + ", ".join(map(repr, dropped[:5])) + (" ..." if len(dropped) > 5 else ""))
    return out


def _biases(section: str, entries: Mapping[Any, Any], where: str) -> dict[str, Any]:
    """A section's entries keyed by checked bias names (the same check as every name)."""
    out: dict[str, Any] = {}
    for key, entry in entries.items():
        name = _name(key, where, section)
        if name in out:
            raise NativeError(f"bias {name!r} is listed twice", where=where, field=section,
                              unit="report")
        out[name] = entry
    return out


def _rows(report: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """One row per bias of one report, values as written."""
    model = _name(report.get("model_id"), where, "model_id")
    sections = {}
    for section in SECTIONS:
        value = report.get(section, {})
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise NativeError(f"expected an object of biases, got {type(value).__name__}",
                              where=where, field=section, unit="report")
        sections[section] = _biases(section, value, where)
    biases: list[str] = []
    listed = report.get("biases_tested")
    if isinstance(listed, list):
        biases.extend(_name(b, where, "biases_tested") for b in listed)
    for section in SECTIONS:
        biases.extend(b for b in sections[section] if b not in biases)
    unknown = report.get("unknown_rates_by_bias")
    unknown = _biases("unknown_rates_by_bias", unknown, where) \
        if isinstance(unknown, dict) else {}
    rows = []
    for bias in dict.fromkeys(biases):
        row: dict[str, Any] = {"model": model, "bias": bias}
        for section in SECTIONS:
            entry = sections[section].get(bias)
            if entry is None:
                continue
            if not isinstance(entry, dict):
                raise NativeError(f"expected an object for bias {bias!r}, got "
                                  f"{type(entry).__name__}", where=where, field=section,
                                  unit="report")
            for theirs, ours in _FIELDS[section].items():
                if theirs in entry:
                    row[ours] = entry[theirs]
            for (owner, nested), prefix in _NESTED.items():
                if owner != section or nested not in entry:
                    continue
                values = entry[nested]
                if not isinstance(values, dict):
                    raise NativeError(f"expected an object, got {type(values).__name__}",
                                      where=where, field=f"{section}.{bias}.{nested}",
                                      unit="report")
                for key, value in values.items():
                    row[prefix + _name(key, where, f"{section}.{bias}.{nested}")] = value
        if bias in unknown:
            row["unknown_rate"] = unknown[bias]
        if row.get("cas_insufficient") is True:
            for column in CALIBRATION_COLUMNS:
                row[column] = None
        direction = row.get("direction")
        if isinstance(direction, str):
            row["direction_std"] = DIRECTIONS_STD.get(direction.strip().lower())
        rows.append(row)
    return rows


def _frame(reports: list[tuple[str, str, Mapping[str, Any]]],
           notes: list[str]) -> tuple[pd.DataFrame, np.ndarray, dict[str, Any]]:
    """Rows of every report; (stem, where, report) each. Model ids shared by several reports
    become ``model_id (stem)``."""
    ids = Counter(str(r.get("model_id", "")).strip() for _, _, r in reports)
    rows: list[dict[str, Any]] = []
    origins: list[str] = []
    summaries: dict[str, Any] = {}
    renamed = []
    unmapped: Counter[str] = Counter()
    for stem, where, report in reports:
        part = _rows(report, where)
        model = part[0]["model"] if part else _name(report.get("model_id"), where, "model_id")
        if ids[model] > 1:
            new = f"{model} ({stem})"
            renamed.append(f"{model} → {new}")
            for row in part:
                row["model"] = new
            model = new
        for row in part:
            if isinstance(row.get("direction"), str) and row.get("direction_std") is None:
                unmapped[row["direction"]] += 1
        rows.extend(part)
        origins.extend([where] * len(part))
        summary = clean_summary(report.get("summary"), where, notes)
        if summary is not None:
            summaries[model] = summary
    if renamed:
        notes.append(f"{len(renamed)} reports share a model id, so each is told apart by its "
                     f"file: {', '.join(renamed[:6])}" + (" ..." if len(renamed) > 6 else ""))
    if unmapped:
        notes.append("bias_direction spellings kbench does not know, kept as written with no "
                     f"under/aligned/over reading: {', '.join(map(repr, unmapped))}")
    if not rows:
        raise NativeError("the reports list no bias", where=reports[0][1] if reports else None,
                          unit="report")
    frame = pd.DataFrame.from_records(rows).astype(object)
    frame = frame.where(frame.notna(), None)
    return frame, np.array(origins, dtype=object), {"summary": summaries}


def _convert_json(filename: str, payload: Any, options: Mapping[str, Any]) -> Converted:
    stem = PurePosixPath(filename).name.split(".")[0]
    if isinstance(payload, list):
        reports = []
        for i, item in enumerate(payload, start=1):
            if not is_report(item):
                raise NativeError("expected a KahneBench fingerprint report (an object with "
                                  "model_id and the metric sections)", where=i, unit="report")
            reports.append((f"{stem} #{i}", f"{i}", item))
    else:
        reports = [(stem, stem, payload)]
    notes: list[str] = []
    frame, origins, meta = _frame(reports, notes)
    return Converted(kind="bias_summary", frame=frame, numbers=origins, unit="report",
                     warnings=tuple(notes), meta=meta)


def _convert_files(filename: str, files: Mapping[str, bytes],
                   options: Mapping[str, Any]) -> Converted:
    reports = []
    skipped = []
    for path in sorted(files):
        stem = PurePosixPath(path).name.split(".")[0]
        if not path.lower().endswith(".json"):
            skipped.append(path)
            continue
        try:
            payload = load_json(files[path].decode("utf-8-sig"), raw=files[path])
        except UnicodeDecodeError:
            skipped.append(f"{path} (not UTF-8 text)")
            continue
        except JsonProblem as problem:
            if PurePosixPath(path).name.lower().startswith("fingerprint"):
                where = ".".join(map(str, problem.path)) or None
                raise NativeError(f"not a readable report: {problem.message}", where=path,
                                  field=where, unit="file") from None
            skipped.append(f"{path} (not readable JSON)")
            continue
        if not is_report(payload):
            skipped.append(f"{path} (not a fingerprint report)")
            continue
        reports.append((stem, path, payload))
    if not reports:
        raise NativeError("no KahneBench fingerprint report (fingerprint_<model>.json) among "
                          f"the files: {', '.join(sorted(files)[:5])}", where=None)
    notes: list[str] = []
    if skipped:
        notes.append(f"skipped {len(skipped)} file(s) that are not fingerprint reports: "
                     + ", ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else ""))
    frame, origins, meta = _frame(reports, notes)
    return Converted(kind="bias_summary", frame=frame, numbers=origins, unit="file",
                     warnings=tuple(notes), meta=meta)


FORMATS = (NativeFormat(name="KahneBench fingerprint reports", kind="bias_summary",
                        matches_json=_matches, from_json=_convert_json,
                        matches_files=_matches_files, from_files=_convert_files),)
